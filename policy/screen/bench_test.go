package screen

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkPick is one refit and a screen of 8 candidates on a model the
// size of a long run's: 2,000 programs of 15 choices of 5 values, 10 of
// them paired with one of 10 groups (25 features a program, 576 distinct with the intercept,
// as plan choices and their pairs with the model family make on the suite). A refit comes once
// per 8 observations, so the per-episode cost is about an eighth of this.
func BenchmarkPick(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	plan := func() Plan {
		p := Plan{Group: fmt.Sprint("fam", rng.IntN(10))}
		for i := range 15 {
			p.Choices = append(p.Choices, Choice{Name: fmt.Sprint("d", i), Value: fmt.Sprint(rng.IntN(5)), Paired: i < 10})
		}
		return p
	}
	m := New()
	for range 2000 {
		m.Observe(plan(), rng.IntN(10) > 0, rng.Float64(), 0)
	}
	cands := make([]Plan, 8)
	for i := range cands {
		cands[i] = plan()
	}
	m.refit()
	b.Logf("%d distinct features", len(m.index))
	b.ResetTimer()
	for range b.N {
		m.fitted = false // force the refit a batch of new results brings
		m.Pick(cands, Improvement)
	}
}
