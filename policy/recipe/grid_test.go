package recipe

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mlerl/mlerl/task"
)

// wideOnly is every value only the wide grid offers, by decision name.
func wideOnly() map[string][]string {
	m := map[string][]string{}
	for _, s := range grammar {
		if len(s.wide) > 0 {
			m[s.name] = s.options[s.standard:]
		}
	}
	return m
}

// TestGridStandardKeepsTheGrammar: on the standard grid no plan ever takes
// a wide-only value, and the standard values keep their option indexes (a
// net trained before the wide grid existed reads its steps the same way);
// on the wide grid a decision offers them all, after the standard ones.
func TestGridStandardKeepsTheGrammar(t *testing.T) {
	wide := wideOnly()
	if len(wide) < 15 {
		t.Fatalf("only %d decisions have wide values: %v", len(wide), wide)
	}
	for _, name := range []string{"tiny-churn", "tiny-events", "tiny-meats", "tiny-reviews", "tiny-soy"} {
		p := mustProfile(t, filepath.Join("testdata", name))
		rng := rand.New(rand.NewPCG(7, 7))
		for i := range 300 {
			pl := Random(p, rng)
			if i%2 == 1 {
				pl = RandomImprove(p, pl, rng)
			}
			for _, c := range pl.Choices {
				if slices.Contains(wide[c.Name], c.Value) {
					t.Fatalf("%s: standard-grid plan %s takes the wide-only %s=%s", name, pl.Key(), c.Name, c.Value)
				}
			}
		}
	}

	p := mustProfile(t, filepath.Join("testdata", "tiny-events"))
	ridge := map[string]string{"model.family": "ridge"}
	std := decisionOn(t, p, ridge, "ridge.alpha")
	if want := []string{"0.1", "1", "10"}; !slices.Equal(std.Options, want) || !slices.Equal(std.Index, []int{0, 1, 2}) {
		t.Fatalf("standard grid: ridge.alpha options %v at %v, want %v at [0 1 2]", std.Options, std.Index, want)
	}
	p.Grid = GridWide
	w := decisionOn(t, p, ridge, "ridge.alpha")
	if len(w.Options) != 10 || !slices.Equal(w.Options[:3], std.Options) || !slices.Equal(w.Index[:3], std.Index) {
		t.Fatalf("wide grid: ridge.alpha options %v at %v, want the standard three first, then seven more", w.Options, w.Index)
	}
	if !slices.Contains(w.Options, "0.001") || !slices.Contains(w.Options, "100") {
		t.Fatalf("wide grid: ridge.alpha options %v lack 0.001 or 100", w.Options)
	}

	// A wide plan is refused by a standard profile, naming the value.
	plan := withChoices(t, p, map[string]string{"model.family": "ridge", "ridge.alpha": "0.01"})
	if got := plan.Get("ridge.alpha"); got != "0.01" {
		t.Fatalf("wide plan has ridge.alpha=%q, want 0.01", got)
	}
	if err := plan.Validate(p); err != nil {
		t.Fatalf("wide plan refused by the wide profile: %v", err)
	}
	p.Grid = GridStandard
	if err := plan.Validate(p); err == nil || !strings.Contains(err.Error(), "ridge.alpha=0.01") {
		t.Fatalf("standard profile validated a wide plan: err %v", err)
	}
}

// decisionOn walks p's default plan, changed by choose, up to decision name.
func decisionOn(t *testing.T, p *Profile, choose map[string]string, name string) Decision {
	t.Helper()
	d, ok := walkTo(t, NewWalker(p, nil), p, choose, name)
	if !ok {
		t.Fatalf("%s: decision %s never asked with %v", p.Name, name, choose)
	}
	return d
}

// TestSetGrid: both policies take a known grid onto every task's profile
// and refuse an unknown one.
func TestSetGrid(t *testing.T) {
	pol, tk := fixturePolicy(t, "tiny-churn", 1)
	if err := pol.SetGrid("huge"); err == nil || !strings.Contains(err.Error(), "standard") {
		t.Fatalf("SetGrid(huge): %v, want an error naming the grids", err)
	}
	if err := pol.SetGrid(GridWide); err != nil {
		t.Fatal(err)
	}
	if g := pol.profiles[tk.Name].Grid; g != GridWide {
		t.Fatalf("policy profile grid %q after SetGrid(wide)", g)
	}
	u, err := NewUniform([]*task.Task{tk}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := u.SetGrid(GridWide); err != nil || u.profiles[tk.Name].Grid != GridWide {
		t.Fatalf("uniform SetGrid(wide): %v, grid %q", err, u.profiles[tk.Name].Grid)
	}
	// Uniform draws over the wide grid reach wide-only values.
	wide := wideOnly()
	rng := rand.New(rand.NewPCG(3, 3))
	hits := 0
	for range 200 {
		for _, c := range Random(u.profiles[tk.Name], rng).Choices {
			if slices.Contains(wide[c.Name], c.Value) {
				hits++
			}
		}
	}
	if hits == 0 {
		t.Fatal("200 uniform plans on the wide grid took no wide-only value")
	}
}

// TestWideGridOptionsRun renders every wide-only value into the default plan
// of a small table whose model family asks it, runs it, and grades it.
func TestWideGridOptionsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 65 Python programs")
	}
	taskFor := func(decision, family string) string {
		switch {
		case decision == "ensemble.nb_weight":
			return "tiny-reviews"
		case family == "kernel_ridge" || family == "pls":
			return "tiny-meats" // regression on a series
		case family == "ridge":
			return "tiny-events" // regression
		}
		return "tiny-churn"
	}
	profiles := map[string]*Profile{}
	ran := 0
	for _, s := range grammar {
		if len(s.wide) == 0 {
			continue
		}
		choose := map[string]string{}
		fam := ""
		for _, f := range familyOptions {
			if slices.Contains(familyHyper[f], s.name) {
				fam = f
				choose["model.family"] = f
				break
			}
		}
		if fam == "linear_svm" { // no probabilities of its own for tiny-churn's AUC
			choose["calibration"] = "sigmoid"
		}
		if s.name == "ensemble.nb_weight" {
			choose["model.family"], choose["ensemble"] = "logistic", "nb_loglinear"
		}
		name := taskFor(s.name, fam)
		p := profiles[name]
		if p == nil {
			p = mustProfile(t, filepath.Join("testdata", name))
			p.Grid = GridWide
			profiles[name] = p
		}
		for _, v := range s.wide {
			choose[s.name] = v
			plan := withChoices(t, p, choose)
			if got := plan.Get(s.name); got != v {
				t.Errorf("%s: plan %s has %s=%q, want %q", name, plan.Key(), s.name, got, v)
				continue
			}
			code, err := Render(p, plan)
			if err != nil {
				t.Fatal(err)
			}
			r := runProgram(t, p, code, time.Minute)
			ran++
			if !r.Valid {
				t.Errorf("%s %s=%s: %s\n%s", name, s.name, v, r, r.Output)
				continue
			}
			t.Logf("%s %s=%s: %s", name, s.name, v, r)
		}
	}
	total := 0
	for _, vs := range wideOnly() {
		total += len(vs)
	}
	if ran != total && !t.Failed() {
		t.Fatalf("ran %d programs, want one per wide value (%d)", ran, total)
	}
}
