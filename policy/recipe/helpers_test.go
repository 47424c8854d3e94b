package recipe

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

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

// fixtureTasks are the small tasks in testdata/.
var fixtureTasks = []string{"tiny-reviews", "tiny-churn", "tiny-digits", "tiny-meats", "tiny-soy"}

// suiteTasks are the suite's task folders present on this checkout.
func suiteTasks() []string {
	dirs, _ := filepath.Glob("../../suite/tasks/*/task.yaml")
	var out []string
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
