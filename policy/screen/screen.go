// Package screen is a learnt critic of whole programs for one task: a
// Bayesian linear model of how a program ranks among the task's results,
// from the features of its plan (one per choice, e.g. "model.family=xgboost"),
// fitted on the results the run has seen. A policy that draws several
// candidate programs for a prompt asks it which one to run: the one with the
// largest expected improvement over the task's best (Pick).
//
// Why a model of results and not only the policy's own distribution: the
// policy net learns what to draw, a few noisy updates at a time and anchored
// to its prior, so after a run's first minutes it draws near its mode and its
// improve walks keep to lines that paid early. The model instead remembers
// every result and knows which choices were never tried: an untried choice
// keeps its prior uncertainty, so expected improvement prefers a candidate
// that tries something new over one that repeats what is known to be middling.
// That is the sequential model-based search hyperparameter optimisers use,
// applied to the candidates the policy proposes.
//
// Many choices change nothing on a given table: how missing values are filled
// where none are missing, a vocabulary cap above the words the text has, a
// loader that reads a clean file as the default one does. Edits of such
// choices score exactly what their parent scored (on austen-authorship half
// of the improve episodes of a 20-minute run did), and to a linear model each
// is an untried choice with its prior uncertainty, which expected improvement
// rewards. So the model learns which choices are neutral for each group (model
// family) from the results themselves: a decision whose values, in plans that
// differ in nothing else, have always scored the same, at least
// neutralPairs times. Neutral choices are left out of the features, and a
// candidate that differs from a program already run only in neutral choices is
// a repeat of it in all but its key (Prediction.Repeat): Pick runs one only
// when every candidate is.
package screen

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Alpha is the prior precision of every weight: a choice's effect is a priori
// N(0, s²/Alpha) on the normal-score scale, so a choice seen once moves the
// prediction by about half its residual, and an untried one adds s²/Alpha to
// the predictive variance.
const Alpha = 1.0

// biasAlpha is the intercept's precision: weak, the mean is the data's.
const biasAlpha = 0.01

// refitEvery is how many new observations make the model refit before its
// next prediction: a fit finds the neutral choices and factorises a matrix as
// wide as the distinct features seen (hundreds), about 0.1 s on 2,000
// results (BenchmarkPick); once a batch (the learner's 8) keeps that small
// beside programs that take seconds.
const refitEvery = 8

// MinValid is how many valid results the model needs before Pick chooses:
// with fewer, the normal scores of ranks say little and Pick returns the
// policy's own first draw.
const MinValid = 4

// Choice is one decision of a plan as the model reads it.
type Choice struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// Paired choices also count together with the plan's group: how a table
	// is encoded pays differently per model family.
	Paired bool `json:"paired,omitempty"`
}

// Plan is a program's choices and the group (a recipe plan's model family)
// its paired choices are read with.
type Plan struct {
	Group   string   `json:"group"`
	Choices []Choice `json:"choices"`
}

// neutralPairs is how many pairs of results, in plans that differ in one
// decision only, must have scored the same (and none differently) before that
// decision counts as neutral for a group. Scores of different programs
// coincide on coarse metrics (accuracy on a small test set), seldom three
// times over.
const neutralPairs = 3

type observation struct {
	plan    Plan
	valid   bool
	reward  float64
	seconds float64 // how long the program ran; 0: not known (a state saved before durations were kept)
}

// Model is one task's model. The zero value is not usable: use New.
type Model struct {
	obs    []observation
	byKey  map[string]int // plan identity (rawKey) -> index in obs: identical programs are one result
	nValid int            // valid observations
	// bestAt is the index in obs of the best valid result (-1: none yet),
	// bestReward its reward: SinceBest counts from it.
	bestAt     int
	bestReward float64

	// The fit (refit when stale reaches refitEvery, or never fitted).
	stale  int
	fitted bool
	index  map[string]int // feature -> column
	chol   []float64      // lower Cholesky factor of XᵀX + diag(alpha), row-major d×d (d = len(w))
	w      []float64      // posterior mean weights
	s2     float64        // noise variance of the normal scores
	best   float64        // the best observed normal score
	// neutral are the decisions "group\x00name" that change nothing for the
	// group; canon the normal scores of the programs run, by canonical key.
	neutral map[string]bool
	canon   map[string][]float64
	// wDur are the posterior mean weights of the centred log duration (the
	// same design and prior as the score's, so the same factor chol), used
	// by Pick's PerSecond.
	wDur    []float64
	durMean float64 // mean log duration of the results of known duration
}

