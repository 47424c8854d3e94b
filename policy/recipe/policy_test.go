package recipe

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/policy/choicenet"
	"github.com/mlerl/mlerl/rl"
)

// A net whose shape does not fit the grammar (as a checkpoint of another
// grammar would load) is refused with an error naming the decision, not
// turned into a plan.
func TestSampleRefusesMismatchedNet(t *testing.T) {
	p, tk := fixturePolicy(t, "tiny-churn", 1)
	if _, err := p.Sample(context.Background(), []rl.Prompt{{Kind: episode.Scratch, Task: tk}}); err != nil {
		t.Fatalf("the policy's own net: %v", err)
	}
	narrow, err := choicenet.New(choicenet.DefaultConfig(NumFeatures, len(DecisionNames()), 2))
	if err != nil {
		t.Fatal(err)
	}
	p.net = narrow
	_, err = p.Sample(context.Background(), []rl.Prompt{{Kind: episode.Scratch, Task: tk}})
	if err == nil || !strings.Contains(err.Error(), "the network cannot decide") {
		t.Fatalf("err %v, want the network's refusal", err)
	}
}

// A fresh policy leans to Default's choices (the hint prior) without being
// stuck on them.
func TestFreshPolicyLeansToDefault(t *testing.T) {
	p, tk := fixturePolicy(t, "tiny-churn", 3)
	def := Default(p.profiles[tk.Name])
	acts := sampleScratch(t, p, tk, 300)
	same := map[string]int{}
	whole := 0
	for _, a := range acts {
		m := actionMeta(t, a)
		for _, d := range []string{"read.loader", "model.family"} {
			if m.Plan.Get(d) == def.Get(d) {
				same[d]++
			}
		}
		if m.Plan.Key() == def.Key() {
			whole++
		}
		for _, s := range m.Steps {
			if s.Hint == 0 {
				t.Fatalf("scratch step without a hint: %+v", s)
			}
		}
	}
	t.Logf("of %d plans: default loader %d, default model %d, the whole default plan %d", len(acts), same["read.loader"], same["model.family"], whole)
	// Uniform sampling would give about 1/4 for the loader and 1/12 for the
	// family; the prior makes Default's value the most likely one.
	for d, least := range map[string]int{"read.loader": len(acts) / 2, "model.family": len(acts) / 4} {
		if n := same[d]; n < least || n == len(acts) {
			t.Errorf("%s: %d of %d plans take Default's value; want at least %d, not all", d, n, len(acts), least)
		}
	}
}

// An improve walk is a local edit of its parent: decisions of the part it
// re-decides lean to the parent's own values (the hint points there, not at
// Default), every other decision is copied or leans to Default, and the
// parent itself is never drawn again.
func TestImproveIsLocalEdit(t *testing.T) {
	p, tk := fixturePolicy(t, "tiny-churn", 5)
	prof := p.profiles[tk.Name]
	// A parent that differs from Default in every part: xgboost 1500 on
	// ordinal codes, no validation, averaged with a forest.
	parentPlan := withChoices(t, prof, map[string]string{"features.categorical": "ordinal", "model.family": "xgboost",
		"xgb.n_estimators": "1500", "xgb.max_depth": "3", "validation": "none", "ensemble": "average", "ensemble.second": "random_forest"})
	acts, err := p.Sample(context.Background(), improvePrompts(t, tk, parentPlan, 300))
	if err != nil {
		t.Fatal(err)
	}
	def := p.prefs[tk.Name]
	kept, changed := 0, 0
	for _, a := range acts {
		m := actionMeta(t, a)
		if a.Kind != episode.Improve {
			t.Fatalf("kind %s, want improve", a.Kind)
		}
		if m.Plan.Key() == parentPlan.Key() {
			t.Fatalf("an improve action reproduced its parent: %s", m.Plan.Key())
		}
		// Walk the steps again to see each decision's options and hint.
		w := NewWalker(prof, parentPlan)
		for i, s := range m.Steps {
			d, ok := w.Next()
			if !ok || d.ID != s.Decision {
				t.Fatalf("step %d: walk gives %+v, the action took decision %d", i, d, s.Decision)
			}
			switch {
			case i == 0:
				if s.Hint != 0 {
					t.Fatalf("the part to improve has a hint: %+v", s)
				}
			case grammar[d.ID].part == w.Part() && parentPlan.Get(d.Name) != "":
				if s.Hint == 0 || d.Options[s.Hint-1] != parentPlan.Get(d.Name) {
					t.Fatalf("%s: hint %d of %v, want the parent's %s", d.Name, s.Hint, d.Options, parentPlan.Get(d.Name))
				}
				if d.Options[s.Chosen] == parentPlan.Get(d.Name) {
					kept++
				} else {
					changed++
				}
			default: // a decision the parent never made: Default's prior
				if s.Hint == 0 || s.Hint-1 != def.option(d) {
					t.Fatalf("%s: hint %d of %v, want Default's option %d", d.Name, s.Hint, d.Options, def.option(d))
				}
			}
			if err := w.Choose(s.Chosen); err != nil {
				t.Fatal(err)
			}
		}
		if d, more := w.Next(); more {
			t.Fatalf("the action's steps end before decision %s", d.Name)
		}
		if got := w.Plan().Key(); got != m.Plan.Key() {
			t.Fatalf("replayed walk %s, action's plan %s", got, m.Plan.Key())
		}
	}
	t.Logf("re-decided decisions: %d kept the parent's value, %d changed", kept, changed)
	if kept <= changed || changed < len(acts)/2 {
		t.Errorf("re-decided decisions: %d kept, %d changed; want mostly kept, and a change in most actions", kept, changed)
	}
}

