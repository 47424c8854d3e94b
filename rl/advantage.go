package rl

import (
	"math"

	"github.com/mlerl/mlerl/episode"
)

// Baseline is the critic V(s) of SPEC.md §4. Every episode is a single step
// (prompt → program → reward), so GAE with γ=λ=1, as in the paper, reduces to
// A = R − V(s). The state s is the prompt; we pool it by (task, kind), which is
// what a prompt-conditioned critic can tell apart without reading the parent's
// code. V is an exponential moving average of observed rewards — a tabular
// critic trained by SGD on the squared error with step Alpha — so it follows
// the policy as it improves, unlike a plain mean over all history, which would
// keep remembering the −10 failures of the first minutes forever.
type Baseline struct {
	Alpha  float64                  `json:"alpha"`
	Values map[string]BaselineValue `json:"values"`
}

// BaselineValue is V for one (task, kind) and how many rewards shaped it.
type BaselineValue struct {
	V float64 `json:"v"`
	N int     `json:"n"`
}

// NewBaseline returns an empty critic with step alpha (0 < alpha ≤ 1).
func NewBaseline(alpha float64) *Baseline {
	if alpha <= 0 || alpha > 1 {
		alpha = 0.1
	}
	return &Baseline{Alpha: alpha, Values: map[string]BaselineValue{}}
}

func baselineKey(taskName string, kind episode.Kind) string { return taskName + "/" + string(kind) }

// groupKey is the critic's state for a token in a credit group
// (Config.DecisionCredit): the prompt's state refined by the group.
func groupKey(taskName string, kind episode.Kind, group string) string {
	return baselineKey(taskName, kind) + "|" + group
}

// Value is V(task, kind). An unseen state has no estimate; ok is false and the
// caller uses the batch mean of that state instead, so the first batch is not
// pushed around by an arbitrary zero.
func (b *Baseline) Value(taskName string, kind episode.Kind) (v float64, ok bool) {
	return b.valueOf(baselineKey(taskName, kind))
}

func (b *Baseline) valueOf(k string) (v float64, ok bool) {
	bv, ok := b.Values[k]
	return bv.V, ok && bv.N > 0
}

// Observe moves V(task, kind) toward reward r. The first reward sets V; later
// ones average with weight 1/n until n reaches 1/Alpha, then with weight Alpha,
// so early estimates are not dominated by the first sample.
func (b *Baseline) Observe(taskName string, kind episode.Kind, r float64) {
	b.observeKey(baselineKey(taskName, kind), r)
}

func (b *Baseline) observeKey(k string, r float64) {
	bv := b.Values[k]
	bv.N++
	step := 1 / float64(bv.N)
	if step < b.Alpha {
		step = b.Alpha
	}
	bv.V += step * (r - bv.V)
	b.Values[k] = bv
}

// DurationWeights returns w_k = Δt_k / mean(Δt) over the batch (SPEC.md §1).
// Dividing by the batch mean keeps the average weight at 1, so the step size of
// the update is the same as without weighting. A batch whose durations are all
// zero (or that is empty) gets weights of 1.
func DurationWeights(durations []float64) []float64 {
	w := make([]float64, len(durations))
	mean := 0.0
	for _, d := range durations {
		mean += math.Max(d, 0)
	}
	if len(durations) > 0 {
		mean /= float64(len(durations))
	}
	for i, d := range durations {
		if mean <= 0 {
			w[i] = 1
			continue
		}
		w[i] = math.Max(d, 0) / mean
	}
	return w
}

// ScaleByStd divides each advantage by the standard deviation of the batch's
// advantages, without subtracting their mean. Only a common positive factor is
// applied, so the baseline is kept and, when the duration weights are applied
// afterwards, their relative sizes are untouched; centring after weighting
// would instead shift every sample by the weighted mean and undo the method.
// A batch with zero spread is left as it is. It returns the factor applied
// (1 when none), so other advantages can be put on the same scale.
func ScaleByStd(adv []float64) float64 {
	if len(adv) < 2 {
		return 1
	}
	mean := 0.0
	for _, a := range adv {
		mean += a
	}
	mean /= float64(len(adv))
	v := 0.0
	for _, a := range adv {
		v += (a - mean) * (a - mean)
	}
	std := math.Sqrt(v / float64(len(adv)))
	if std < 1e-8 {
		return 1
	}
	for i := range adv {
		adv[i] /= std
	}
	return 1 / std
}
