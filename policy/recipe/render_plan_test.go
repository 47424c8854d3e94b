package recipe

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlerl/mlerl/rl/replay"
)

// TestRenderPlanLine: every rendered program starts with "# plan: KEY", and a
// replay table finds it by that key (replay.KeyOf), for the default plan, random
// plans and improvements of them on every fixture.
func TestRenderPlanLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, td := range allTaskDirs() {
		p := mustProfile(t, td)
		for _, pl := range samplePlans(p, rng, 30) {
			code, err := Render(p, pl)
			if err != nil {
				t.Fatalf("%s: %v", p.Name, err)
			}
			first, rest, _ := strings.Cut(code, "\n")
			if first != "# plan: "+pl.Key() {
				t.Fatalf("%s: first line %q, want the plan line of %q", p.Name, first, pl.Key())
			}
			if !strings.HasPrefix(rest, `"""Solution for task `) {
				t.Fatalf("%s: the docstring does not follow the plan line:\n%s", p.Name, code[:300])
			}
			if got := replay.KeyOf(code); got != pl.Key() {
				t.Fatalf("%s: replay.KeyOf = %q, want %q", p.Name, got, pl.Key())
			}
		}
	}
}

// TestRenderPlanLineMeasuredKeys: the keys of testdata/measured.jsonl, rendered
// on their suite task, come back from replay.KeyOf unchanged, so a replay
// table recorded with those keys serves the recipe policy's programs.
func TestRenderPlanLineMeasuredKeys(t *testing.T) {
	profiles := map[string]*Profile{}
	for _, d := range suiteTasks() {
		profiles[filepath.Base(d)] = nil
	}
	if len(profiles) == 0 {
		t.Skip("no suite/tasks in this checkout")
	}
	f, err := os.Open("testdata/measured.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var m struct{ Task, Key string }
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		p, ok := profiles[m.Task]
		if !ok {
			continue
		}
		if p == nil {
			p = mustProfile(t, filepath.Join("../../suite/tasks", m.Task))
			profiles[m.Task] = p
		}
		pl, err := ParseKey(m.Key)
		if err != nil {
			t.Fatal(err)
		}
		if retired(p, pl) != "" {
			continue
		}
		code, err := Render(p, pl)
		if err != nil {
			t.Fatalf("%s %s: %v", m.Task, m.Key, err)
		}
		if got := replay.KeyOf(code); got != m.Key {
			t.Errorf("%s: replay.KeyOf = %q, want %q", m.Task, got, m.Key)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no measured key matched a suite task")
	}
	t.Logf("%d measured keys round-trip", n)
}
