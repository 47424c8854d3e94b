package choicenet

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// uniformNet has random hidden layers but a zero head, so every step's
// distribution is exactly uniform over its options: log π = −log k.
func uniformNet(t *testing.T, entropy, kl float64) *Net {
	cfg := tinyConfig()
	cfg.EntropyCoef, cfg.KLCoef = entropy, kl
	return mustNew(t, cfg)
}

func allZero(g [numParams][]float64) bool {
	for _, gi := range g {
		for _, x := range gi {
			if x != 0 {
				return false
			}
		}
	}
	return true
}

// TestPPOLossByHand: one two-option step of a uniform net, so new log-prob is
// log ½ and the ratio r is set through the old log-prob. Expected per-step
// loss max(−A·r, −A·clip(r, 0.8, 1.2)) is worked out by hand in each row.
func TestPPOLossByHand(t *testing.T) {
	e4 := math.Exp(4)
	tests := []struct {
		name     string
		ratio    float64 // r = π_new/π_old
		adv      float64
		wantPG   float64
		clipped  bool // |r−1| > 0.2
		zeroGrad bool // the clipped branch is taken: no gradient
	}{
		{"A>0 r inside", 1.1, 2, -2.2, false, false},
		{"A>0 r above clip: capped at 1.2", 1.5, 1, -1.2, true, true},
		{"A>0 r below clip: pessimistic unclipped", 0.5, 1, -0.5, true, false},
		{"A<0 r above clip: pessimistic unclipped", 1.5, -1, 1.5, true, false},
		{"A<0 r below clip: capped at 0.8", 0.5, -1, 0.8, true, true},
		{"A<0 r inside", 0.9, -3, 2.7, false, false},
		{"stale A>0: r=e⁴ capped", e4, 1, -1.2, true, true},
		{"stale A<0: r=e⁴ unclipped", e4, -1, e4, true, false},
		{"very stale A<0: log-ratio bounded at 20", math.Exp(60), -1, math.Exp(20), true, true},
		{"zero advantage", 1.5, 0, 0, true, true},
		{"zero advantage on-policy", 1, 0, 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := uniformNet(t, 0, 0)
			ex := Example{
				Ctx:         Context{Features: []float64{0.5, -1}},
				Steps:       []Step{{Decision: 1, NumOptions: 2, Chosen: 0}},
				OldLogProbs: []float64{math.Log(0.5) - math.Log(tt.ratio)},
				Advantage:   tt.adv,
				Temperature: 0.7,
			}
			out := evalBatch(t, n, []Example{ex})
			if math.Abs(out.pgLoss-tt.wantPG) > 1e-9*math.Max(1, math.Abs(tt.wantPG)) {
				t.Errorf("policy loss %v, want %v", out.pgLoss, tt.wantPG)
			}
			if out.loss != out.pgLoss {
				t.Errorf("loss %v ≠ policy loss %v with zero entropy and KL coefficients", out.loss, out.pgLoss)
			}
			if wantCF := map[bool]float64{true: 1, false: 0}[tt.clipped]; out.clipFrac != wantCF {
				t.Errorf("clip fraction %v, want %v", out.clipFrac, wantCF)
			}
			if got := allZero(out.grads); got != tt.zeroGrad {
				t.Errorf("all gradients zero = %v, want %v", got, tt.zeroGrad)
			}
		})
	}
}

