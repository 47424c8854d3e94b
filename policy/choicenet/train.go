package choicenet

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	//lint:ignore ST1001 the graph DSL reads as math with a dot import
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads as math with a dot import
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// Example is one sampled plan with its credit.
type Example struct {
	Ctx   Context
	Steps []Step
	// OldLogProbs are the behaviour policy's tempered log-probabilities of
	// each step, as Choose returned them (possibly several versions stale).
	OldLogProbs []float64
	// Advantage is the plan's advantage, already duration-weighted and
	// baselined by the learner; it is broadcast to every step, unnormalised.
	Advantage float64
	// StepAdvantages, when set, is each step's own advantage instead (credit
	// per decision: rl.Config.DecisionCredit); one per step.
	StepAdvantages []float64
	// Temperature the plan was sampled at; the steps are re-scored at it.
	Temperature float64
}

// Stats summarises one Update: means over every step of every minibatch
// gradient step (all epochs), each minibatch weighted by its number of steps.
// Loss is the full minimised objective; Entropy is of the tempered
// distributions; ApproxKL is the k3 estimator E[r − 1 − log r] of
// KL(behaviour ‖ current); ClipFrac the share of steps with |r − 1| > Clip.
type Stats struct {
	Loss, Entropy, ApproxKL, ClipFrac float64
	// PriorKL is KL(π_θ ‖ π_prior) per step, π_prior the hints and avoided options alone.
	PriorKL float64
}

// Adam's constants (Kingma & Ba defaults).
const (
	adamBeta1 = 0.9
	adamBeta2 = 0.999
	adamEps   = 1e-8
)

// maxLogRatio bounds log(new/old) before exp: a sample this stale carries no
// usable signal, and exp(±20) keeps every product finite in float64.
const maxLogRatio = 20

// Update takes one PPO step on batch: Epochs passes over shuffled minibatches
// of MiniBatch plans, each a gradient step of Adam on
//
//	L = mean over steps [ max(−A·r, −A·clip(r, 1−ε, 1+ε)) − c_ent·H(π_θ,T) + c_kl·(r − 1 − log r) + c_prior·KL(π_θ,T ‖ π_prior,T) ]
//
// with r = exp(log π_θ,T(a) − OldLogProb), the mean taken over the steps of
// the minibatch (token-level, as for a language model). A step with a Floor f
// takes r from the mixture it was drawn from, (1−f)·π_θ,T + f·π_prior,T;
// its entropy and anchor terms stay π_θ's. It bumps Version on
// success. A cancelled ctx or a failed computation leaves the net unchanged.
// A bad batch returns an error wrapping ErrBadInput that names the example.
func (n *Net) Update(ctx context.Context, batch []Example) (Stats, error) {
	if err := n.CheckBatch(batch); err != nil {
		return Stats{}, err
	}
	tr, err := n.getTrainer()
	if err != nil {
		return Stats{}, err
	}
	rows := make([]exampleRows, len(batch))
	for i, ex := range batch {
		rows[i] = n.encodeExample(ex)
	}

	// Work on copies so a cancelled or failed update changes nothing.
	var params, m, v [numParams][]float64
	for i := range numParams {
		params[i] = append([]float64(nil), n.params[i]...)
		m[i] = append([]float64(nil), n.adamM[i]...)
		v[i] = append([]float64(nil), n.adamV[i]...)
	}
	adamT := n.adamT

	// The shuffle depends only on (Seed, Version): a net restored by Load
	// makes exactly the same next Update.
	rng := rand.New(rand.NewPCG(n.cfg.Seed, uint64(n.version)+1))
	order := make([]int, len(batch))
	for i := range order {
		order[i] = i
	}
	var sum Stats
	totalSteps := 0
	for range n.cfg.Epochs {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for start := 0; start < len(order); start += n.cfg.MiniBatch {
			if err := ctx.Err(); err != nil {
				return Stats{}, fmt.Errorf("choicenet: update cancelled: %w", err)
			}
			mb := order[start:min(start+n.cfg.MiniBatch, len(order))]
			in := n.assemble(rows, mb)
			out, err := tr.run(params, in)
			if err != nil {
				return Stats{}, err
			}
			for i := range numParams {
				if !allFinite(out.grads[i]) {
					return Stats{}, fmt.Errorf("choicenet: non-finite gradient of %s", paramNames[i])
				}
			}
			if n.cfg.MaxGradNorm > 0 {
				clipGlobalNorm(&out.grads, n.cfg.MaxGradNorm)
			}
			adamT++
			adamStep(&params, &m, &v, &out.grads, n.cfg.LR, adamT)
			w := float64(in.real)
			sum.Loss += w * out.loss
			sum.Entropy += w * out.entropy
			sum.ApproxKL += w * out.approxKL
			sum.ClipFrac += w * out.clipFrac
			sum.PriorKL += w * out.priorKL
			totalSteps += in.real
		}
	}
	n.params, n.adamM, n.adamV, n.adamT = params, m, v, adamT
	n.version++
	t := float64(totalSteps)
	return Stats{Loss: sum.Loss / t, Entropy: sum.Entropy / t, ApproxKL: sum.ApproxKL / t, ClipFrac: sum.ClipFrac / t, PriorKL: sum.PriorKL / t}, nil
}

