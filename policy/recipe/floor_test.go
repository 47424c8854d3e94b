package recipe

import (
	"context"
	"math"
	"testing"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/policy/choicenet"
	"github.com/mlerl/mlerl/rl"
)

// The pattern seen on poll-adjustment: edits of the features pay, a switch
// of model family does not (at first). Credited so for 20 updates, a policy
// without a floor all but stops switching families; with an edit floor of
// 0.5 a share of its edits still do, and the steps it records (which part,
// which family) carry the floor, so an update re-scores them as they were
// drawn.
func TestEditFloorKeepsFamilySwitches(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the net through many updates: about 50 s under -race -short, a third of make test; make test-long runs it")
	}
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
			learnToKeepFamily(t, p, prompts, acts, parentPlan)
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

// learnToKeepFamily takes one update that credits acts as poll-adjustment's
// early edits were: an edit of the features pays, a family switch does not.
func learnToKeepFamily(t *testing.T, p *Policy, prompts []rl.Prompt, acts []rl.Action, parentPlan *Plan) {
	t.Helper()
	samples := make([]rl.Sample, len(acts))
	for i, a := range acts {
		m := actionMeta(t, a)
		adv := 0.0
		switch {
		case m.Plan.Get("model.family") != parentPlan.Get("model.family"):
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

// A stalled task's improve prompts carry rl.Prompt.Widen: the walk takes that
// share of the prior at every decision. After the updates that taught the
// policy to keep the family, an edit with Widen 1 switches family as often
// as the untrained prior's edits do, one with Widen 0 hardly ever, and one
// with Widen 0.5 in between; every step records the share it was drawn
// with, so an update re-scores it as drawn. A scratch prompt is not
// widened, and a Widen that is not a share is an error.
func TestWidenReturnsEditsToThePrior(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the net through many updates: about 50 s under -race -short, a third of make test; make test-long runs it")
	}
	p, tk := fixturePolicy(t, "tiny-churn", 9)
	prof := p.profiles[tk.Name]
	parentPlan := withChoices(t, prof, map[string]string{"model.family": "xgboost"})
	prompts := improvePrompts(t, tk, parentPlan, 16)
	switches := func(widen float64, rounds int) (float64, []rl.Action) {
		ps := make([]rl.Prompt, len(prompts))
		for i, pr := range prompts {
			pr.Widen = widen
			ps[i] = pr
		}
		n, total := 0, 0
		var last []rl.Action
		for range rounds {
			p.tried[tk.Name] = map[string]bool{} // every batch may write any plan again
			acts, err := p.Sample(context.Background(), ps)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range acts {
				m := actionMeta(t, a)
				for _, s := range m.Steps {
					if s.Floor != widen {
						t.Fatalf("widen %v: decision %s has floor %v: every step of the walk takes the share", widen, DecisionNames()[s.Decision], s.Floor)
					}
				}
				if m.Plan.Get("model.family") != "xgboost" {
					n++
				}
				total++
			}
			last = acts
		}
		return float64(n) / float64(total), last
	}
	prior, _ := switches(0, 60)
	for range 20 {
		_, acts := switches(0, 1)
		learnToKeepFamily(t, p, prompts, acts, parentPlan)
	}
	learnt, _ := switches(0, 20)
	half, _ := switches(0.5, 20)
	widened, _ := switches(1, 60)
	t.Logf("share of edits that switch family: untrained %.3f; after 20 updates: widen 0 %.3f, 0.5 %.3f, 1 %.3f", prior, learnt, half, widened)
	if learnt > 0.05 || prior < 0.1 {
		t.Fatalf("the updates did not teach the policy to keep the family (untrained %.3f, learnt %.3f): the test shows nothing", prior, learnt)
	}
	// 960 edits each: 4 standard deviations of the difference of two shares
	// near 0.25 is 0.08.
	if math.Abs(widened-prior) > 0.08 {
		t.Errorf("widen 1 switches family in %.3f of the edits, the untrained prior in %.3f", widened, prior)
	}
	if half <= learnt || half >= widened {
		t.Errorf("widen 0.5 switches in %.3f, want between widen 0 (%.3f) and 1 (%.3f)", half, learnt, widened)
	}

	scratch := rl.Prompt{Kind: episode.Scratch, Task: tk, Widen: 1}
	acts, err := p.Sample(context.Background(), []rl.Prompt{scratch})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range actionMeta(t, acts[0]).Steps {
		if s.Floor != 0 {
			t.Fatalf("a scratch walk took floor %v at %s: only edits widen", s.Floor, DecisionNames()[s.Decision])
		}
	}
	for _, w := range []float64{-0.1, 1.5, math.NaN()} {
		bad := prompts[0]
		bad.Widen = w
		if _, err := p.Sample(context.Background(), []rl.Prompt{bad}); err == nil {
			t.Errorf("widen %v accepted", w)
		}
	}
}

// Both shares of the prior refuse what is not in [0, 1].
func TestShareSettersRejectNonShares(t *testing.T) {
	p, _ := fixturePolicy(t, "tiny-churn", 1)
	for name, set := range map[string]func(float64) error{"SetEditFloor": p.SetEditFloor, "SetScratchPrior": p.SetScratchPrior} {
		for _, f := range []float64{-0.1, 1.01, math.NaN(), math.Inf(1)} {
			if err := set(f); err == nil {
				t.Errorf("%s(%v) accepted", name, f)
			}
		}
		for _, f := range []float64{0, 0.5, 1} {
			if err := set(f); err != nil {
				t.Errorf("%s(%v): %v", name, f, err)
			}
		}
	}
}

// A policy whose edits have collapsed onto a few plans runs out of new ones:
// every one of a walk's 64 redraws repeats a plan already written, and the
// episode repeats it (free, and worthless). With SetPriorOnRepeat the walk
// is drawn again at half and then all of the prior, so the same stream of
// edits repeats far less; each such walk records the floor it was drawn
// with at every step, so an update re-scores it as drawn, and a walk that
// found a new plan unfloored records none.
func TestPriorOnRepeatEndsRepeats(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the net through many updates: about 50 s under -race -short, a third of make test; make test-long runs it")
	}
	p, tk := fixturePolicy(t, "tiny-churn", 9)
	prof := p.profiles[tk.Name]
	parentPlan := withChoices(t, prof, map[string]string{"model.family": "xgboost"})
	prompts := improvePrompts(t, tk, parentPlan, 16)
	for range 20 {
		p.tried[tk.Name] = map[string]bool{}
		acts, err := p.Sample(context.Background(), prompts)
		if err != nil {
			t.Fatal(err)
		}
		learnToKeepFamily(t, p, prompts, acts, parentPlan)
	}
	stream := func(on bool) (repeats int, floors map[float64]int) {
		p.SetPriorOnRepeat(on)
		p.tried[tk.Name] = map[string]bool{}
		written := map[string]bool{parentPlan.Key(): true}
		floors = map[float64]int{}
		for range 15 { // 240 edits of one parent
			acts, err := p.Sample(context.Background(), prompts)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range acts {
				m := actionMeta(t, a)
				if written[m.Plan.Key()] {
					repeats++
				}
				written[m.Plan.Key()] = true
				f := m.Steps[0].Floor
				for _, s := range m.Steps {
					if s.Floor != f {
						t.Fatalf("prior on repeat %v: decision %s has floor %v, the walk's first %v: a walk is floored whole", on, DecisionNames()[s.Decision], s.Floor, f)
					}
				}
				floors[f]++
			}
		}
		return repeats, floors
	}
	offRepeats, offFloors := stream(false)
	onRepeats, onFloors := stream(true)
	t.Logf("240 edits of one parent after 20 updates: repeats %d without, %d with prior on repeat (floors drawn at: %v)", offRepeats, onRepeats, onFloors)
	if len(offFloors) != 1 || offFloors[0] != 240 {
		t.Errorf("without the setting walks were floored: %v", offFloors)
	}
	if offRepeats < 10 {
		t.Fatalf("without the setting only %d of 240 edits repeat: the policy did not collapse, the test shows nothing", offRepeats)
	}
	if onRepeats > offRepeats/4 {
		t.Errorf("with prior on repeat %d of 240 edits repeat, without %d", onRepeats, offRepeats)
	}
	if onFloors[0.5]+onFloors[1] == 0 || onFloors[0]+onFloors[0.5]+onFloors[1] != 240 {
		t.Errorf("with prior on repeat the walks' floors were %v: want some at 0.5 or 1 and none elsewhere", onFloors)
	}
}

// An improve walk that repeats at every floor has spent its parent's edits.
// A greedy policy spends them at once: every edit of the parent is the same
// plan. Without SetPriorOnRepeat the episode repeats it; with it, the
// prompt is answered from scratch, recorded as such (Kind Scratch, no
// parent in the record, spent_parent set) so the learner runs it as a
// scratch episode and an update re-scores it without the parent.
func TestPriorOnRepeatSpentParentDrawsFromScratch(t *testing.T) {
	for _, on := range []bool{false, true} {
		p, tk := fixturePolicy(t, "tiny-churn", 3)
		p.temperature = 0 // greedy: one edit per parent
		p.SetPriorOnRepeat(on)
		prof := p.profiles[tk.Name]
		parentPlan := withChoices(t, prof, map[string]string{"model.family": "random_forest"})
		if parentPlan.Key() == Default(prof).Key() {
			t.Fatal("the parent is Default's plan: a scratch walk would repeat it, the test shows nothing")
		}
		p.tried[tk.Name][parentPlan.Key()] = true
		acts, err := p.Sample(context.Background(), improvePrompts(t, tk, parentPlan, 4))
		if err != nil {
			t.Fatal(err)
		}
		keys := map[string]int{}
		for i, a := range acts {
			m := actionMeta(t, a)
			keys[a.Key]++
			switch {
			case !on && (a.Kind != episode.Improve || m.ParentReward != 0.8 || m.Spent):
				t.Errorf("off, action %d: kind %s, parent reward %v, spent %v: want an edit of the parent", i, a.Kind, m.ParentReward, m.Spent)
			case on && (a.Kind != episode.Scratch || m.Parent != nil || m.ParentReward != 0 || !m.Spent):
				// The greedy edit is the parent itself: the very first walk
				// finds nothing new.
				t.Errorf("on, action %d: kind %s, parent steps %d (reward %v), spent %v: want a scratch walk on a spent parent", i, a.Kind, len(m.Parent), m.ParentReward, m.Spent)
			}
			if on && a.Key == parentPlan.Key() {
				t.Errorf("on, action %d is the parent's plan", i)
			}
			if on && m.Spent {
				// Re-scored as drawn: the record has no parent, so an update
				// scores the walk in the scratch context it was drawn in.
				lps := p.net.LogProbs(choicenet.Context{Features: prof.Features()}, m.Steps, 1)
				if len(lps) != len(m.Steps) || math.IsNaN(lps[0]) {
					t.Errorf("on, action %d: steps do not score in the scratch context: %v", i, lps)
				}
			}
		}
		t.Logf("prior on repeat %v: %d distinct plans of 4: %v", on, len(keys), keys)
		if !on && len(keys) != 1 {
			t.Errorf("off: a greedy policy's 4 edits gave %d plans, want 1 (the test relies on the edits being spent)", len(keys))
		}
	}
}