// TestPPOMeanEntropyKLByHand: two plans (3 steps in all) on a uniform net;
// the loss is the mean over steps of pg − c_ent·H + c_kl·(r − 1 − log r).
func TestPPOMeanEntropyKLByHand(t *testing.T) {
	const cEnt, cKL = 0.01, 0.5
	n := uniformNet(t, cEnt, cKL)
	ctx := Context{Features: []float64{1, 0}}
	// Plan 1: steps with 2 and 3 options, ratios 1 and 1.1, A = 1.
	// Plan 2: one step with 3 options, ratio 0.5, A = −2: the clipped side wins,
	// max(−(−2)·0.5, −(−2)·0.8) = max(1, 1.6) = 1.6.
	batch := []Example{
		{Ctx: ctx, Steps: []Step{{Decision: 0, NumOptions: 2, Chosen: 1}, {Decision: 1, NumOptions: 3, Chosen: 2}}, OldLogProbs: []float64{math.Log(0.5), math.Log(1.0/3) - math.Log(1.1)}, Advantage: 1, Temperature: 1},
		{Ctx: ctx, Steps: []Step{{Decision: 1, NumOptions: 3, Chosen: 0}}, OldLogProbs: []float64{math.Log(1.0/3) - math.Log(0.5)}, Advantage: -2, Temperature: 1},
	}
	ratios := []float64{1, 1.1, 0.5}
	pgs := []float64{-1, -1.1, 1.6}
	ents := []float64{math.Log(2), math.Log(3), math.Log(3)}
	var wantPG, wantEnt, wantKL float64
	for i, r := range ratios {
		wantPG += pgs[i] / 3
		wantEnt += ents[i] / 3
		wantKL += (r - 1 - math.Log(r)) / 3
	}
	wantLoss := wantPG - cEnt*wantEnt + cKL*wantKL
	out := evalBatch(t, n, batch)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"policy loss", out.pgLoss, wantPG},
		{"entropy", out.entropy, wantEnt},
		{"approx KL", out.approxKL, wantKL},
		{"loss", out.loss, wantLoss},
		{"clip fraction", out.clipFrac, 1.0 / 3},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %.15g, want %.15g", c.name, c.got, c.want)
		}
	}
}

// referenceLoss is the PPO objective computed step by step in plain Go from
// LogProbs and Probs: the independent implementation the graph is checked
// against.
func referenceLoss(n *Net, batch []Example) float64 {
	c := n.cfg
	total, steps := 0.0, 0
	for _, ex := range batch {
		newLP := n.LogProbs(ex.Ctx, ex.Steps, ex.Temperature)
		for i, s := range ex.Steps {
			lr := math.Max(-maxLogRatio, math.Min(maxLogRatio, newLP[i]-ex.OldLogProbs[i]))
			r := math.Exp(lr)
			clipped := math.Max(1-c.Clip, math.Min(1+c.Clip, r))
			pg := math.Max(-ex.Advantage*r, -ex.Advantage*clipped)
			// Entropy and anchor are the net's own component's: the step
			// without its floor.
			own := s
			own.Floor = 0
			p, err := n.StepProbs(ex.Ctx, ex.Steps[:i], own, ex.Temperature)
			if err != nil {
				panic(err)
			}
			h := 0.0
			for _, pk := range p {
				h -= pk * math.Log(pk)
			}
			// The prior alone: HintLogit on the hinted option, minus
			// AvoidLogit on each avoided one, tempered.
			z0 := make([]float64, len(p))
			if s.Hint > 0 {
				z0[s.Hint-1] = c.HintLogit / ex.Temperature
			}
			for _, a := range s.Avoid {
				z0[a] -= c.AvoidLogit / ex.Temperature
			}
			lse0 := 0.0
			for _, z := range z0 {
				lse0 += math.Exp(z)
			}
			kl0 := 0.0
			for k, pk := range p {
				kl0 += pk * (math.Log(pk) - (z0[k] - math.Log(lse0)))
			}
			total += pg - c.EntropyCoef*h + c.KLCoef*(r-1-lr) + c.PriorKLCoef*kl0
			steps++
		}
	}
	return total / float64(steps)
}

