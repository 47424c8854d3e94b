package choicenet

import (
	"math"
	"math/rand/v2"
	"testing"
)

// toyEnv is a two-decision problem: each plan picks an option at decision 0,
// then one at decision 1; reward is 0 or 1.
type toyEnv struct {
	name       string
	features   func(rng *rand.Rand) []float64
	options    [2]int
	reward     func(f []float64, c0, c1 int) float64
	contexts   [][]float64 // contexts the success probability is measured on
	staleness  int         // samples come from the policy this many updates old
	maxUpdates int
}

// successProb is the exact probability (by enumeration, at T=1) that the
// policy's plan earns reward 1 in context f, and the lowest probability that
// the second choice wins given the first, over first choices that can win and
// that the policy takes with probability ≥ 5%.
func successProb(t *testing.T, n *Net, env toyEnv, f []float64) (success, worstSecond float64) {
	ctx := Context{Features: f}
	p0, err := n.Probs(ctx, nil, 0, env.options[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	worstSecond = 1
	for c0, pc0 := range p0 {
		p1, err := n.Probs(ctx, []Step{{Decision: 0, NumOptions: env.options[0], Chosen: c0}}, 1, env.options[1], 1)
		if err != nil {
			t.Fatal(err)
		}
		best := 0.0
		for c1, pc1 := range p1 {
			if env.reward(f, c0, c1) == 1 {
				success += pc0 * pc1
				best += pc1
			}
		}
		if pc0 >= 0.05 && best > 0 {
			worstSecond = min(worstSecond, best)
		}
	}
	return success, worstSecond
}

// TestLearning runs the learner's loop in miniature: sample 32 plans at the
// paper's temperature 0.7, reward, subtract the batch mean as a baseline,
// Update; until the best plan has probability > 0.9 in every context.
func TestLearning(t *testing.T) {
	for _, env := range toyEnvs() {
		t.Run(env.name, func(t *testing.T) {
			if testing.Short() && env.staleness > 0 {
				t.Skip("long")
			}
			testLearning(t, env)
		})
	}
}

// toyEnvs are TestLearning's problems: a bandit (the first choice alone
// decides), the same with stale samples, and one whose best second choice
// depends on the first and on the features.
func toyEnvs() []toyEnv {
	bandit := func(_ []float64, c0, _ int) float64 {
		if c0 == 2 {
			return 1
		}
		return 0
	}
	// Best second choice depends on the first choice and on the features:
	// c1 = (c0 + f) mod 3 where f is the index of the hot feature.
	conditional := func(f []float64, c0, c1 int) float64 {
		k := 0
		if f[1] == 1 {
			k = 1
		}
		if c1 == (c0+k)%3 {
			return 1
		}
		return 0
	}
	oneHot := func(rng *rand.Rand) []float64 {
		if rng.IntN(2) == 0 {
			return []float64{1, 0}
		}
		return []float64{0, 1}
	}
	both := [][]float64{{1, 0}, {0, 1}}
	return []toyEnv{
		{name: "bandit", features: oneHot, options: [2]int{4, 3}, reward: bandit, contexts: both, maxUpdates: 300},
		{name: "bandit with samples 3 versions stale", features: oneHot, options: [2]int{4, 3}, reward: bandit, contexts: both, staleness: 3, maxUpdates: 300},
		{name: "conditional", features: oneHot, options: [2]int{3, 3}, reward: conditional, contexts: both, maxUpdates: 400},
	}
}

// testLearning trains a small net on env until the best plan has
// probability > 0.9 in every context, failing after env.maxUpdates.
func testLearning(t *testing.T, env toyEnv) {
	cfg := DefaultConfig(2, 2, 4)
	cfg.Hidden = 32
	cfg.MiniBatch = 8
	n := mustNew(t, cfg)
	rng := rand.New(rand.NewPCG(42, 1))
	var queue [][]Example // batches sampled, waiting `staleness` updates
	for u := 1; u <= env.maxUpdates; u++ {
		queue = append(queue, sampleToyBatch(n, env, rng))
		if len(queue) <= env.staleness {
			continue
		}
		st, err := n.Update(t.Context(), queue[0])
		queue = queue[1:]
		if err != nil {
			t.Fatalf("update %d: %v", u, err)
		}
		if math.IsNaN(st.Loss) || math.IsNaN(st.ApproxKL) {
			t.Fatalf("update %d: NaN stats %+v", u, st)
		}
		if u%10 != 0 {
			continue
		}
		done := true
		var probs []float64
		for _, f := range env.contexts {
			s, w := successProb(t, n, env, f)
			probs = append(probs, s, w)
			done = done && s > 0.9 && w > 0.9
		}
		if done {
			t.Logf("after %d updates: P(best plan), min P(best 2nd | 1st) per context = %.3f; last stats %+v", u, probs, st)
			return
		}
	}
	for _, f := range env.contexts {
		s, w := successProb(t, n, env, f)
		t.Errorf("context %v: P(best plan) = %.3f, min P(best 2nd | 1st) = %.3f after %d updates; want both > 0.9", f, s, w, env.maxUpdates)
	}
}

// sampleToyBatch samples 32 plans from n at temperature 0.7 in env's
// contexts, with the batch mean reward as the advantages' baseline.
func sampleToyBatch(n *Net, env toyEnv, rng *rand.Rand) []Example {
	var batch []Example
	var rewards []float64
	for range 32 {
		f := env.features(rng)
		ctx := Context{Features: f}
		c0, lp0 := n.Choose(ctx, nil, 0, env.options[0], 0.7, rng)
		steps := []Step{{Decision: 0, NumOptions: env.options[0], Chosen: c0}}
		c1, lp1 := n.Choose(ctx, steps, 1, env.options[1], 0.7, rng)
		steps = append(steps, Step{Decision: 1, NumOptions: env.options[1], Chosen: c1})
		batch = append(batch, Example{Ctx: ctx, Steps: steps, OldLogProbs: []float64{lp0, lp1}, Temperature: 0.7})
		rewards = append(rewards, env.reward(f, c0, c1))
	}
	mean := 0.0
	for _, r := range rewards {
		mean += r / float64(len(rewards))
	}
	for i := range batch {
		batch[i].Advantage = rewards[i] - mean
	}
	return batch
}
