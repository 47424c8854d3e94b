package choicenet

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// banditBatch is playBandit's samples per update.
const banditBatch = 16

// playBandit trains n on a one-decision bandit where option 2 pays (+1) and
// the others do not (−1/3): updates batches of banditBatch samples of step, each
// sample's update number and option handed to seen (when not nil). It
// returns the context the samples were drawn in.
func playBandit(t *testing.T, n *Net, step Step, temp float64, updates int, seen func(update, chosen int)) Context {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := Context{Features: []float64{1}}
	for u := range updates {
		var batch []Example
		for range banditBatch {
			s := step
			i, lp := n.ChooseStep(ctx, nil, s, temp, rng)
			s.Chosen = i
			if seen != nil {
				seen(u, i)
			}
			adv := -1.0 / 3
			if i == 2 {
				adv = 1
			}
			batch = append(batch, Example{Ctx: ctx, Steps: []Step{s}, OldLogProbs: []float64{lp}, Advantage: adv, Temperature: temp})
		}
		if _, err := n.Update(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}
	return ctx
}

// A bandit where one option pays from the first batch on: plain PPO
// concentrates on it until the policy's entropy is near zero (the collapse
// of a learner that has seen ten noisy batches); with the prior anchor the
// paying option gains mass but every option keeps a share bounded below by
// π_prior·exp((A_min − A_max)/c), and the entropy stays above its floor.
func TestPriorAnchorKeepsEntropy(t *testing.T) {
	entropyAfter := func(priorKL float64) (h, pBest float64) {
		cfg := DefaultConfig(1, 1, 4)
		cfg.HintLogit, cfg.PriorKLCoef, cfg.Seed = 1.5, priorKL, 5
		n := mustNew(t, cfg)
		const temp = 0.7
		ctx := playBandit(t, n, Step{Decision: 0, NumOptions: 4, Hint: 1}, temp, 40, nil) // the prior favours option 0
		p, err := n.StepProbs(ctx, nil, Step{Decision: 0, NumOptions: 4, Hint: 1}, temp)
		if err != nil {
			t.Fatal(err)
		}
		for _, pk := range p {
			if pk > 0 {
				h -= pk * math.Log(pk)
			}
		}
		return h, p[2]
	}
	hFree, pFree := entropyAfter(0)
	hAnchor, pAnchor := entropyAfter(0.5)
	t.Logf("after 40 updates: no anchor H=%.3f p(best)=%.3f; anchor 0.5 H=%.3f p(best)=%.3f", hFree, pFree, hAnchor, pAnchor)
	const floor = 0.3 // nats; uniform over 4 is 1.386
	if hFree >= floor {
		t.Errorf("without the anchor the policy kept entropy %.3f: the test no longer shows a collapse", hFree)
	}
	if hAnchor < floor {
		t.Errorf("with the anchor entropy fell to %.3f, below %.1f", hAnchor, floor)
	}
	if pAnchor < 0.4 {
		t.Errorf("with the anchor the paying option has only %.3f: the anchor stopped learning", pAnchor)
	}
}

// A bandit where one option pays and nothing anchors the net: without a
// floor the other options all but vanish from the samples; with Floor 0.5
// each keeps at least half its prior share of the samples drawn late in
// training (the exploration the floor exists for), while the paying option
// still gains most of the rest (the floor does not stop learning).
func TestFloorKeepsPriorShareOfSamples(t *testing.T) {
	const temp, updates, late = 0.7, 40, 10
	sampleShares := func(floor float64) (shares []float64, prior []float64) {
		cfg := DefaultConfig(1, 1, 4)
		cfg.HintLogit, cfg.Seed = 1.5, 5
		n := mustNew(t, cfg)
		counts := make([]float64, 4)
		step := Step{Decision: 0, NumOptions: 4, Hint: 1, Floor: floor} // the prior favours option 0
		ctx := playBandit(t, n, step, temp, updates, func(u, chosen int) {
			if u >= updates-late {
				counts[chosen]++
			}
		})
		for k := range counts {
			counts[k] /= late * banditBatch
		}
		// The prior alone: a fresh net's head is zero, so its Probs are the hint's.
		p0, err := mustNew(t, cfg).StepProbs(ctx, nil, Step{Decision: 0, NumOptions: 4, Hint: 1}, temp)
		if err != nil {
			t.Fatal(err)
		}
		return counts, p0
	}
	free, prior := sampleShares(0)
	floored, _ := sampleShares(0.5)
	t.Logf("prior %.3f; last %d updates' samples: no floor %.3f, floor 0.5 %.3f", prior, late, free, floored)
	if other := free[0] + free[1] + free[3]; other > 0.1 {
		t.Errorf("without a floor the non-paying options kept %.3f of the samples: the test no longer shows a collapse", other)
	}
	for _, k := range []int{0, 1, 3} {
		// Half the prior's share, less three binomial standard deviations of 160 samples.
		want := 0.5*prior[k] - 3*math.Sqrt(0.5*prior[k]/(late*banditBatch))
		if floored[k] < want {
			t.Errorf("floor 0.5: option %d drew %.3f of the late samples, below half its prior share %.3f less 3σ (%.3f)", k, floored[k], prior[k], want)
		}
	}
	if floored[2] < 0.5*prior[2]+0.5*0.8 {
		t.Errorf("floor 0.5: the paying option drew only %.3f of the late samples: the net under the floor stopped learning", floored[2])
	}
}