// TestGradientsMatchFiniteDifferences checks every parameter's gradient from
// GoMLX's autodiff against central differences of the plain-Go loss, on a
// tiny net with stale samples on both sides of the clip range, parents,
// floored steps, and non-zero entropy, KL and prior-KL coefficients.
func TestGradientsMatchFiniteDifferences(t *testing.T) {
	cfg := tinyConfig()
	cfg.EntropyCoef, cfg.KLCoef, cfg.PriorKLCoef = 0.05, 0.3, 0.4
	cfg.HintLogit = 0.9  // randomPlan hints some steps
	cfg.AvoidLogit = 1.3 // and avoids some options
	n := mustNew(t, cfg)
	randomize(n, 21, 0.7)
	rng := rand.New(rand.NewPCG(4, 2))
	// Offsets of old log-probs from new ones, all ≥0.05 away from the clip
	// edges (log 1.2 ≈ 0.18, log 0.8 ≈ −0.22) so the loss is smooth there.
	offsets := []float64{0.6, -0.6, 0.05, -0.08, 1.5}
	var batch []Example
	for i := range 5 {
		ctx, steps := randomPlan(n, rng, 2+i%3, i%2 == 1)
		setFloors(steps, i)
		temp := []float64{0.7, 1, 1.4}[i%3]
		lp := n.LogProbs(ctx, steps, temp)
		old := make([]float64, len(lp))
		for s := range lp {
			old[s] = math.Min(0, lp[s]+offsets[(i+s)%len(offsets)])
		}
		batch = append(batch, Example{Ctx: ctx, Steps: steps, OldLogProbs: old, Advantage: []float64{1, -0.7, 2, -1.5, 0.3}[i], Temperature: temp})
	}
	out := evalBatch(t, n, batch)
	if ref := referenceLoss(n, batch); math.Abs(out.loss-ref) > 1e-12 {
		t.Fatalf("graph loss %.15g, plain-Go loss %.15g", out.loss, ref)
	}
	const h = 1e-6
	checked, worst := 0, 0.0
	for i := range numParams {
		for j := range n.params[i] {
			orig := n.params[i][j]
			n.params[i][j] = orig + h
			up := referenceLoss(n, batch)
			n.params[i][j] = orig - h
			down := referenceLoss(n, batch)
			n.params[i][j] = orig
			fd := (up - down) / (2 * h)
			g := out.grads[i][j]
			diff := math.Abs(g - fd)
			worst = max(worst, diff)
			if diff > 1e-7+1e-5*math.Abs(fd) {
				t.Errorf("%s[%d]: autodiff %.10g, finite difference %.10g", paramNames[i], j, g, fd)
			}
			checked++
		}
	}
	t.Logf("%d gradient entries checked; largest |autodiff − finite difference| = %.3g", checked, worst)
}

func TestUpdateRejectsBadBatch(t *testing.T) {
	n := mustNew(t, tinyConfig())
	good := Example{Ctx: Context{Features: []float64{1, 2}}, Steps: []Step{{Decision: 0, NumOptions: 2, Chosen: 1}}, OldLogProbs: []float64{-0.7}, Advantage: 1, Temperature: 0.7}
	tests := []struct {
		name   string
		mutate func(*Example)
		want   string
	}{
		{"wrong feature length", func(e *Example) { e.Ctx.Features = []float64{1} }, "features"},
		{"no steps", func(e *Example) { e.Steps, e.OldLogProbs = nil, nil }, "no steps"},
		{"chosen out of range", func(e *Example) { e.Steps = []Step{{Decision: 0, NumOptions: 2, Chosen: 2}} }, "chosen 2"},
		{"too many options", func(e *Example) { e.Steps = []Step{{Decision: 0, NumOptions: 4, Chosen: 1}} }, "numOptions 4"},
		{"zero options", func(e *Example) { e.Steps = []Step{{Decision: 0, NumOptions: 0, Chosen: 0}} }, "numOptions 0"},
		{"decision out of range", func(e *Example) { e.Steps = []Step{{Decision: 5, NumOptions: 2, Chosen: 0}} }, "decision 5"},
		{"log-prob count", func(e *Example) { e.OldLogProbs = []float64{-1, -1} }, "2 old log-probs for 1 steps"},
		{"positive log-prob", func(e *Example) { e.OldLogProbs = []float64{0.5} }, "old log-prob"},
		{"NaN log-prob", func(e *Example) { e.OldLogProbs = []float64{math.NaN()} }, "old log-prob"},
		{"-Inf log-prob", func(e *Example) { e.OldLogProbs = []float64{math.Inf(-1)} }, "old log-prob"},
		{"NaN advantage", func(e *Example) { e.Advantage = math.NaN() }, "advantage"},
		{"greedy temperature", func(e *Example) { e.Temperature = 0 }, "temperature"},
		{"bad parent", func(e *Example) { e.Ctx.Parent = []Step{{Decision: 0, NumOptions: 3, Chosen: 3}} }, "parent step 0"},
		{"floor above 1", func(e *Example) { e.Steps = []Step{{Decision: 0, NumOptions: 2, Chosen: 1, Floor: 1.5}} }, "floor 1.5"},
		{"negative floor", func(e *Example) { e.Steps = []Step{{Decision: 0, NumOptions: 2, Chosen: 1, Floor: -0.1}} }, "floor -0.1"},
		{"NaN floor", func(e *Example) { e.Steps = []Step{{Decision: 0, NumOptions: 2, Chosen: 1, Floor: math.NaN()}} }, "floor NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := good
			tt.mutate(&bad)
			_, err := n.Update(t.Context(), []Example{good, good, bad, good})
			if err == nil || !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "example 2") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Update error = %v, want ErrBadInput naming example 2 and %q", err, tt.want)
			}
			if n.Version() != 0 {
				t.Fatalf("version %d after a rejected update", n.Version())
			}
		})
	}
	if _, err := n.Update(t.Context(), nil); !errors.Is(err, ErrBadInput) {
		t.Errorf("empty batch: error %v, want ErrBadInput", err)
	}
}