// Objective is what Pick maximises over the candidates.
type Objective int

const (
	// Improvement is the expected improvement over the task's best.
	Improvement Objective = iota
	// PerSecond is the expected improvement per predicted second.
	PerSecond
)

// New makes an empty model.
func New() *Model { return &Model{byKey: map[string]int{}, bestAt: -1} }

// Observe records one result: a program of choices plan, valid or not, its
// reward (higher is better; ignored when not valid) and how many seconds it
// ran (a time-out's is the limit; 0 or less: not known). A plan seen before
// (the same group and choices) is the same program and result (rendering is
// deterministic and the cache answers it again): recorded once.
func (m *Model) Observe(plan Plan, valid bool, reward, seconds float64) {
	key := rawKey(plan)
	if _, ok := m.byKey[key]; ok {
		return
	}
	if valid && (math.IsNaN(reward) || math.IsInf(reward, 0)) {
		valid = false // a reward the grader should never give is no ranking
	}
	m.byKey[key] = len(m.obs)
	plan.Choices = append([]Choice(nil), plan.Choices...)
	if !(seconds > 0) || math.IsInf(seconds, 0) {
		seconds = 0
	}
	m.obs = append(m.obs, observation{plan: plan, valid: valid, reward: reward, seconds: seconds})
	if valid {
		m.nValid++
		if m.bestAt < 0 || reward > m.bestReward {
			m.bestAt, m.bestReward = len(m.obs)-1, reward
		}
	}
	m.stale++
}

// SinceBest is the number of distinct programs observed after the one that
// set the task's best (all of them while none is valid): how long the
// search has gone without improving, counted in new programs, since a
// repeat is no search.
func (m *Model) SinceBest() int {
	if m.bestAt < 0 {
		return len(m.obs)
	}
	return len(m.obs) - 1 - m.bestAt
}

// Len is the number of distinct programs observed.
func (m *Model) Len() int { return len(m.obs) }

// Ready says whether Pick will choose (enough valid results to rank).
func (m *Model) Ready() bool { return m.nValid >= MinValid }

// Prediction is the model's belief about one candidate: the mean and
// standard deviation of its normal score and its expected improvement over
// the task's best.
type Prediction struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	EI   float64 `json:"ei"`
	// Repeat says the plan differs from a program already run only in
	// choices neutral for its group: Mean is that program's score, SD 0.
	Repeat bool `json:"repeat,omitempty"`
	// Seconds is the predicted duration: the geometric mean the model of
	// log durations gives (a repeat's is its program's).
	Seconds float64 `json:"seconds,omitempty"`
}

// value is what Pick maximises for one prediction.
func (by Objective) value(p Prediction) float64 {
	if by == PerSecond && p.Seconds > 0 {
		return p.EI / p.Seconds
	}
	return p.EI
}

// Pick returns the index of the candidate with the largest expected
// improvement (per predicted second, by PerSecond) and the predictions of
// all of them, or -1 and nil when the model is not Ready. A candidate that is
// a Repeat is chosen only when all are; ties go to the earlier candidate (the
// policy's own first draw comes first).
func (m *Model) Pick(cands []Plan, by Objective) (int, []Prediction) {
	if len(cands) == 0 || !m.Ready() {
		return -1, nil
	}
	m.refit()
	preds := make([]Prediction, len(cands))
	best := 0
	for i, c := range cands {
		preds[i] = m.predict(c)
		if b := preds[best]; preds[i].Repeat == b.Repeat && by.value(preds[i]) > by.value(b) || b.Repeat && !preds[i].Repeat {
			best = i
		}
	}
	return best, preds
}

// Predict is the model's belief about one plan (nil when not Ready).
func (m *Model) Predict(plan Plan) *Prediction {
	if !m.Ready() {
		return nil
	}
	m.refit()
	p := m.predict(plan)
	return &p
}

