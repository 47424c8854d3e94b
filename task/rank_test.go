package task

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlerl/mlerl/grade"
)

// The summary's rank is grade's Rank of the best score: "rank" for a
// one-task run, "ranks" by task for several (tasks without a leaderboard
// left out, a task without a valid program ranked with no medal), nothing
// when no task has a leaderboard; a broken leaderboard fails the load.
func TestLeaderboardsSummaryKeys(t *testing.T) {
	lbText := "teamName,score\n"
	for i := 0; i < 20; i++ {
		lbText += "t," + []string{"0.9", "0.8", "0.7", "0.6", "0.5"}[i/4] + "\n"
	}
	mk := func(name, leaderboard string) *Task {
		dir := t.TempDir()
		if leaderboard != "" {
			if err := os.WriteFile(filepath.Join(dir, "leaderboard.csv"), []byte(leaderboard), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return &Task{Name: name, Dir: dir}
	}
	a, b, native := mk("a", lbText), mk("b", lbText), mk("native", "")
	lb, err := grade.ParseLeaderboard([]byte(lbText))
	if err != nil {
		t.Fatal(err)
	}
	asJSON := func(v any) string { j, _ := json.Marshal(v); return string(j) }

	one, err := LoadLeaderboards([]*Task{a})
	if err != nil {
		t.Fatal(err)
	}
	best := 0.85
	got := one.SummaryKeys(map[string]float64{"a": best})
	if want := lb.Rank(&best); asJSON(got) != asJSON(map[string]any{"rank": want}) || want.Medal == nil || *want.Medal != "bronze" {
		t.Errorf("one task: %s, want rank %s", asJSON(got), asJSON(want))
	}

	several, err := LoadLeaderboards([]*Task{a, b, native})
	if err != nil {
		t.Fatal(err)
	}
	got = several.SummaryKeys(map[string]float64{"a": best, "native": 1})
	want := map[string]any{"ranks": map[string]grade.Rank{"a": lb.Rank(&best), "b": lb.Rank(nil)}}
	if asJSON(got) != asJSON(want) {
		t.Errorf("several tasks: %s, want %s", asJSON(got), asJSON(want))
	}

	none, err := LoadLeaderboards([]*Task{native})
	if err != nil || none.SummaryKeys(map[string]float64{"native": 1}) != nil {
		t.Errorf("no leaderboard: %v, %v", none.SummaryKeys(nil), err)
	}
	if _, err := LoadLeaderboards([]*Task{mk("broken", "teamName\nx\n")}); err == nil {
		t.Error("a leaderboard without scores loaded")
	}
}
