package recipe

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/task"
)

// python is Debian's interpreter, the one with numpy, pandas, scikit-learn and xgboost.
const python = "/usr/bin/python3"

func mustProfile(t testing.TB, dir string) *Profile {
	t.Helper()
	tk, err := task.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProfile(tk)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// renderHolding renders plan for p after checking that it holds every value
// of choose (a walk that could not take one would test another program).
func renderHolding(t testing.TB, p *Profile, plan *Plan, choose map[string]string) string {
	t.Helper()
	for k, v := range choose {
		if got := plan.Get(k); got != v {
			t.Fatalf("%s: plan %s has %s=%q, want %q", p.Task.Name, plan.Key(), k, got, v)
		}
	}
	code, err := Render(p, plan)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// suiteProfile profiles the suite task name, skipping the test when this
// checkout has no such task.
func suiteProfile(t testing.TB, name string) *Profile {
	t.Helper()
	dir := filepath.Join("../../suite/tasks", name)
	if _, err := os.Stat(filepath.Join(dir, "task.yaml")); err != nil {
		t.Skipf("suite task %s not in this checkout", name)
	}
	return mustProfile(t, dir)
}

// fixturePolicy is a fresh policy for the fixture task name.
func fixturePolicy(t testing.TB, name string, seed uint64) (*Policy, *task.Task) {
	t.Helper()
	tk, err := task.Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicy([]*task.Task{tk}, seed)
	if err != nil {
		t.Fatal(err)
	}
	return p, tk
}

// fixtureTasks are the small tasks in testdata/.
var fixtureTasks = []string{"tiny-reviews", "tiny-churn", "tiny-digits", "tiny-meats", "tiny-soy", "tiny-events", "tiny-notes"}

// suiteTasks are the suite's task folders present on this checkout.
func suiteTasks() []string {
	dirs, _ := filepath.Glob("../../suite/tasks/*/task.yaml")
	var out []string
	for _, d := range dirs {
		out = append(out, filepath.Dir(d))
	}
	return out
}

// fitTasks are the tasks the cost model may be fitted on and measured for:
// the suite's, then bench/tuning's. Never bench/unseen's.
func fitTasks() []string {
	dirs, _ := filepath.Glob("../../bench/tuning/*/task.yaml")
	out := suiteTasks()
	for _, d := range dirs {
		out = append(out, filepath.Dir(d))
	}
	return out
}

// samplePlans is Default's plan, then n random plans each followed by a
// random improvement of it.
func samplePlans(p *Profile, rng *rand.Rand, n int) []*Plan {
	plans := []*Plan{Default(p)}
	for range n {
		pl := Random(p, rng)
		plans = append(plans, pl, RandomImprove(p, pl, rng))
	}
	return plans
}

// AllOptions is every value decision id can take on any task, in a stable order.
func AllOptions(id int) []string {
	if id < 0 || id >= len(grammar) {
		return nil
	}
	return slices.Clone(grammar[id].options)
}

// ParseKey is the inverse of Key: it rebuilds a plan from its key (validate it
// against a profile before use).
func ParseKey(key string) (*Plan, error) {
	pl := &Plan{}
	if key == "" {
		return pl, nil
	}
	for _, part := range strings.Split(key, ";") {
		name, value, ok := strings.Cut(part, "=")
		if !ok || name == "" || value == "" {
			return nil, fmt.Errorf("recipe: plan key part %q is not name=value", part)
		}
		pl.Choices = append(pl.Choices, Choice{Name: name, Value: value})
	}
	return pl, nil
}

// sampleScratch is n scratch actions p samples for tk.
func sampleScratch(t testing.TB, p *Policy, tk *task.Task, n int) []rl.Action {
	t.Helper()
	prompts := make([]rl.Prompt, n)
	for i := range prompts {
		prompts[i] = rl.Prompt{Kind: episode.Scratch, Task: tk}
	}
	acts, err := p.Sample(context.Background(), prompts)
	if err != nil {
		t.Fatal(err)
	}
	return acts
}

// actionMeta is the recipe record an action carries.
func actionMeta(t testing.TB, a rl.Action) meta {
	t.Helper()
	var m meta
	if err := json.Unmarshal(a.Meta, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// improvePrompts are n improve prompts for task tk whose parent is a valid
// program of plan parentPlan (reward 0.8).
func improvePrompts(t testing.TB, tk *task.Task, parentPlan *Plan, n int) []rl.Prompt {
	t.Helper()
	raw, err := json.Marshal(meta{Plan: parentPlan})
	if err != nil {
		t.Fatal(err)
	}
	parent := &rl.Solution{Action: rl.Action{Meta: raw}, Result: episode.Result{Task: tk.Name, Valid: true, Reward: 0.8}}
	prompts := make([]rl.Prompt, n)
	for i := range prompts {
		prompts[i] = rl.Prompt{Kind: episode.Improve, Task: tk, Parent: parent}
	}
	return prompts
}