// CheckBatch validates a batch for Update; the error names the first bad example.
func (n *Net) CheckBatch(batch []Example) error {
	if len(batch) == 0 {
		return fmt.Errorf("%w: empty batch", ErrBadInput)
	}
	for i, ex := range batch {
		if err := n.checkExample(ex); err != nil {
			return fmt.Errorf("example %d: %w", i, err)
		}
	}
	return nil
}

func (n *Net) checkExample(ex Example) error {
	if err := n.CheckContext(ex.Ctx); err != nil {
		return err
	}
	if len(ex.Steps) == 0 {
		return fmt.Errorf("%w: no steps", ErrBadInput)
	}
	if err := n.CheckSteps(ex.Steps); err != nil {
		return err
	}
	if len(ex.OldLogProbs) != len(ex.Steps) {
		return fmt.Errorf("%w: %d old log-probs for %d steps", ErrBadInput, len(ex.OldLogProbs), len(ex.Steps))
	}
	for i, lp := range ex.OldLogProbs {
		// A log-probability is ≤ 0; allow rounding noise above.
		if math.IsNaN(lp) || math.IsInf(lp, 0) || lp > 1e-9 {
			return fmt.Errorf("%w: old log-prob %v of step %d is not a finite log-probability", ErrBadInput, lp, i)
		}
	}
	if math.IsNaN(ex.Advantage) || math.IsInf(ex.Advantage, 0) {
		return fmt.Errorf("%w: advantage %v", ErrBadInput, ex.Advantage)
	}
	if ex.StepAdvantages != nil && len(ex.StepAdvantages) != len(ex.Steps) {
		return fmt.Errorf("%w: %d step advantages for %d steps", ErrBadInput, len(ex.StepAdvantages), len(ex.Steps))
	}
	if !allFinite(ex.StepAdvantages) {
		return fmt.Errorf("%w: step advantages %v are not all finite", ErrBadInput, ex.StepAdvantages)
	}
	if !(ex.Temperature > 0) || math.IsInf(ex.Temperature, 0) {
		return fmt.Errorf("%w: temperature %v must be positive and finite (greedy plans cannot be trained on)", ErrBadInput, ex.Temperature)
	}
	return nil
}

