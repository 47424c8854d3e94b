package choicenet

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

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
		rng := rand.New(rand.NewPCG(1, 2))
		ctx := Context{Features: []float64{1}}
		const temp = 0.7
		for range 40 {
			var batch []Example
			for range 16 {
				step := Step{Decision: 0, NumOptions: 4, Hint: 1} // the prior favours option 0
				i, lp := n.ChooseStep(ctx, nil, step, temp, rng)
				step.Chosen = i
				adv := -1.0 / 3
				if i == 2 {
					adv = 1
				}
				batch = append(batch, Example{Ctx: ctx, Steps: []Step{step}, OldLogProbs: []float64{lp}, Advantage: adv, Temperature: temp})
			}
			if _, err := n.Update(context.Background(), batch); err != nil {
				t.Fatal(err)
			}
		}
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
