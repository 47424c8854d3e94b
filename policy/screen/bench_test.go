package screen

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkPick is one refit and a screen of 8 candidates on a model the
// size of a long run's: 2,000 programs of 25 features each, drawn from 40
// decisions of 5 options (about 400 distinct features, as plan choices and
// their pairs with the model family make on the suite). A refit comes once
// per 8 observations, so the per-episode cost is about an eighth of this.
func BenchmarkPick(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	plan := func() []string {
		f := make([]string, 25)
		fam := rng.IntN(10)
		for i := range 15 {
			f[i] = fmt.Sprintf("d%d=%d", i, rng.IntN(5))
		}
		for i := 15; i < 25; i++ {
			f[i] = fmt.Sprintf("fam%d|d%d=%d", fam, i, rng.IntN(3))
		}
		return f
	}
	m := New()
	for i := range 2000 {
		m.Observe(fmt.Sprint(i), plan(), rng.IntN(10) > 0, rng.Float64())
	}
	cands := make([][]string, 8)
	for i := range cands {
		cands[i] = plan()
	}
	m.refit()
	b.Logf("%d distinct features", len(m.index))
	b.ResetTimer()
	for range b.N {
		m.fitted = false // force the refit a batch of new results brings
		m.Pick(cands)
	}
}
