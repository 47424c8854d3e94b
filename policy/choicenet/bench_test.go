package choicenet

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time. Benchmarks report it per op
// beside wall time because the machine is shared: wall time swings with
// other people's load, CPU time much less.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchConfig is sized like the recipe grammar: ~16 task features, ~20
// decisions of up to 8 options, plans of ~15 steps.
func benchConfig() Config { return DefaultConfig(16, 20, 8) }

// benchBatch samples B plans of 15 steps from n, half of them improve prompts.
func benchBatch(n *Net, b int, rng *rand.Rand) []Example {
	batch := make([]Example, b)
	for i := range batch {
		ctx, _ := randomPlan(n, rng, 15, i%2 == 0)
		var steps []Step
		var lps []float64
		for s := range 15 {
			k := 2 + (s*3)%7
			c, lp := n.Choose(ctx, steps, s, k, 0.7, rng)
			steps = append(steps, Step{Decision: s, NumOptions: k, Chosen: c})
			lps = append(lps, lp)
		}
		batch[i] = Example{Ctx: ctx, Steps: steps, OldLogProbs: lps, Advantage: rng.NormFloat64(), Temperature: 0.7}
	}
	return batch
}

// BenchmarkUpdate128x15 is the learner's update time for a batch of 128
// plans of 15 steps with the default config (4 epochs × 4 minibatches of 32).
func BenchmarkUpdate128x15(b *testing.B) {
	n := mustNew(b, benchConfig())
	rng := rand.New(rand.NewPCG(1, 2))
	batch := benchBatch(n, 128, rng)
	if _, err := n.Update(b.Context(), batch); err != nil { // compile the graph outside the timing
		b.Fatal(err)
	}
	b.ResetTimer()
	start := cpuTime()
	for b.Loop() {
		if _, err := n.Update(b.Context(), batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// BenchmarkChoose is one sampling step in the middle of a plan (7 steps of
// history, with a parent plan), the actors' per-decision cost.
func BenchmarkChoose(b *testing.B) {
	n := mustNew(b, benchConfig())
	rng := rand.New(rand.NewPCG(3, 4))
	ctx, hist := randomPlan(n, rng, 7, true)
	for i := range hist {
		hist[i].Decision = i
	}
	b.ReportAllocs()
	for b.Loop() {
		if c, _ := n.Choose(ctx, hist, 7, 8, 0.7, rng); c < 0 {
			b.Fatal("bad choice")
		}
	}
}

// BenchmarkLogProbs15 re-scores a whole 15-step plan.
func BenchmarkLogProbs15(b *testing.B) {
	n := mustNew(b, benchConfig())
	rng := rand.New(rand.NewPCG(5, 6))
	ex := benchBatch(n, 1, rng)[0]
	b.ReportAllocs()
	for b.Loop() {
		n.LogProbs(ex.Ctx, ex.Steps, 0.7)
	}
}
