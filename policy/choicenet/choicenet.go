// Package choicenet is the neural part of the embedded recipe policy: a small
// autoregressive policy over a sequence of categorical decisions, trained with
// PPO on GoMLX's pure-Go backend (simplego; no C library).
//
// A grammar (package recipe) walks its decisions one at a time and, at each
// step, asks Choose for one of NumOptions options of decision Decision. The
// sequence log-probability of a plan is the sum of its steps' log-probabilities,
// exactly as for a language model's tokens, so PPO's ratio, entropy and KL
// behave as they will for the LLM policy.
//
// # Architecture, and why
//
// Each step is scored by one MLP on a fixed-width input:
//
//	x = features ⊕ enc(parentReward) ⊕ hasParent ⊕ onehot(decision) ⊕ mean E[history pairs] ⊕ mean E[parent pairs]
//	h1 = tanh(x W1 + b1); h2 = tanh(h1 W2 + b2)
//	logits = h2 W3 + b3 + B[decision]        (MaxOptions wide, masked to numOptions)
//
// where E is a learned embedding of (decision, chosen) pairs. Why this shape:
//   - The grammar's decisions are few (tens) and short (≈15 steps), so a
//     recurrent or attention encoder buys nothing a bag of pair embeddings does
//     not: what matters is which choices were made, and the order is implied
//     by the grammar. A mean keeps the input width fixed and the Go forward
//     pass cheap (Choose runs per step on the actors' hot path).
//   - onehot(decision) through W1 is an embedding of the decision id of width
//     Hidden; it lets the hidden layers interpret the shared MaxOptions-wide
//     head differently per decision.
//   - B[decision] is a per-decision bias on the logits: the unconditional
//     preference of each decision is one table entry, learnt fast; the MLP only
//     has to learn how task features, earlier choices and the parent plan shift
//     it. W3 and B start at zero, so a fresh net is uniform over valid options.
//   - The parent plan (improve prompts) is a second bag of the same pair
//     embeddings, with its reward squashed by sign(r)·log(1+|r|) because
//     rewards span −10 (failures) to scores near 1.
//   - tanh keeps the network smooth, so gradients can be checked by finite
//     differences and PPO ratios do not jump at kinks.
//
// # Which distribution PPO uses
//
// The actors sample from the tempered distribution softmax(logits/T) and
// record its log-probability (Choose's logProb). That tempered distribution
// is the behaviour policy, so Update re-scores every step at its example's
// Temperature: ratio = exp(log π_θ,T(a) − log π_old,T(a)), and the entropy
// bonus and KL penalty are taken on the same tempered distributions. At T=1
// this is the plain policy.
//
// # Arithmetic
//
// Everything is float64, in the Go forward pass and in the GoMLX graph, so the
// two agree to 1e-9 (tests check it). Invalid options get a logit of −1e30
// (finite), whose exp underflows to exactly 0: no −Inf or NaN arithmetic.
package choicenet

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
)

// Config sizes the net and sets PPO's hyperparameters.
type Config struct {
	NumFeatures  int // task feature vector length (may be 0)
	NumDecisions int // decision ids are 0..NumDecisions-1
	MaxOptions   int // the widest decision; each step has 1..MaxOptions options
	Hidden       int // width of both hidden layers
	Embed        int // width of the (decision, chosen) pair embedding; 0 means 16

	LR          float64 // Adam step size
	Clip        float64 // PPO ratio clip ε (paper: 0.2)
	EntropyCoef float64 // entropy bonus (paper: 1e-3)
	KLCoef      float64 // penalty on approximate KL to the behaviour policy (paper: 1e-3)
	// PriorKLCoef weighs KL(π ‖ π_prior) to the hints alone (0: off), the
	// anchor against collapse; see Update.
	PriorKLCoef float64
	MaxGradNorm float64 // global gradient-norm clip before Adam; 0 turns it off

	Epochs    int // passes over the batch per Update
	MiniBatch int // trajectories per gradient step
	Seed      uint64

	// HintLogit is added to the logit of a step's hinted option (Step.Hint):
	// a fixed prior the net learns on top of, as a language model's
	// pretraining is the prior its RL starts from. 0 ignores hints.
	HintLogit float64
	// AvoidLogit is taken from the logit of each option a step lists in
	// Avoid: the prior's knowledge that an option fails in this context,
	// as a pretrained model rarely writes code that cannot run. The option
	// stays in the space: the net can learn it back. 0 ignores Avoid.
	AvoidLogit float64
}

