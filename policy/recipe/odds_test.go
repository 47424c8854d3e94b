package recipe

import (
	"math"
	"testing"
)

// A policy no update has touched is its own prior, and its odds are
// distributions whose mode the walk follows.
func TestOddsOfAFreshPolicyAreThePrior(t *testing.T) {
	p, tk := fixturePolicy(t, "tiny-churn", 3)
	prior, _ := fixturePolicy(t, "tiny-churn", 3)
	odds, err := p.Odds(tk.Name, prior)
	if err != nil {
		t.Fatal(err)
	}
	if len(odds) < 5 {
		t.Fatalf("%d decisions", len(odds))
	}
	for _, d := range odds {
		sum := 0.0
		for k := range d.Options {
			sum += d.Now[k]
			if math.Abs(d.Now[k]-d.Prior[k]) > 1e-12 {
				t.Errorf("%s/%s: now %v, prior %v", d.Name, d.Options[k], d.Now[k], d.Prior[k])
			}
			if d.Now[k] > d.Now[d.Chosen] {
				t.Errorf("%s: the walk took %s, not the most probable %s", d.Name, d.Options[d.Chosen], d.Options[k])
			}
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("%s: probabilities sum to %v", d.Name, sum)
		}
	}
	if _, err := p.Odds("no-such-task", prior); err == nil {
		t.Error("an unprofiled task gave odds")
	}
}