// Repeats says whether plan differs from a program already run only in
// choices neutral for its group (false when the model is not Ready).
func (m *Model) Repeats(plan Plan) bool {
	if !m.Ready() {
		return false
	}
	m.refit()
	_, ok := m.canon[m.canonical(plan, -1)]
	return ok
}

func (m *Model) refit() {
	if m.fitted && m.stale < refitEvery {
		return
	}
	m.fit()
	m.fitted, m.stale = true, 0
}

// normalScores turns rewards into the normal scores of their ranks among the
// valid results (ties share their mean rank): Φ⁻¹((rank − ½)/n). Scores of
// ML programs have long tails (a broken model at chance, the rest bunched
// near the top), which a linear model fitted on raw scores would spend
// itself on; ranks keep every task on one scale and the normal scores keep
// resolution at the top, where the best is decided. A failure scores one
// below the worst valid result.
func (m *Model) normalScores() []float64 {
	var idx []int
	for i, o := range m.obs {
		if o.valid {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return m.obs[idx[a]].reward < m.obs[idx[b]].reward })
	y := make([]float64, len(m.obs))
	n := float64(len(idx))
	low := math.Inf(1)
	for a := 0; a < len(idx); {
		b := a
		for b+1 < len(idx) && m.obs[idx[b+1]].reward == m.obs[idx[a]].reward {
			b++
		}
		rank := float64(a+b)/2 + 1 // 1-based mean rank of the tie
		z := math.Sqrt2 * math.Erfinv(2*(rank-0.5)/n-1)
		for k := a; k <= b; k++ {
			y[idx[k]] = z
		}
		low = min(low, z)
		a = b + 1
	}
	for i, o := range m.obs {
		if !o.valid {
			y[i] = low - 1
		}
	}
	return y
}

const biasFeature = "\x00bias"

func (m *Model) fit() {
	y := m.normalScores()
	m.neutral = m.neutralDecisions()
	m.canon = map[string][]float64{}
	for i, o := range m.obs {
		k := m.canonical(o.plan, -1)
		m.canon[k] = append(m.canon[k], y[i])
	}
	m.index = map[string]int{biasFeature: 0}
	rows := make([][]int, len(m.obs))
	for i, o := range m.obs {
		row := []int{0}
		for _, f := range m.features(o.plan) {
			j, ok := m.index[f]
			if !ok {
				j = len(m.index)
				m.index[f] = j
			}
			row = append(row, j)
		}
		rows[i] = dedupe(row)
	}
	d := len(m.index)
	a := make([]float64, d*d)
	b := make([]float64, d)
	for j := 0; j < d; j++ {
		a[j*d+j] = Alpha
	}
	a[0] = biasAlpha
	for i, row := range rows {
		for _, j := range row {
			b[j] += y[i]
			for _, k := range row {
				a[j*d+k]++
			}
		}
	}
	if !cholesky(a, d) {
		// XᵀX + αI is positive definite for α > 0; only NaN input fails.
		m.chol, m.w, m.wDur = nil, nil, nil
		return
	}
	m.chol = a
	m.w = solve(a, d, b)
	m.wDur = solve(a, d, m.logDurationsXty(rows))
	var rss float64
	m.best = math.Inf(-1)
	for i, row := range rows {
		r := y[i]
		for _, j := range row {
			r -= m.w[j]
		}
		rss += r * r
		if m.obs[i].valid {
			m.best = max(m.best, y[i])
		}
	}
	// One pseudo-observation of variance 1 keeps s² above 0 on a perfect fit.
	m.s2 = (rss + 1) / float64(len(rows)+1)
}

// logDurationsXty is Xᵀy for y the log durations, centred on their mean so
// that the weights' prior mean (0) is the mean duration, not 1 s; a result of
// unknown duration counts as the mean. The mean is added back in predictions
// (durMean).
func (m *Model) logDurationsXty(rows [][]int) []float64 {
	var sum float64
	n := 0
	for _, o := range m.obs {
		if o.seconds > 0 {
			sum += math.Log(o.seconds)
			n++
		}
	}
	m.durMean = 0
	if n > 0 {
		m.durMean = sum / float64(n)
	}
	b := make([]float64, len(m.index))
	for i, row := range rows {
		if m.obs[i].seconds <= 0 {
			continue
		}
		y := math.Log(m.obs[i].seconds) - m.durMean
		for _, j := range row {
			b[j] += y
		}
	}
	return b
}

