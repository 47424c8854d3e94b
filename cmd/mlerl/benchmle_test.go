package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlerl/mlerl/grade"
	"github.com/mlerl/mlerl/report"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/sandbox"
)

// learnableSpooky replaces the fake checkout's spooky data with enough
// generated rows (each author has words of its own) for a model to learn.
func learnableSpooky(t *testing.T, data string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	authors := []string{"EAP", "HPL", "MWS"}
	words := map[string][]string{"EAP": {"raven", "heart", "tell", "pit"}, "HPL": {"cthulhu", "elder", "dread", "ocean"},
		"MWS": {"monster", "creator", "frost", "lake"}}
	common := []string{"the", "night", "was", "dark", "and", "cold", "I", "saw"}
	sentence := func(a string) string {
		var w []string
		for i := 0; i < 8; i++ {
			if rng.IntN(3) == 0 {
				w = append(w, words[a][rng.IntN(4)])
			} else {
				w = append(w, common[rng.IntN(len(common))])
			}
		}
		return strings.Join(w, " ")
	}
	train, test, answers, sample := "id,text,author\n", "id,text\n", "id,EAP,HPL,MWS\n", "id,EAP,HPL,MWS\n"
	for i := 0; i < 150; i++ {
		a := authors[i%3]
		train += fmt.Sprintf("tr%d,%s,%s\n", i, sentence(a), a)
	}
	for i := 0; i < 45; i++ {
		a := authors[i%3]
		test += fmt.Sprintf("te%d,%s\n", i, sentence(a))
		onehot := map[string]string{"EAP": "0", "HPL": "0", "MWS": "0"}
		onehot[a] = "1"
		answers += fmt.Sprintf("te%d,%s,%s,%s\n", i, onehot["EAP"], onehot["HPL"], onehot["MWS"])
		sample += fmt.Sprintf("te%d,0.4,0.3,0.3\n", i)
	}
	dir := filepath.Join(data, "spooky-author-identification", "prepared")
	for name, text := range map[string]string{"public/train.csv": train, "public/test.csv": test,
		"public/sample_submission.csv": sample, "private/test.csv": answers} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// bench mlebench end to end on a generated competition: imported into
// DIR/tasks, trained through train's own code path into DIR/runs, the table
// (JSON and text) built from summary.json's rank, which is grade's Rank of
// the best score; a second invocation reuses the finished run.
func TestBenchMLEBench(t *testing.T) {
	if testing.Short() {
		t.Skip("trains for 20 s on real sandboxed programs")
	}
	if _, err := sandbox.New(context.Background(), sandbox.Config{}); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	repo, data := fakeMLEBench(t)
	learnableSpooky(t, data)
	out := filepath.Join(t.TempDir(), "bench")
	const id = "spooky-author-identification"
	args := []string{"bench", "mlebench", "--repo", repo, "--data", data, "--out", out, "--budget", "20s", "--workers", "1", "--json", id}
	code, stdout, stderr := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var table report.MLEBenchTable
	if err := json.Unmarshal([]byte(stdout), &table); err != nil || len(table.Competitions) != 1 {
		t.Fatalf("%v: %s", err, stdout)
	}
	row := table.Competitions[0]
	if row.Competition != id || row.Run != filepath.Join(out, "runs", id) || row.Episodes == 0 || row.BestScore == nil || row.ValidRate <= 0 {
		t.Fatalf("row: %+v\n%s", row, stderr)
	}
	lb, err := grade.LoadLeaderboardFile(filepath.Join(out, "tasks", id, "leaderboard.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := lb.Rank(row.BestScore)
	if got, _ := json.Marshal(row.Rank); string(got) != string(mustJSON(want)) ||
		(row.Medal == nil) != (want.Medal == nil) || (row.Medal != nil && *row.Medal != *want.Medal) || row.AboveMedian != want.AboveMedian {
		t.Errorf("rank %s, medal %v, above median %v; grade's Rank of %v: %s", got, row.Medal, row.AboveMedian, *row.BestScore, mustJSON(want))
	}
	medal := 0.0
	if want.Medal != nil {
		medal = 100
	}
	if table.AnyMedalPct != medal || table.ValidPct != 100 || (table.AboveMedianPct == 100) != want.AboveMedian {
		t.Errorf("totals: %+v", table)
	}
	summary := report.ReadObject(filepath.Join(row.Run, "summary.json"))
	if s, _ := summary["best_score"].(float64); s != *row.BestScore || summary["rank"] == nil {
		t.Errorf("summary.json: %v", summary)
	}
	if page, _ := os.ReadFile(filepath.Join(row.Run, "report.html")); !strings.Contains(string(page), "<td>leaderboard</td>") {
		t.Error("report.html does not show the rank")
	}
	// It trains as train does by default, and run.json says so.
	var rc runConfig
	d := rl.DefaultConfig()
	if b, err := os.ReadFile(filepath.Join(row.Run, runConfigFile)); err != nil || json.Unmarshal(b, &rc) != nil ||
		rc.Utility != d.Utility || rc.ImproveCredit != d.ImproveCredit || rc.TimeCharge != d.TimeCharge || rc.Buffer != d.BufferSize {
		t.Errorf("run.json: utility %q, improve credit %q, time charge %v, buffer %d (%v); want train's defaults %q, %q, %v, %d",
			rc.Utility, rc.ImproveCredit, rc.TimeCharge, rc.Buffer, err, d.Utility, d.ImproveCredit, d.TimeCharge, d.BufferSize)
	}
	if rc.Binary != revision() || rc.Binary == "" {
		t.Errorf("run.json: binary %q, want this binary's %q", rc.Binary, revision())
	}

	// Again, as text: the finished run is reused, not retrained.
	code2, text, stderr2 := runCmd(t, append(args[:len(args)-2:len(args)-2], id)...)
	t.Logf("JSON:\n%s\ntable:\n%s", stdout, text)
	if code2 != 0 || !strings.Contains(stderr2, "its result is reused") || !strings.Contains(text, id) ||
		!strings.Contains(text, fmt.Sprintf("%.6g", *row.BestScore)) || !strings.Contains(text, "any medal") {
		t.Errorf("second run: exit %d\n%s\n%s", code2, text, stderr2)
	}
}

// Bad input is one line and exit 2, before anything is imported or run.
func TestBenchMLEBenchUsage(t *testing.T) {
	repo, data := fakeMLEBench(t)
	out := filepath.Join(t.TempDir(), "bench")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--repo", repo, "--data", data}, "usage"},
		{[]string{"--repo", repo, "spooky-author-identification"}, "usage"},
		{[]string{"--repo", repo, "--data", data, "--budget", "0s", "spooky-author-identification"}, "must be positive"},
		{[]string{"--repo", repo, "--data", data, "--buffer", "0", "spooky-author-identification"}, "--buffer must be at least 1"},
		{[]string{"--repo", repo, "--data", data, "--time-charge", "-1", "spooky-author-identification"}, "--time-charge -1"},
		{[]string{"--repo", repo, "--data", data, "--out", out, "spaceship-titanic"}, "unknown grader"},
	} {
		code, _, stderr := runCmd(t, append([]string{"bench", "mlebench"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, code, stderr, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "runs")); err == nil {
		t.Error("a failed import left a run folder")
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