func TestCancelledUpdateChangesNothing(t *testing.T) {
	n := mustNew(t, tinyConfig())
	ex := Example{Ctx: Context{Features: []float64{1, 2}}, Steps: []Step{{Decision: 0, NumOptions: 2, Chosen: 1}}, OldLogProbs: []float64{math.Log(0.5)}, Advantage: 1, Temperature: 1}
	before := n.LogProbs(ex.Ctx, ex.Steps, 1)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := n.Update(ctx, []Example{ex}); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if after := n.LogProbs(ex.Ctx, ex.Steps, 1); after[0] != before[0] || n.Version() != 0 {
		t.Errorf("cancelled update changed the net: log-prob %v → %v, version %d", before[0], after[0], n.Version())
	}
	if _, err := n.Update(t.Context(), []Example{ex}); err != nil || n.Version() != 1 {
		t.Fatalf("Update: %v, version %d", err, n.Version())
	}
	if after := n.LogProbs(ex.Ctx, ex.Steps, 1); !(after[0] > before[0]) {
		t.Errorf("a positive advantage did not raise the log-prob: %v → %v", before[0], after[0])
	}
}

// Credit per decision: with StepAdvantages each step's policy loss takes its
// own advantage. Two on-policy two-option steps of a uniform net (r = 1), so
// the loss is the mean of −A over the steps, worked out by hand.
func TestStepAdvantages(t *testing.T) {
	ex := func(adv float64, steps []float64) Example {
		return Example{
			Ctx:            Context{Features: []float64{0.5, -1}},
			Steps:          []Step{{Decision: 0, NumOptions: 2, Chosen: 0}, {Decision: 1, NumOptions: 2, Chosen: 1}},
			OldLogProbs:    []float64{math.Log(0.5), math.Log(0.5)},
			Advantage:      adv,
			StepAdvantages: steps,
			Temperature:    0.7,
		}
	}
	for _, tc := range []struct {
		name   string
		ex     Example
		wantPG float64
	}{
		{"broadcast", ex(2, nil), -2},
		{"only the second step", ex(2, []float64{0, 2}), -1},
		{"opposite signs", ex(2, []float64{-1, 3}), -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := evalBatch(t, uniformNet(t, 0, 0), []Example{tc.ex})
			if math.Abs(out.pgLoss-tc.wantPG) > 1e-9 {
				t.Errorf("policy loss %v, want %v", out.pgLoss, tc.wantPG)
			}
		})
	}
	n := uniformNet(t, 0, 0)
	for _, bad := range []Example{ex(1, []float64{1}), ex(1, []float64{1, math.NaN()})} {
		if err := n.CheckBatch([]Example{bad}); !errors.Is(err, ErrBadInput) {
			t.Errorf("step advantages %v: error %v, want ErrBadInput", bad.StepAdvantages, err)
		}
	}
}