func (m *Model) predict(plan Plan) Prediction {
	if m.chol == nil {
		return Prediction{}
	}
	phi, unknown := m.design(plan)
	seconds := math.Exp(m.durMean + dot(phi, m.wDur)) // an unseen feature adds its prior mean, 0
	if ys, ok := m.canon[m.canonical(plan, -1)]; ok {
		mean := 0.0
		for _, y := range ys {
			mean += y
		}
		mean /= float64(len(ys))
		return Prediction{Mean: mean, EI: max(0, mean-m.best), Repeat: true, Seconds: seconds}
	}
	mean := dot(phi, m.w)
	// φᵀ A⁻¹ φ = |L⁻¹ φ|² with A = L Lᵀ.
	z := forward(m.chol, len(phi), phi)
	q := dot(z, z)
	sd := math.Sqrt(m.s2 * (q + float64(unknown)/Alpha))
	return Prediction{Mean: mean, SD: sd, EI: expectedImprovement(mean, sd, m.best), Seconds: seconds}
}

// design is the plan's row of the fit's design matrix (φ: the intercept and
// each known feature 1, once) and how many of its features the fit has not
// seen, whose weights are at their prior.
func (m *Model) design(plan Plan) ([]float64, int) {
	phi := make([]float64, len(m.w))
	phi[0] = 1
	unknown := 0
	seen := map[string]bool{}
	for _, f := range m.features(plan) {
		if seen[f] {
			continue
		}
		seen[f] = true
		if j, ok := m.index[f]; ok {
			phi[j] = 1
		} else {
			unknown++
		}
	}
	return phi, unknown
}

func dot(a, b []float64) float64 {
	t := 0.0
	for i, v := range a {
		t += v * b[i]
	}
	return t
}

// features are what the linear model sees of a plan: each choice not
// neutral for the plan's group ("nb.variant=complement"), and each paired one
// with the group too ("ridge|features.text=counts").
func (m *Model) features(p Plan) []string {
	out := make([]string, 0, 2*len(p.Choices))
	for _, c := range p.Choices {
		if m.neutral[p.Group+"\x00"+c.Name] {
			continue
		}
		f := c.Name + "=" + c.Value
		out = append(out, f)
		if c.Paired && p.Group != "" {
			out = append(out, p.Group+"|"+f)
		}
	}
	return out
}

// rawKey is the plan's identity: its group and choices, none blanked.
func rawKey(p Plan) string {
	var b strings.Builder
	b.WriteString(p.Group)
	for _, c := range p.Choices {
		b.WriteByte(0)
		b.WriteString(c.Name)
		b.WriteByte('=')
		b.WriteString(c.Value)
	}
	return b.String()
}

// canonical is the plan's key with every choice neutral for its group
// blanked, and choice skip (an index; -1: none) left out: plans with equal
// canonical keys are one program as far as the results show.
func (m *Model) canonical(p Plan, skip int) string {
	var b strings.Builder
	b.WriteString(p.Group)
	for i, c := range p.Choices {
		if i == skip {
			continue
		}
		b.WriteByte(0)
		b.WriteString(c.Name)
		b.WriteByte('=')
		if m.neutral[p.Group+"\x00"+c.Name] {
			b.WriteByte('*')
		} else {
			b.WriteString(c.Value)
		}
	}
	return b.String()
}