func allFinite(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func clipGlobalNorm(g *[numParams][]float64, maxNorm float64) {
	ss := 0.0
	for _, gi := range g {
		for _, x := range gi {
			ss += x * x
		}
	}
	norm := math.Sqrt(ss)
	if norm <= maxNorm {
		return
	}
	scale := maxNorm / norm
	for _, gi := range g {
		for j := range gi {
			gi[j] *= scale
		}
	}
}

func adamStep(p, m, v, g *[numParams][]float64, lr float64, t int) {
	c1 := 1 - math.Pow(adamBeta1, float64(t))
	c2 := 1 - math.Pow(adamBeta2, float64(t))
	for i := range numParams {
		pi, mi, vi, gi := p[i], m[i], v[i], g[i]
		for j := range pi {
			mi[j] = adamBeta1*mi[j] + (1-adamBeta1)*gi[j]
			vi[j] = adamBeta2*vi[j] + (1-adamBeta2)*gi[j]*gi[j]
			pi[j] -= lr * (mi[j] / c1) / (math.Sqrt(vi[j]/c2) + adamEps)
		}
	}
}

// exampleRows is one plan encoded as graph rows, one per step.
type exampleRows struct {
	steps    int
	dense    []float64 // steps × denseWidth
	decision []int
	hist     [][]int // per step: pair indices of the earlier steps
	parent   []int   // pair indices of the parent plan
	numOpts  []int
	chosen   []int
	priorOf  []Step // each step, for its prior logits (hint, avoided options) and floor
	invTemp  float64
	oldLP    []float64
	adv      []float64 // per step
}

func (n *Net) encodeExample(ex Example) exampleRows {
	ci := n.contextInput(ex.Ctx)
	r := exampleRows{
		steps:   len(ex.Steps),
		dense:   ci.dense,
		invTemp: 1 / ex.Temperature,
		oldLP:   ex.OldLogProbs,
		adv:     ex.StepAdvantages,
	}
	if r.adv == nil {
		r.adv = make([]float64, len(ex.Steps))
		for i := range r.adv {
			r.adv[i] = ex.Advantage
		}
	}
	for _, s := range ex.Ctx.Parent {
		r.parent = append(r.parent, n.pairIndex(s))
	}
	var prefix []int
	for _, s := range ex.Steps {
		r.decision = append(r.decision, s.Decision)
		r.numOpts = append(r.numOpts, s.NumOptions)
		r.chosen = append(r.chosen, s.Chosen)
		r.priorOf = append(r.priorOf, s)
		r.hist = append(r.hist, prefix)
		prefix = append(prefix[:len(prefix):len(prefix)], n.pairIndex(s))
	}
	return r
}

// graphInput is a minibatch as dense row-major matrices, padded to a bucket
// size so that few distinct shapes (and compiled graphs) ever exist.
type graphInput struct {
	rows, real                              int
	dense, decOH, hist, par, mask, chosenOH []float64
	prior                                   []float64
	invTemp, oldLP, adv, rowWeight, floor   []float64
}

// bucket rounds a row count up so the graph cache sees few shapes: powers of
// two up to 1024, then multiples of 1024.
func bucket(n int) int {
	if n > 1024 {
		return (n + 1023) / 1024 * 1024
	}
	b := 16
	for b < n {
		b *= 2
	}
	return b
}

func (n *Net) assemble(all []exampleRows, idx []int) graphInput {
	c := n.cfg
	real := 0
	for _, i := range idx {
		real += all[i].steps
	}
	rows := bucket(real)
	dw, nd, np, mo := c.denseWidth(), c.NumDecisions, c.numPairs(), c.MaxOptions
	in := graphInput{
		rows: rows, real: real,
		dense: make([]float64, rows*dw), decOH: make([]float64, rows*nd),
		hist: make([]float64, rows*np), par: make([]float64, rows*np),
		mask: make([]float64, rows*mo), chosenOH: make([]float64, rows*mo), prior: make([]float64, rows*mo),
		invTemp: make([]float64, rows), oldLP: make([]float64, rows),
		adv: make([]float64, rows), rowWeight: make([]float64, rows), floor: make([]float64, rows),
	}
	w := 1 / float64(real)
	r := 0
	for _, i := range idx {
		ex := all[i]
		var parRow []float64
		if len(ex.parent) > 0 {
			parRow = make([]float64, np)
			inv := 1 / float64(len(ex.parent))
			for _, p := range ex.parent {
				parRow[p] += inv
			}
		}
		for s := range ex.steps {
			copy(in.dense[r*dw:(r+1)*dw], ex.dense)
			in.decOH[r*nd+ex.decision[s]] = 1
			if h := ex.hist[s]; len(h) > 0 {
				inv := 1 / float64(len(h))
				for _, p := range h {
					in.hist[r*np+p] += inv
				}
			}
			if parRow != nil {
				copy(in.par[r*np:(r+1)*np], parRow)
			}
			for k := range ex.numOpts[s] {
				in.mask[r*mo+k] = 1
			}
			in.chosenOH[r*mo+ex.chosen[s]] = 1
			priorLogits(in.prior[r*mo:(r+1)*mo], ex.priorOf[s], c)
			in.floor[r] = ex.priorOf[s].Floor
			in.invTemp[r] = ex.invTemp
			in.oldLP[r] = ex.oldLP[s]
			in.adv[r] = ex.adv[s]
			in.rowWeight[r] = w
			r++
		}
	}
	// Padding rows: one valid option, chosen, zero weight — finite and inert.
	for ; r < rows; r++ {
		in.decOH[r*nd] = 1
		in.mask[r*mo] = 1
		in.chosenOH[r*mo] = 1
		in.invTemp[r] = 1
	}
	return in
}

// trainer owns the compiled PPO loss-and-gradient graph.
type trainer struct {
	cfg  Config
	exec *Exec
}

type graphOutput struct {
	loss, pgLoss, entropy, approxKL, clipFrac, priorKL float64
	newLP                                              []float64 // per real row
	grads                                              [numParams][]float64
}

var backend = sync.OnceValues(func() (backends.Backend, error) {
	// ops_sequential: simplego v0.26 can deadlock when it runs graph nodes in
	// parallel and those nodes (DotGeneral) wait for workers from the same
	// pool — seen here on 2 cores. Sequential nodes still use the pool inside
	// each DotGeneral, from our goroutine, which cannot deadlock.
	b, err := simplego.New("ops_sequential")
	if err != nil {
		return nil, fmt.Errorf("choicenet: simplego backend: %w", err)
	}
	return b, nil
})

func (n *Net) getTrainer() (*trainer, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.trainer != nil && n.trainer.cfg == n.cfg {
		return n.trainer, nil
	}
	b, err := backend()
	if err != nil {
		return nil, err
	}
	tr := &trainer{cfg: n.cfg}
	ex, err := NewExec(b, tr.graph)
	if err != nil {
		return nil, fmt.Errorf("choicenet: building PPO graph: %w", err)
	}
	tr.exec = ex.SetMaxCache(-1) // bucket() keeps the shapes few
	n.trainer = tr
	return tr, nil
}

const numDataInputs = 12

// graph builds the PPO loss of one minibatch and its gradients with respect
// to the parameters. Inputs: the numParams parameters, then dense, decOH,
// hist, par, mask, chosenOH, invTemp, oldLP, adv, rowWeight, prior, floor.
//
// GoMLX's autodiff differentiates the PPO objective down to the logits (the
// part worth a machine check: log-softmax, masking, clipping, entropy, KL).
// Below the logits the MLP is backpropagated by hand with DotGeneral
// products: GoMLX v0.26 differentiates a matrix product by materialising an
// [i, j, k] broadcast and reducing it, which on simplego made one update of
// 128 plans × 15 steps cost 1.3 CPU-seconds instead of 0.26 (measured with
// BenchmarkUpdate128x15). The finite-difference test checks every
// parameter's gradient end to end.
func (tr *trainer) graph(inputs []*Node) []*Node {
	c := tr.cfg
	p := inputs[:numParams]
	d := inputs[numParams:]
	dense, decOH, hist, par, mask, chosenOH := d[0], d[1], d[2], d[3], d[4], d[5]
	invTemp, oldLP, adv, rowW, prior, floor := d[6], d[7], d[8], d[9], d[10], d[11]

	// Forward.
	x := Concatenate([]*Node{dense, decOH, matmul(hist, p[pEmb]), matmul(par, p[pEmb])}, -1)
	h1 := Tanh(Add(matmul(x, p[pW1]), InsertAxes(p[pB1], 0)))
	h2 := Tanh(Add(matmul(h1, p[pW2]), InsertAxes(p[pB2], 0)))
	// The hint prior is a constant input: it shifts the logits but adds no
	// term to their gradient with respect to the parameters.
	logits := Add(Add(Add(matmul(h2, p[pW3]), InsertAxes(p[pB3], 0)), matmul(decOH, p[pDecB])), prior)

	// Temper, then mask: (mask−1)·1e30 is 0 on valid options, −1e30 on the rest.
	z := Mul(logits, InsertAxes(invTemp, -1))
	z = Add(z, MulScalar(AddScalar(mask, -1), -maskedLogit))
	mx := StopGradient(ReduceAndKeep(z, ReduceMax, -1))
	lse := Add(mx, Log(ReduceAndKeep(Exp(Sub(z, mx)), ReduceSum, -1)))
	logp := Sub(z, lse)
	prob := Exp(logp)
	entropy := Neg(ReduceSum(Mul(mask, Mul(prob, logp)), -1))
	// The prior alone at the same temperature: the anchor's reference and
	// the floor's other component.
	z0 := Add(Mul(prior, InsertAxes(invTemp, -1)), MulScalar(AddScalar(mask, -1), -maskedLogit))
	mx0 := StopGradient(ReduceAndKeep(z0, ReduceMax, -1))
	logp0 := Sub(z0, Add(mx0, Log(ReduceAndKeep(Exp(Sub(z0, mx0)), ReduceSum, -1))))
	// The chosen option's log-probability under (1−f)·π_θ + f·π_prior,
	// written as log π_θ(a) + log(1 + f·(π_prior(a)/π_θ(a) − 1)) so that a
	// step without a floor (f = 0) is exactly log π_θ(a) with its plain
	// gradient. The ratio's exponent is clipped only where no real policy
	// goes (an option e^50 times likelier under the prior than the net).
	netLP := ReduceSum(Mul(chosenOH, logp), -1)
	priorLP := ReduceSum(Mul(chosenOH, logp0), -1)
	newLP := Add(netLP, Log(AddScalar(Mul(floor, AddScalar(Exp(ClipScalar(Sub(priorLP, netLP), -50, 50)), -1)), 1)))

	logRatio := ClipScalar(Sub(newLP, oldLP), -maxLogRatio, maxLogRatio)
	ratio := Exp(logRatio)
	pg := Max(
		Neg(Mul(adv, ratio)),
		Neg(Mul(adv, ClipScalar(ratio, 1-c.Clip, 1+c.Clip))))
	kl := Sub(AddScalar(ratio, -1), logRatio)
	// KL(π_θ ‖ π_prior) of the whole decision: the anchor that keeps a few
	// noisy updates from collapsing the policy (the optimum of A·log π −
	// c·KL is π ∝ π_prior·exp(A/c): learnt preferences scale the prior,
	// never erase it). Entropy and anchor are the net's own component's: a
	// floor adds prior mass at sampling, it does not excuse the net.
	priorKL := ReduceSum(Mul(mask, Mul(prob, Sub(logp, logp0))), -1)
	perStep := Add(Sub(pg, MulScalar(entropy, c.EntropyCoef)), MulScalar(kl, c.KLCoef))
	perStep = Add(perStep, MulScalar(priorKL, c.PriorKLCoef))

	mean := func(v *Node) *Node { return ReduceAllSum(Mul(rowW, v)) }
	loss := mean(perStep)
	clipped := ConvertDType(GreaterThan(Abs(AddScalar(ratio, -1)), Scalar(ratio.Graph(), dtypes.Float64, c.Clip)), dtypes.Float64)

	// Backward: autodiff to the logits, then by hand.
	var g [numParams]*Node
	dLogits := Gradient(loss, logits)[0]
	g[pB3] = ReduceSum(dLogits, 0)
	g[pW3] = matmulT(h2, dLogits)
	g[pDecB] = matmulT(decOH, dLogits)
	dA2 := Mul(matmulNT(dLogits, p[pW3]), OneMinus(Square(h2))) // tanh' = 1 − tanh²
	g[pB2] = ReduceSum(dA2, 0)
	g[pW2] = matmulT(h1, dA2)
	dA1 := Mul(matmulNT(dA2, p[pW2]), OneMinus(Square(h1)))
	g[pB1] = ReduceSum(dA1, 0)
	g[pW1] = matmulT(x, dA1)
	// The embedding feeds x through the history and parent bags.
	// Only x's embedded columns lead back to parameters: multiply by those
	// rows of W1 alone.
	off := c.denseWidth() + c.NumDecisions
	dHist := matmulNT(dA1, Slice(p[pW1], AxisRange(off, off+c.Embed), AxisRange()))
	dPar := matmulNT(dA1, Slice(p[pW1], AxisRange(off+c.Embed, off+2*c.Embed), AxisRange()))
	g[pEmb] = Add(matmulT(hist, dHist), matmulT(par, dPar))

	outs := []*Node{loss, mean(pg), mean(entropy), mean(kl), mean(clipped), mean(priorKL), newLP}
	return append(outs, g[:]...)
}

// matmul is a·b for matrices.
func matmul(a, b *Node) *Node { return DotGeneral(a, []int{1}, nil, b, []int{0}, nil) }

// matmulT is aᵀ·b, contracting the rows (the batch).
func matmulT(a, b *Node) *Node { return DotGeneral(a, []int{0}, nil, b, []int{0}, nil) }

// matmulNT is a·bᵀ.
func matmulNT(a, b *Node) *Node { return DotGeneral(a, []int{1}, nil, b, []int{1}, nil) }

// run executes the graph on params and one assembled minibatch.
func (tr *trainer) run(params [numParams][]float64, in graphInput) (out graphOutput, err error) {
	c := tr.cfg
	args := make([]any, 0, numParams+numDataInputs)
	for i := range numParams {
		args = append(args, tensors.FromFlatDataAndDimensions(params[i], c.paramShape(i)...))
	}
	r := in.rows
	args = append(args,
		tensors.FromFlatDataAndDimensions(in.dense, r, c.denseWidth()),
		tensors.FromFlatDataAndDimensions(in.decOH, r, c.NumDecisions),
		tensors.FromFlatDataAndDimensions(in.hist, r, c.numPairs()),
		tensors.FromFlatDataAndDimensions(in.par, r, c.numPairs()),
		tensors.FromFlatDataAndDimensions(in.mask, r, c.MaxOptions),
		tensors.FromFlatDataAndDimensions(in.chosenOH, r, c.MaxOptions),
		tensors.FromFlatDataAndDimensions(in.invTemp, r),
		tensors.FromFlatDataAndDimensions(in.oldLP, r),
		tensors.FromFlatDataAndDimensions(in.adv, r),
		tensors.FromFlatDataAndDimensions(in.rowWeight, r),
		tensors.FromFlatDataAndDimensions(in.prior, r, c.MaxOptions),
		tensors.FromFlatDataAndDimensions(in.floor, r),
	)
	res, err := tr.exec.Exec(args...)
	if err != nil {
		return out, fmt.Errorf("choicenet: executing PPO graph on %d rows: %w", r, err)
	}
	defer func() {
		for _, t := range res {
			t.FinalizeAll()
		}
	}()
	scalars := []*float64{&out.loss, &out.pgLoss, &out.entropy, &out.approxKL, &out.clipFrac, &out.priorKL}
	for i, s := range scalars {
		v, err := tensors.CopyFlatData[float64](res[i])
		if err != nil || len(v) != 1 {
			return out, fmt.Errorf("choicenet: reading output %d: %v", i, err)
		}
		*s = v[0]
	}
	lp, err := tensors.CopyFlatData[float64](res[len(scalars)])
	if err != nil {
		return out, fmt.Errorf("choicenet: reading log-probs: %w", err)
	}
	out.newLP = lp[:in.real]
	for i := range numParams {
		g, err := tensors.CopyFlatData[float64](res[len(scalars)+1+i])
		if err != nil {
			return out, fmt.Errorf("choicenet: reading gradient of %s: %w", paramNames[i], err)
		}
		out.grads[i] = g
	}
	return out, nil
}