// DefaultConfig returns the settings used by the recipe policy.
//
// Clip, EntropyCoef and KLCoef are the paper's. LR is 3e-3 instead of the
// paper's 1e-5: that value is for fine-tuning a 3B-parameter language model
// whose every weight touches every token; this net has ~10⁴ weights trained
// from scratch, where Adam's usual range is 1e-3–1e-2, and PPO's clip bounds
// how far one update moves the policy anyway. With 4 epochs of 4 minibatches
// per update, 3e-3 solves the toy bandits of the tests in 10–30 updates with
// clip fractions up to ~0.35 and approximate KL ~0.01 per update: fast enough
// for the few dozen updates a 4-minute run affords, without collapsing in one
// step. MaxGradNorm 0.5 is CleanRL's, a guard against stale samples whose
// ratios make single gradients large.
func DefaultConfig(numFeatures, numDecisions, maxOptions int) Config {
	return Config{
		NumFeatures:  numFeatures,
		NumDecisions: numDecisions,
		MaxOptions:   maxOptions,
		Hidden:       64,
		Embed:        16,
		LR:           3e-3,
		Clip:         0.2,
		EntropyCoef:  1e-3,
		KLCoef:       1e-3,
		MaxGradNorm:  0.5,
		Epochs:       4,
		MiniBatch:    32,
		Seed:         1,
	}
}

func (c Config) validate() error {
	switch {
	case c.NumFeatures < 0:
		return fmt.Errorf("choicenet: NumFeatures %d < 0", c.NumFeatures)
	case c.NumDecisions < 1:
		return fmt.Errorf("choicenet: NumDecisions %d < 1", c.NumDecisions)
	case c.MaxOptions < 1:
		return fmt.Errorf("choicenet: MaxOptions %d < 1", c.MaxOptions)
	case c.Hidden < 1:
		return fmt.Errorf("choicenet: Hidden %d < 1", c.Hidden)
	case c.Embed < 1:
		return fmt.Errorf("choicenet: Embed %d < 1", c.Embed)
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return fmt.Errorf("choicenet: LR %v must be positive and finite", c.LR)
	case !(c.Clip > 0) || math.IsInf(c.Clip, 0):
		return fmt.Errorf("choicenet: Clip %v must be positive and finite", c.Clip)
	case !(c.EntropyCoef >= 0) || math.IsInf(c.EntropyCoef, 0):
		return fmt.Errorf("choicenet: EntropyCoef %v must be ≥ 0 and finite", c.EntropyCoef)
	case !(c.KLCoef >= 0) || math.IsInf(c.KLCoef, 0):
		return fmt.Errorf("choicenet: KLCoef %v must be ≥ 0 and finite", c.KLCoef)
	case !(c.MaxGradNorm >= 0) || math.IsInf(c.MaxGradNorm, 0):
		return fmt.Errorf("choicenet: MaxGradNorm %v must be ≥ 0 and finite", c.MaxGradNorm)
	case c.Epochs < 1:
		return fmt.Errorf("choicenet: Epochs %d < 1", c.Epochs)
	case c.MiniBatch < 1:
		return fmt.Errorf("choicenet: MiniBatch %d < 1", c.MiniBatch)
	}
	if int64(c.NumDecisions)*int64(c.MaxOptions) > 1<<20 {
		return fmt.Errorf("choicenet: NumDecisions×MaxOptions = %d is too large", c.NumDecisions*c.MaxOptions)
	}
	return nil
}

