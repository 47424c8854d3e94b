package recipe

import (
	"math/rand/v2"
	"strconv"
)

// Candidate is a plan with a name people can read in a table.
type Candidate struct {
	Name string
	Plan *Plan
}

// Candidates picks n distinct plans for p, the set a replay table is
// recorded from: the default plan and the hand-picked edits that apply (in
// that order), then uniformly random plans from seed, named "random K" with
// K their position in the list. Fewer than len(Edits()) keeps the first n edits.
func Candidates(p *Profile, n int, seed uint64) []Candidate {
	var out []Candidate
	seen := map[string]bool{}
	for _, e := range Edits() {
		if len(out) >= n {
			return out
		}
		if pl, ok := e.Apply(p); ok && !seen[pl.Key()] {
			seen[pl.Key()] = true
			out = append(out, Candidate{e.Name, pl})
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x7265706c6179)) // "replay"
	for tries := 0; len(out) < n && tries < 100*n; tries++ {
		pl := Random(p, rng)
		if seen[pl.Key()] {
			continue
		}
		seen[pl.Key()] = true
		out = append(out, Candidate{"random " + strconv.Itoa(len(out)+1), pl})
	}
	return out
}