// The policy samples without replacement: however concentrated it is, it
// does not write a plan it already wrote for the task while fresh ones are
// within reach of its redraws.
func TestSampleNeverRepeatsAPlan(t *testing.T) {
	p, tk := fixturePolicy(t, "tiny-churn", 3)
	p.temperature = 0.3 // concentrated: without the redraws most samples are Default
	seen := map[string]bool{}
	for range 6 {
		acts, err := p.Sample(context.Background(), []rl.Prompt{{Kind: episode.Scratch, Task: tk}, {Kind: episode.Scratch, Task: tk}})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range acts {
			if seen[a.Key] {
				t.Fatalf("plan %s written twice", a.Key)
			}
			seen[a.Key] = true
		}
	}
}

// Every action names its model family as its line (rl.Config.Lines). Credit
// per decision (rl.Config.DecisionCredit): every hyperparameter step
// of an action is grouped by the plan's model family, every other step is
// not, and an update takes the steps' own advantages when the learner gives
// them.
func TestCreditGroupsNameTheFamily(t *testing.T) {
	p, tk := fixturePolicy(t, "tiny-meats", 2)
	acts := sampleScratch(t, p, tk, 40)
	grouped := 0
	for _, a := range acts {
		m := actionMeta(t, a)
		want, hyper := make([]string, len(m.Steps)), false
		for i, s := range m.Steps {
			if grammar[s.Decision].part == PartHyper {
				want[i], hyper = "model.family="+m.Plan.Get("model.family"), true
			}
		}
		if fam := m.Plan.Get("model.family"); a.Line != fam || fam == "" {
			t.Errorf("%s: line %q, want the model family %q (rl.Config.Lines)", m.Plan.Key(), a.Line, fam)
		}
		switch {
		case !hyper && a.CreditGroups != nil:
			t.Errorf("%s: credit groups %v without a hyperparameter step", m.Plan.Key(), a.CreditGroups)
		case hyper && !slices.Equal(a.CreditGroups, want):
			t.Errorf("%s: credit groups %q, want %q", m.Plan.Key(), a.CreditGroups, want)
		case hyper:
			grouped++
		}
	}
	if grouped < 10 {
		t.Fatalf("only %d of 40 plans have hyperparameters", grouped)
	}

	// The same batch with and without step advantages of the opposite sign
	// on the hyperparameters moves two identical policies apart.
	samples := make([]rl.Sample, 0, 8)
	for _, a := range acts[:8] {
		s := rl.Sample{Prompt: rl.Prompt{Kind: episode.Scratch, Task: tk}, Action: a, Advantage: 1, Weight: 1}
		if a.CreditGroups != nil {
			s.TokenAdvantages = make([]float64, len(a.CreditGroups))
			for i, g := range a.CreditGroups {
				s.TokenAdvantages[i] = map[bool]float64{true: 1, false: -1}[g == ""]
			}
		}
		samples = append(samples, s)
	}
	broadcast, _ := fixturePolicy(t, "tiny-meats", 2)
	perStep, _ := fixturePolicy(t, "tiny-meats", 2)
	plain := append([]rl.Sample(nil), samples...)
	for i := range plain {
		plain[i].TokenAdvantages = nil
	}
	if _, err := broadcast.Update(context.Background(), plain); err != nil {
		t.Fatal(err)
	}
	if _, err := perStep.Update(context.Background(), samples); err != nil {
		t.Fatal(err)
	}
	// Step advantages that are not one per step are refused, not dropped:
	// they belong to another action.
	short := append([]rl.Sample(nil), samples...)
	for i := range short {
		if short[i].TokenAdvantages != nil {
			short[i].TokenAdvantages = short[i].TokenAdvantages[1:]
			break
		}
	}
	refused, _ := fixturePolicy(t, "tiny-meats", 2)
	if _, err := refused.Update(context.Background(), short); !errors.Is(err, choicenet.ErrBadInput) {
		t.Errorf("update with one step advantage too few: err %v, want choicenet.ErrBadInput", err)
	}
	var m meta
	for _, s := range samples {
		if s.TokenAdvantages != nil {
			m = actionMeta(t, s.Action)
			break
		}
	}
	ctx := choicenet.Context{Features: p.profiles[tk.Name].Features()}
	lb := broadcast.net.LogProbs(ctx, m.Steps, Temperature)
	ls := perStep.net.LogProbs(ctx, m.Steps, Temperature)
	for i, s := range m.Steps {
		if grammar[s.Decision].part == PartHyper && !(ls[i] < lb[i]) {
			t.Errorf("hyperparameter %s: log-prob %.4f with a negative step advantage, %.4f with the program's positive one; want lower",
				DecisionNames()[s.Decision], ls[i], lb[i])
		}
	}
}