// Step is one decision of a plan: which decision, how many options it had,
// and which was chosen. Hint, when not 0, is 1 + the option a prior
// prefers at this step (Config.HintLogit); it is part of the step because
// the options, and so the hinted index, may depend on earlier choices.
type Step struct {
	Decision, NumOptions, Chosen int
	Hint                         int `json:",omitempty"`
	// Avoid lists options (0-based) the prior expects to fail here
	// (Config.AvoidLogit).
	Avoid []int `json:",omitempty"`
	// Floor, in [0, 1], is the share of this step's distribution that stays
	// the prior's (the hints and avoided options alone, at the same
	// temperature) however the net learns: the step is drawn from
	// (1−Floor)·π_θ + Floor·π_prior, and its log-probability, in Choose,
	// LogProbs and Update alike, is that mixture's. It keeps a decision the
	// learner must not stop exploring (which part of a plan to change, say)
	// from collapsing onto what paid in the first few batches, without
	// freezing it. 0 is the plain policy.
	Floor float64 `json:",omitempty"`
}

// Context is what every step of one plan is conditioned on.
type Context struct {
	Features []float64 // length NumFeatures, finite
	// Parent holds the previous plan's steps for improve prompts; empty when
	// solving from scratch.
	Parent       []Step
	ParentReward float64
}

// Net is the policy network with its Adam state. Choose and LogProbs may be
// called from many goroutines at once; Update, Load must not overlap them.
type Net struct {
	cfg     Config
	version int
	params  [numParams][]float64
	adamM   [numParams][]float64
	adamV   [numParams][]float64
	adamT   int // Adam steps taken, for bias correction

	mu      sync.Mutex // guards trainer (built lazily, rebuilt after Load)
	trainer *trainer
}

// Parameter tensors, in graph input order.
const (
	pEmb  = iota // [NumDecisions*MaxOptions, Embed] pair embedding
	pW1          // [inWidth, Hidden]
	pB1          // [Hidden]
	pW2          // [Hidden, Hidden]
	pB2          // [Hidden]
	pW3          // [Hidden, MaxOptions]
	pB3          // [MaxOptions]
	pDecB        // [NumDecisions, MaxOptions] per-decision logit bias
	numParams
)

var paramNames = [numParams]string{"pair_embedding", "w1", "b1", "w2", "b2", "w3", "b3", "decision_bias"}

// maskedLogit is the logit given to options beyond numOptions. Finite, so no
// Inf−Inf; exp(maskedLogit − max) underflows to exactly 0.
const maskedLogit = -1e30

// denseWidth is the width of the non-embedded part of x before the decision
// one-hot: features, encoded parent reward, has-parent flag.
func (c Config) denseWidth() int { return c.NumFeatures + 2 }

// inWidth is the MLP's input width.
func (c Config) inWidth() int { return c.denseWidth() + c.NumDecisions + 2*c.Embed }

func (c Config) numPairs() int { return c.NumDecisions * c.MaxOptions }

// paramShape gives each parameter tensor's dimensions.
func (c Config) paramShape(i int) []int {
	switch i {
	case pEmb:
		return []int{c.numPairs(), c.Embed}
	case pW1:
		return []int{c.inWidth(), c.Hidden}
	case pB1, pB2:
		return []int{c.Hidden}
	case pW2:
		return []int{c.Hidden, c.Hidden}
	case pW3:
		return []int{c.Hidden, c.MaxOptions}
	case pB3:
		return []int{c.MaxOptions}
	case pDecB:
		return []int{c.NumDecisions, c.MaxOptions}
	}
	panic("choicenet: unknown parameter index")
}

func prod(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}

