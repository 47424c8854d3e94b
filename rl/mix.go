package rl

import (
	"fmt"
	"math"

	"github.com/mlerl/mlerl/episode"
)

// Mix follows, per task, how often lately a scratch episode and an improve
// episode set a new best for the task, and gives improve prompts a share of
// the prompts in proportion (Config.AdaptiveMix). A run is judged by its best
// program, and past its first minutes almost every new best comes from an
// edit of the best: over the 24 twenty-minute runs on poll-adjustment kept
// from earlier sessions, 139 of the 140 new bests after the first quarter were
// improve episodes, while half the episodes were scratch (bench/RESULTS.md,
// "Where new bests come from"). A fixed half spends half the budget on
// prompts that, by then, seldom move the best.
//
// The counts are forgotten geometrically (MixForget per episode of the
// kind), so the share follows the run's phase rather than its first
// minutes, when every new best is a scratch program; each kind starts from
// the same prior rate, so a fresh task gets the half of SPEC.md §3; and the
// share stays within [MixLow, MixHigh]: never fewer edits than SPEC.md's
// half (early on, and on tasks where a run has too few programs for edits to
// win, it is that half), and never so many that scratch programs stop, as
// they are still how a run meets a model family its edits never reach.
// It counts outcomes, not the policy's probabilities: a search setting that
// the prompting baseline takes as well, not learning.
type Mix map[string]*MixRates

// MixRates are one task's forgotten counts: episodes of each kind, and
// those that set a new best for the task.
type MixRates struct {
	Scratch     float64 `json:"scratch"`
	ScratchWins float64 `json:"scratch_wins"`
	Improve     float64 `json:"improve"`
	ImproveWins float64 `json:"improve_wins"`
}

const (
	// MixForget multiplies a kind's counts at each of its episodes: the
	// last hundred or so of a kind weigh most (a half-life of 69).
	MixForget = 0.99
	// MixPriorRate is each kind's rate of new bests before any episode,
	// as MixPriorWeight episodes' worth of evidence: a quarter of a new
	// best, little beside the two or three an edit makes per hundred late in
	// a run (bench/RESULTS.md), so the rates are the run's own soon.
	MixPriorRate   = 0.05
	MixPriorWeight = 5.0
	// MixLow and MixHigh bound the share of improve prompts.
	MixLow, MixHigh = 0.5, 0.9
)

// Observe counts a completed episode of kind on task, and whether it set a
// new best for the task.
func (m Mix) Observe(task string, kind episode.Kind, newBest bool) {
	r := m[task]
	if r == nil {
		r = &MixRates{}
		m[task] = r
	}
	win := 0.0
	if newBest {
		win = 1
	}
	if kind == episode.Improve {
		r.Improve, r.ImproveWins = MixForget*r.Improve+1, MixForget*r.ImproveWins+win
		return
	}
	r.Scratch, r.ScratchWins = MixForget*r.Scratch+1, MixForget*r.ScratchWins+win
}

// ImproveShare is the share of the task's prompts that improve a program:
// the improve kind's rate of new bests over the sum of both kinds' rates,
// within [MixLow, MixHigh].
func (m Mix) ImproveShare(task string) float64 {
	r := m[task]
	if r == nil {
		return 0.5
	}
	rate := func(wins, n float64) float64 {
		return (wins + MixPriorRate*MixPriorWeight) / (n + MixPriorWeight)
	}
	ri, rs := rate(r.ImproveWins, r.Improve), rate(r.ScratchWins, r.Scratch)
	return math.Min(MixHigh, math.Max(MixLow, ri/(ri+rs)))
}

// The values of train's and bench rl-vs-prompting's --mix.
const (
	MixHalf     = "half"     // ImproveFraction of the prompts improve (SPEC.md §3)
	MixAdaptive = "adaptive" // Config.AdaptiveMix
)

// ParseMix reads a --mix value: whether the mix is adaptive.
func ParseMix(s string) (bool, error) {
	switch s {
	case MixHalf:
		return false, nil
	case MixAdaptive:
		return true, nil
	}
	return false, fmt.Errorf("mix %q: want %s or %s", s, MixHalf, MixAdaptive)
}
