package recipe

import (
	"context"
	"math"
	"testing"

	"github.com/mlerl/mlerl/rl"
)

// The pattern seen on poll-adjustment: edits of the features pay, a switch
// of model family does not (at first). Credited so for 20 updates, a policy
// without a floor all but stops switching families; with an edit floor of
// 0.5 a share of its edits still do, and the steps it records (which part,
// which family) carry the floor, so an update re-scores them as they were
// drawn.
func TestEditFloorKeepsFamilySwitches(t *testing.T) {
	switchShare := func(floor float64) float64 {
		p, tk := fixturePolicy(t, "tiny-churn", 9)
		if err := p.SetEditFloor(floor); err != nil {
			t.Fatal(err)
		}
		prof := p.profiles[tk.Name]
		parentPlan := withChoices(t, prof, map[string]string{"model.family": "xgboost"})
		prompts := improvePrompts(t, tk, parentPlan, 16)
		sample := func() ([]rl.Action, int) {
			p.tried[tk.Name] = map[string]bool{} // every batch may write any plan again
			acts, err := p.Sample(context.Background(), prompts)
			if err != nil {
				t.Fatal(err)
			}
			switches := 0
			for _, a := range acts {
				m := actionMeta(t, a)
				if m.Steps[0].Floor != floor {
					t.Fatalf("the part step records floor %v, want %v", m.Steps[0].Floor, floor)
				}
				for _, s := range m.Steps[1:] {
					want := 0.0
					if DecisionNames()[s.Decision] == "model.family" { // asked only when the part is the model
						want = floor
					}
					if s.Floor != want {
						t.Fatalf("decision %s has floor %v, want %v: only the part and the family are floored", DecisionNames()[s.Decision], s.Floor, want)
					}
				}
				if m.Plan.Get("model.family") != "xgboost" {
					switches++
				}
			}
			return acts, switches
		}
		for range 20 {
			acts, _ := sample()
			samples := make([]rl.Sample, len(acts))
			for i, a := range acts {
				m := actionMeta(t, a)
				adv := 0.0
				switch {
				case m.Plan.Get("model.family") != "xgboost":
					adv = -1
				case m.Plan.Get("features.categorical") != parentPlan.Get("features.categorical") ||
					m.Plan.Get("features.scaling") != parentPlan.Get("features.scaling"):
					adv = 1
				}
				samples[i] = rl.Sample{Prompt: prompts[i], Action: a, Advantage: adv, Weight: 1}
			}
			if _, err := p.Update(context.Background(), samples); err != nil {
				t.Fatal(err)
			}
		}
		total := 0
		for range 10 {
			_, s := sample()
			total += s
		}
		return float64(total) / 160
	}
	free, floored := switchShare(0), switchShare(0.5)
	t.Logf("share of edits that switch model family after 20 updates: no floor %.3f, edit floor 0.5 %.3f", free, floored)
	if free > 0.05 {
		t.Errorf("without a floor %.3f of the edits still switch family: the test no longer shows the collapse", free)
	}
	if floored < 0.05 || floored < 3*free {
		t.Errorf("with edit floor 0.5 only %.3f of the edits switch family (no floor: %.3f)", floored, free)
	}
}

func TestSetEditFloorRejectsNonShares(t *testing.T) {
	p, _ := fixturePolicy(t, "tiny-churn", 1)
	for _, f := range []float64{-0.1, 1.01, math.NaN(), math.Inf(1)} {
		if err := p.SetEditFloor(f); err == nil {
			t.Errorf("SetEditFloor(%v) accepted", f)
		}
	}
	for _, f := range []float64{0, 0.5, 1} {
		if err := p.SetEditFloor(f); err != nil {
			t.Errorf("SetEditFloor(%v): %v", f, err)
		}
	}
}