// New builds a net with freshly initialised weights. Hidden, Embed, LR,
// Clip, Epochs and MiniBatch left at zero take DefaultConfig's values (zero is
// never meaningful for them); EntropyCoef, KLCoef and MaxGradNorm are taken as
// given, since zero turns them off.
func New(cfg Config) (*Net, error) {
	d := DefaultConfig(cfg.NumFeatures, cfg.NumDecisions, cfg.MaxOptions)
	if cfg.Hidden == 0 {
		cfg.Hidden = d.Hidden
	}
	if cfg.Embed == 0 {
		cfg.Embed = d.Embed
	}
	if cfg.LR == 0 {
		cfg.LR = d.LR
	}
	if cfg.Clip == 0 {
		cfg.Clip = d.Clip
	}
	if cfg.Epochs == 0 {
		cfg.Epochs = d.Epochs
	}
	if cfg.MiniBatch == 0 {
		cfg.MiniBatch = d.MiniBatch
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	n := &Net{cfg: cfg}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x63686f6963656e74)) // "choicent"
	for i := range numParams {
		dims := cfg.paramShape(i)
		size := prod(dims)
		n.params[i] = make([]float64, size)
		n.adamM[i] = make([]float64, size)
		n.adamV[i] = make([]float64, size)
		// Glorot-like scale for weight matrices; zero biases; zero head and
		// decision bias so the initial policy is exactly uniform.
		var std float64
		switch i {
		case pEmb:
			std = 1 / math.Sqrt(float64(cfg.Embed))
		case pW1, pW2:
			std = 1 / math.Sqrt(float64(dims[0]))
		}
		if std > 0 {
			for j := range n.params[i] {
				n.params[i][j] = rng.NormFloat64() * std
			}
		}
	}
	return n, nil
}

// Config returns the net's configuration (with defaults filled in).
func (n *Net) Config() Config { return n.cfg }

// Version counts completed Updates.
func (n *Net) Version() int { return n.version }

// ErrBadInput is wrapped by every validation error, so callers can tell bad
// input from a failed computation.
var ErrBadInput = errors.New("choicenet: bad input")

func (n *Net) checkStep(s Step) error {
	if s.Decision < 0 || s.Decision >= n.cfg.NumDecisions {
		return fmt.Errorf("%w: decision %d out of range [0,%d)", ErrBadInput, s.Decision, n.cfg.NumDecisions)
	}
	if s.NumOptions < 1 || s.NumOptions > n.cfg.MaxOptions {
		return fmt.Errorf("%w: numOptions %d out of range [1,%d] at decision %d", ErrBadInput, s.NumOptions, n.cfg.MaxOptions, s.Decision)
	}
	if s.Chosen < 0 || s.Chosen >= s.NumOptions {
		return fmt.Errorf("%w: chosen %d out of range [0,%d) at decision %d", ErrBadInput, s.Chosen, s.NumOptions, s.Decision)
	}
	if s.Hint < 0 || s.Hint > s.NumOptions {
		return fmt.Errorf("%w: hint %d out of range [0,%d] at decision %d", ErrBadInput, s.Hint, s.NumOptions, s.Decision)
	}
	for _, a := range s.Avoid {
		if a < 0 || a >= s.NumOptions {
			return fmt.Errorf("%w: avoided option %d out of range [0,%d) at decision %d", ErrBadInput, a, s.NumOptions, s.Decision)
		}
	}
	if !(s.Floor >= 0 && s.Floor <= 1) {
		return fmt.Errorf("%w: floor %v out of range [0,1] at decision %d", ErrBadInput, s.Floor, s.Decision)
	}
	return nil
}

// addHint adds the prior's logits to step s: HintLogit to the hinted
// option, minus AvoidLogit to each avoided one.
func (n *Net) addHint(z []float64, s Step) {
	priorLogits(z, s, n.cfg)
}

// priorLogits adds step s's prior (hint and avoided options) to z, which
// has one entry per option.
func priorLogits(z []float64, s Step, c Config) {
	if s.Hint > 0 {
		z[s.Hint-1] += c.HintLogit
	}
	for _, a := range s.Avoid {
		z[a] -= c.AvoidLogit
	}
}