// neutralDecisions finds, per group, the decisions whose values have scored
// the same in every pair of valid results that differ in that decision alone
// (at least neutralPairs pairs, none differing). Two passes: in the second,
// plans that differ in a decision neutral after the first and in one more
// are pairs for the one more.
func (m *Model) neutralDecisions() map[string]bool {
	type val struct {
		value  string
		reward float64
	}
	pairs, differ := map[string]int{}, map[string]int{}
	neutral := map[string]bool{}
	for range 2 {
		buckets := map[string][]val{}
		groupOf := map[string]string{}
		m.neutral = neutral
		for _, o := range m.obs {
			if !o.valid {
				continue
			}
			for d, c := range o.plan.Choices {
				k := c.Name + "\x01" + m.canonical(o.plan, d)
				buckets[k] = append(buckets[k], val{c.Value, o.reward})
				groupOf[k] = o.plan.Group + "\x00" + c.Name
			}
		}
		passPairs := map[string]int{}
		for k, vs := range buckets {
			// Each result of another value than the bucket's first is a
			// pair with it.
			for _, v := range vs[1:] {
				if v.value == vs[0].value {
					continue
				}
				passPairs[groupOf[k]]++
				if !sameScore(vs[0].reward, v.reward) {
					differ[groupOf[k]]++
				}
			}
		}
		for k, n := range passPairs {
			pairs[k] = max(pairs[k], n)
		}
		next := map[string]bool{}
		for k, n := range pairs {
			if n >= neutralPairs && differ[k] == 0 {
				next[k] = true
			}
		}
		neutral = next
	}
	m.neutral = nil
	return neutral
}

// sameScore says two rewards are one program's: equal to within rounding.
func sameScore(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b))
}

// expectedImprovement is E[max(0, Y − best)] for Y ~ N(mean, sd²).
func expectedImprovement(mean, sd, best float64) float64 {
	if sd <= 0 {
		return max(0, mean-best)
	}
	u := (mean - best) / sd
	pdf := math.Exp(-u*u/2) / math.Sqrt(2*math.Pi)
	cdf := 0.5 * math.Erfc(-u/math.Sqrt2)
	return (mean-best)*cdf + sd*pdf
}

func dedupe(row []int) []int {
	sort.Ints(row)
	out := row[:0]
	for i, v := range row {
		if i == 0 || v != row[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// cholesky factors the symmetric positive-definite a (d×d, row-major) in
// place into its lower factor L (a = L Lᵀ; the upper triangle is zeroed).
func cholesky(a []float64, d int) bool {
	for j := 0; j < d; j++ {
		s := a[j*d+j]
		for k := 0; k < j; k++ {
			s -= a[j*d+k] * a[j*d+k]
		}
		if !(s > 0) {
			return false
		}
		l := math.Sqrt(s)
		a[j*d+j] = l
		for i := j + 1; i < d; i++ {
			t := a[i*d+j]
			for k := 0; k < j; k++ {
				t -= a[i*d+k] * a[j*d+k]
			}
			a[i*d+j] = t / l
		}
		for i := 0; i < j; i++ {
			a[i*d+j] = 0
		}
	}
	return true
}

// forward solves L z = b.
func forward(l []float64, d int, b []float64) []float64 {
	z := make([]float64, d)
	for i := 0; i < d; i++ {
		t := b[i]
		for k := 0; k < i; k++ {
			t -= l[i*d+k] * z[k]
		}
		z[i] = t / l[i*d+i]
	}
	return z
}

// solve solves (L Lᵀ) x = b.
func solve(l []float64, d int, b []float64) []float64 {
	z := forward(l, d, b)
	x := make([]float64, d)
	for i := d - 1; i >= 0; i-- {
		t := z[i]
		for k := i + 1; k < d; k++ {
			t -= l[k*d+i] * x[k]
		}
		x[i] = t / l[i*d+i]
	}
	return x
}

// Record is one observation as saved with a policy (State, Restore).
type Record struct {
	Plan    Plan    `json:"plan"`
	Valid   bool    `json:"valid"`
	Reward  float64 `json:"reward,omitempty"`
	Seconds float64 `json:"seconds,omitempty"`
}

// State is the model's observations in the order they came, for a
// checkpoint: a resumed run's model is the one it stopped with.
func (m *Model) State() []Record {
	out := make([]Record, len(m.obs))
	for i, o := range m.obs {
		out[i] = Record{Plan: o.plan, Valid: o.valid, Reward: o.reward, Seconds: o.seconds}
	}
	return out
}

// Restore makes a model of saved observations.
func Restore(recs []Record) (*Model, error) {
	m := New()
	for i, r := range recs {
		if len(r.Plan.Choices) == 0 {
			return nil, fmt.Errorf("screen: observation %d has no choices", i)
		}
		m.Observe(r.Plan, r.Valid, r.Reward, r.Seconds)
	}
	return m, nil
}
