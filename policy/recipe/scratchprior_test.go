package recipe

import (
	"context"
	"math"
	"testing"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl"
)

// scratchPrompts are n copies of the prompt pr.
func scratchPrompts(pr rl.Prompt, n int) []rl.Prompt {
	ps := make([]rl.Prompt, n)
	for i := range ps {
		ps[i] = pr
	}
	return ps
}

// Every scratch walk the scratch prior takes is the prior's at every
// decision and says so in its record; the others, and every improve walk,
// are the policy's own. The share taken is the one set, within four
// standard deviations over 400 walks.
func TestScratchPriorTakesItsShareOfScratchWalks(t *testing.T) {
	for _, share := range []float64{0, 0.3, 1} {
		p, tk := fixturePolicy(t, "tiny-churn", 3)
		if err := p.SetScratchPrior(share); err != nil {
			t.Fatal(err)
		}
		prompts := scratchPrompts(rl.Prompt{Kind: episode.Scratch, Task: tk}, 400)
		prof := p.profiles[tk.Name]
		parent := withChoices(t, prof, map[string]string{"model.family": "xgboost"})
		prompts = append(prompts, improvePrompts(t, tk, parent, 40)...)
		acts, err := p.Sample(context.Background(), prompts)
		if err != nil {
			t.Fatal(err)
		}
		prior := 0
		for i, a := range acts {
			m := actionMeta(t, a)
			want := 0.0
			if m.ScratchPrior {
				want = 1
				prior++
				if i >= 400 {
					t.Fatalf("share %v: improve walk %d was given to the prior", share, i)
				}
			}
			for _, s := range m.Steps {
				if s.Floor != want {
					t.Fatalf("share %v: walk %d (scratch prior %v) has floor %v at %s, want %v", share, i, m.ScratchPrior, s.Floor, DecisionNames()[s.Decision], want)
				}
			}
		}
		got := float64(prior) / 400
		if sd := math.Sqrt(share * (1 - share) / 400); math.Abs(got-share) > 4*sd+1e-9 {
			t.Errorf("scratch prior %v took %.3f of the scratch walks", share, got)
		}
	}
}

// Off, the policy draws exactly what it drew before the option existed: the
// coin is not tossed, so the random stream, and every plan of a seeded run
// replayed from a store, stays the same.
func TestScratchPriorOffDrawsAsBefore(t *testing.T) {
	a, tk := fixturePolicy(t, "tiny-churn", 5)
	b, _ := fixturePolicy(t, "tiny-churn", 5)
	if err := b.SetScratchPrior(0); err != nil {
		t.Fatal(err)
	}
	prompts := scratchPrompts(rl.Prompt{Kind: episode.Scratch, Task: tk}, 50)
	x, err := a.Sample(context.Background(), prompts)
	if err != nil {
		t.Fatal(err)
	}
	y, err := b.Sample(context.Background(), prompts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range x {
		if x[i].Key != y[i].Key {
			t.Fatalf("walk %d: %s without the option, %s with it at 0", i, x[i].Key, y[i].Key)
		}
	}
}

// The pattern seen on austen-authorship: the first programs of one model
// family pay, the others do not, and the learnt scratch policy draws the
// others far less than the prior does, among them the family the prompting
// baseline's best line began with. The prior anchor (PriorAnchor) bounds
// how far: about a quarter of the untrained share here. With a scratch prior
// of 0.5 the walks are the even mixture of the prior's and the learnt
// policy's, so the other families come back at the mean of the two shares.
func TestScratchPriorKeepsOtherFamiliesReachable(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the net through many updates: about 40 s under -race; make test-long runs it")
	}
	const paying = "xgboost"
	otherShare := func(share float64) (untrained, learnt float64) {
		p, tk := fixturePolicy(t, "tiny-churn", 9)
		prompts := scratchPrompts(rl.Prompt{Kind: episode.Scratch, Task: tk}, 16)
		sample := func() []rl.Action {
			p.tried[tk.Name] = map[string]bool{} // every batch may write any plan again
			acts, err := p.Sample(context.Background(), prompts)
			if err != nil {
				t.Fatal(err)
			}
			return acts
		}
		others := func(rounds int) float64 {
			n := 0
			for range rounds {
				for _, a := range sample() {
					if actionMeta(t, a).Plan.Get("model.family") != paying {
						n++
					}
				}
			}
			return float64(n) / float64(16*rounds)
		}
		untrained = others(30)
		for range 20 {
			acts := sample()
			samples := make([]rl.Sample, len(acts))
			for i, a := range acts {
				adv := -1.0
				if actionMeta(t, a).Plan.Get("model.family") == paying {
					adv = 1
				}
				samples[i] = rl.Sample{Prompt: prompts[i], Action: a, Advantage: adv, Weight: 1}
			}
			if _, err := p.Update(context.Background(), samples); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.SetScratchPrior(share); err != nil {
			t.Fatal(err)
		}
		return untrained, others(30)
	}
	untrained, learnt := otherShare(0)
	_, kept := otherShare(0.5)
	t.Logf("share of scratch walks not %s: untrained %.3f; after 20 updates: scratch prior 0 %.3f, 0.5 %.3f", paying, untrained, learnt, kept)
	if learnt > 0.5*untrained {
		t.Fatalf("the updates did not concentrate the scratch policy on %s (untrained %.3f other families, learnt %.3f): the test shows nothing", paying, untrained, learnt)
	}
	// 480 walks each: 4 standard deviations of kept less the mean of the
	// other two is at most 4·sqrt(1.5·0.25/480) = 0.11.
	if want := (untrained + learnt) / 2; math.Abs(kept-want) > 0.11 {
		t.Errorf("with a scratch prior of 0.5, %.3f of the walks are of other families, want %.3f (untrained %.3f, learnt %.3f)", kept, want, untrained, learnt)
	}
}