// mixFloor turns lp, step s's tempered log-probabilities under the net,
// into those of the mixture (1−s.Floor)·π_θ + s.Floor·π_prior, in place.
func mixFloor(lp []float64, s Step, temperature float64, c Config) {
	if s.Floor == 0 {
		return
	}
	z0 := make([]float64, len(lp))
	priorLogits(z0, s, c)
	logSoftmax(z0, len(lp), temperature)
	a, b := math.Log1p(-s.Floor), math.Log(s.Floor)
	for k := range lp {
		x, y := a+lp[k], b+z0[k]
		m := max(x, y)
		lp[k] = m + math.Log(math.Exp(x-m)+math.Exp(y-m))
	}
}

// CheckContext reports whether ctx fits the net's configuration.
func (n *Net) CheckContext(ctx Context) error {
	if len(ctx.Features) != n.cfg.NumFeatures {
		return fmt.Errorf("%w: %d features, want %d", ErrBadInput, len(ctx.Features), n.cfg.NumFeatures)
	}
	for i, f := range ctx.Features {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%w: feature %d is %v", ErrBadInput, i, f)
		}
	}
	if math.IsNaN(ctx.ParentReward) || math.IsInf(ctx.ParentReward, 0) {
		return fmt.Errorf("%w: parent reward is %v", ErrBadInput, ctx.ParentReward)
	}
	for i, s := range ctx.Parent {
		if err := n.checkStep(s); err != nil {
			return fmt.Errorf("parent step %d: %w", i, err)
		}
	}
	return nil
}

// CheckSteps reports whether every step of a plan fits the configuration.
func (n *Net) CheckSteps(steps []Step) error {
	for i, s := range steps {
		if err := n.checkStep(s); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
	}
	return nil
}

// encodeReward squashes a reward spanning −10..≈1 (and, for negated
// lower-is-better scores, possibly large magnitudes) into a tanh-friendly range.
func encodeReward(r float64) float64 {
	if r < 0 {
		return -math.Log1p(-r)
	}
	return math.Log1p(r)
}

// pairIndex is the row of (decision, chosen) in the pair embedding.
func (n *Net) pairIndex(s Step) int { return s.Decision*n.cfg.MaxOptions + s.Chosen }

// forward holds the per-context part of the input, computed once per plan.
type ctxInput struct {
	dense  []float64 // features, enc(parentReward), hasParent
	parent []float64 // mean pair embedding of the parent plan (zeros if none)
}

func (n *Net) contextInput(ctx Context) ctxInput {
	c := n.cfg
	ci := ctxInput{dense: make([]float64, c.denseWidth()), parent: make([]float64, c.Embed)}
	copy(ci.dense, ctx.Features)
	if len(ctx.Parent) > 0 {
		ci.dense[c.NumFeatures] = encodeReward(ctx.ParentReward)
		ci.dense[c.NumFeatures+1] = 1
		n.meanEmbedding(ci.parent, ctx.Parent)
	}
	return ci
}

// meanEmbedding writes the mean pair embedding of steps into dst (zeros when
// steps is empty).
func (n *Net) meanEmbedding(dst []float64, steps []Step) {
	clear(dst)
	if len(steps) == 0 {
		return
	}
	e := n.cfg.Embed
	emb := n.params[pEmb]
	for _, s := range steps {
		row := emb[n.pairIndex(s)*e : (n.pairIndex(s)+1)*e]
		for j := range dst {
			dst[j] += row[j]
		}
	}
	inv := 1 / float64(len(steps))
	for j := range dst {
		dst[j] *= inv
	}
}

// logits computes the raw (untempered) logits of one step into out[:MaxOptions].
// hist is the mean embedding of the plan's earlier steps.
func (n *Net) logits(out []float64, ci ctxInput, hist []float64, decision int) {
	c := n.cfg
	h := c.Hidden
	w1, b1, w2, b2, w3, b3 := n.params[pW1], n.params[pB1], n.params[pW2], n.params[pB2], n.params[pW3], n.params[pB3]
	h1 := make([]float64, h)
	copy(h1, b1)
	row := 0
	addRows := func(xs []float64) {
		for _, x := range xs {
			if x != 0 {
				wr := w1[row*h : (row+1)*h]
				for j := range h1 {
					h1[j] += x * wr[j]
				}
			}
			row++
		}
	}
	addRows(ci.dense)
	// One-hot decision: a single row of W1.
	wr := w1[(row+decision)*h : (row+decision+1)*h]
	for j := range h1 {
		h1[j] += wr[j]
	}
	row += c.NumDecisions
	addRows(hist)
	addRows(ci.parent)
	for j := range h1 {
		h1[j] = math.Tanh(h1[j])
	}
	h2 := make([]float64, h)
	copy(h2, b2)
	for i, x := range h1 {
		wr := w2[i*h : (i+1)*h]
		for j := range h2 {
			h2[j] += x * wr[j]
		}
	}
	for j := range h2 {
		h2[j] = math.Tanh(h2[j])
	}
	m := c.MaxOptions
	copy(out[:m], b3)
	for i, x := range h2 {
		wr := w3[i*m : (i+1)*m]
		for j := range m {
			out[j] += x * wr[j]
		}
	}
	db := n.params[pDecB][decision*m : (decision+1)*m]
	for j := range m {
		out[j] += db[j]
	}
}

// logSoftmax turns raw logits into tempered log-probabilities over the first
// numOptions entries, in place; entries beyond are left untouched.
func logSoftmax(z []float64, numOptions int, temperature float64) {
	inv := 1 / temperature
	mx := math.Inf(-1)
	for k := range numOptions {
		z[k] *= inv
		mx = max(mx, z[k])
	}
	s := 0.0
	for k := range numOptions {
		s += math.Exp(z[k] - mx)
	}
	lse := mx + math.Log(s)
	for k := range numOptions {
		z[k] -= lse
	}
}

// Probs returns the tempered probabilities of a step's options (length
// numOptions; they sum to 1). temperature must be positive.
func (n *Net) Probs(ctx Context, history []Step, decision, numOptions int, temperature float64) ([]float64, error) {
	return n.StepProbs(ctx, history, Step{Decision: decision, NumOptions: numOptions}, temperature)
}

// StepProbs is Probs for the step next (its Decision, NumOptions, Hint,
// Avoid and Floor).
func (n *Net) StepProbs(ctx Context, history []Step, next Step, temperature float64) ([]float64, error) {
	next.Chosen = 0
	lp, err := n.stepLogProbs(ctx, history, next, temperature)
	if err != nil {
		return nil, err
	}
	for k := range lp {
		lp[k] = math.Exp(lp[k])
	}
	return lp, nil
}

func (n *Net) stepLogProbs(ctx Context, history []Step, next Step, temperature float64) ([]float64, error) {
	if err := n.CheckContext(ctx); err != nil {
		return nil, err
	}
	if err := n.CheckSteps(history); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if err := n.checkStep(next); err != nil {
		return nil, err
	}
	if !(temperature > 0) || math.IsInf(temperature, 0) {
		return nil, fmt.Errorf("%w: temperature %v must be positive and finite", ErrBadInput, temperature)
	}
	ci := n.contextInput(ctx)
	hist := make([]float64, n.cfg.Embed)
	n.meanEmbedding(hist, history)
	z := make([]float64, n.cfg.MaxOptions)
	n.logits(z, ci, hist, next.Decision)
	n.addHint(z, next)
	logSoftmax(z, next.NumOptions, temperature)
	mixFloor(z[:next.NumOptions], next, temperature, n.cfg)
	return z[:next.NumOptions], nil
}

// Choose samples an option for the next step of a plan, given the steps
// chosen so far (history), from softmax(logits/temperature) restricted to the
// first numOptions options, and returns it with its log-probability under that
// tempered distribution (the behaviour log-probability PPO needs).
//
// temperature ≤ 0 means greedy: the most probable option (lowest index on
// ties) with logProb 0, the log-probability of a deterministic choice. Such
// steps cannot be trained on (Update rejects Temperature ≤ 0).
//
// Bad input — a context or history that fails CheckContext/CheckSteps,
// decision or numOptions out of range, a NaN temperature or a nil rng when
// sampling — returns (-1, NaN) and never panics.
func (n *Net) Choose(ctx Context, history []Step, decision, numOptions int, temperature float64, rng *rand.Rand) (chosen int, logProb float64) {
	return n.ChooseStep(ctx, history, Step{Decision: decision, NumOptions: numOptions}, temperature, rng)
}

// ChooseStep is Choose for the step next (its Decision, NumOptions, Hint,
// Avoid and Floor; Chosen is ignored).
func (n *Net) ChooseStep(ctx Context, history []Step, next Step, temperature float64, rng *rand.Rand) (chosen int, logProb float64) {
	next.Chosen = 0
	greedy := temperature <= 0
	t := temperature
	if greedy {
		t = 1
	}
	if !greedy && rng == nil {
		return -1, math.NaN()
	}
	lp, err := n.stepLogProbs(ctx, history, next, t)
	if err != nil {
		return -1, math.NaN()
	}
	if greedy {
		best := 0
		for k := range lp {
			if lp[k] > lp[best] {
				best = k
			}
		}
		return best, 0
	}
	// Inverse CDF on one uniform draw: deterministic for a seeded rng.
	u := rng.Float64()
	acc := 0.0
	for k := range lp {
		acc += math.Exp(lp[k])
		if u < acc {
			return k, lp[k]
		}
	}
	// Rounding left u ≥ Σp: take the last option with non-zero probability.
	for k := len(lp) - 1; k >= 0; k-- {
		if lp[k] > math.Inf(-1) && math.Exp(lp[k]) > 0 {
			return k, lp[k]
		}
	}
	return len(lp) - 1, lp[len(lp)-1]
}

// LogProbs re-scores a whole plan under the current weights: the tempered
// log-probability of each step's chosen option given the steps before it.
// Entries are NaN for steps that are bad input (and all are NaN if ctx is bad
// or temperature is not positive and finite), so a bad plan cannot pass for a
// likely one. Greedy (temperature ≤ 0) plans have no trainable log-probability.
func (n *Net) LogProbs(ctx Context, steps []Step, temperature float64) []float64 {
	out := make([]float64, len(steps))
	if n.CheckContext(ctx) != nil || !(temperature > 0) || math.IsInf(temperature, 0) {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	ci := n.contextInput(ctx)
	hist := make([]float64, n.cfg.Embed)
	sum := make([]float64, n.cfg.Embed)
	z := make([]float64, n.cfg.MaxOptions)
	bad := false
	for i, s := range steps {
		if bad || n.checkStep(s) != nil {
			// Later steps are conditioned on a bad one: NaN them too.
			bad = true
			out[i] = math.NaN()
			continue
		}
		if i > 0 {
			inv := 1 / float64(i)
			for j := range hist {
				hist[j] = sum[j] * inv
			}
		}
		n.logits(z, ci, hist, s.Decision)
		n.addHint(z, s)
		logSoftmax(z, s.NumOptions, temperature)
		mixFloor(z[:s.NumOptions], s, temperature, n.cfg)
		out[i] = z[s.Chosen]
		e := n.cfg.Embed
		row := n.params[pEmb][n.pairIndex(s)*e : (n.pairIndex(s)+1)*e]
		for j := range sum {
			sum[j] += row[j]
		}
	}
	return out
}
