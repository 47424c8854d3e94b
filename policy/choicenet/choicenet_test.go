package choicenet

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// tinyConfig is small enough to check gradients element by element.
func tinyConfig() Config {
	return Config{
		NumFeatures: 2, NumDecisions: 2, MaxOptions: 3, Hidden: 3, Embed: 2,
		LR: 1e-2, Clip: 0.2, Epochs: 1, MiniBatch: 8, Seed: 7,
	}
}

func mustNew(t testing.TB, cfg Config) *Net {
	t.Helper()
	n, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return n
}

// randomize gives every parameter (including the zero-initialised head and
// decision bias) random values, so tests exercise all paths.
func randomize(n *Net, seed uint64, scale float64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	for i := range numParams {
		for j := range n.params[i] {
			n.params[i][j] = rng.NormFloat64() * scale
		}
	}
}

// randomPlan samples a valid plan and context for n's config.
func randomPlan(n *Net, rng *rand.Rand, steps int, withParent bool) (Context, []Step) {
	c := n.cfg
	ctx := Context{Features: make([]float64, c.NumFeatures)}
	for i := range ctx.Features {
		ctx.Features[i] = rng.NormFloat64()
	}
	mk := func() []Step {
		out := make([]Step, steps)
		for i := range out {
			k := 1 + rng.IntN(c.MaxOptions)
			out[i] = Step{Decision: rng.IntN(c.NumDecisions), NumOptions: k, Chosen: rng.IntN(k)}
			if c.HintLogit != 0 {
				out[i].Hint = rng.IntN(k + 1)
			}
			if c.AvoidLogit != 0 {
				for o := range k {
					if rng.IntN(3) == 0 {
						out[i].Avoid = append(out[i].Avoid, o)
					}
				}
			}
		}
		return out
	}
	if withParent {
		ctx.Parent = mk()
		ctx.ParentReward = rng.NormFloat64() * 3
	}
	return ctx, mk()
}

// setFloors gives some of a plan's steps a floor (none, part, all of the
// distribution the prior's), varied by example i, so tests that compare the
// graph with plain Go cover the mixture on both sides.
func setFloors(steps []Step, i int) {
	for s := range steps {
		steps[s].Floor = []float64{0, 0.3, 0, 1, 0.05}[(i+s)%5]
	}
}

// evalBatch runs the PPO graph once on the whole batch with the net's
// current parameters.
func evalBatch(t testing.TB, n *Net, batch []Example) graphOutput {
	t.Helper()
	if err := n.CheckBatch(batch); err != nil {
		t.Fatalf("CheckBatch: %v", err)
	}
	tr, err := n.getTrainer()
	if err != nil {
		t.Fatalf("trainer: %v", err)
	}
	rows := make([]exampleRows, len(batch))
	idx := make([]int, len(batch))
	for i, ex := range batch {
		rows[i] = n.encodeExample(ex)
		idx[i] = i
	}
	out, err := tr.run(n.params, n.assemble(rows, idx))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return out
}

func TestNewValidatesConfig(t *testing.T) {
	ok := tinyConfig()
	tests := []struct {
		name   string
		mutate func(*Config)
		valid  bool
	}{
		{"tiny", func(*Config) {}, true},
		{"defaults fill zero sizes", func(c *Config) { c.Hidden, c.Embed, c.LR, c.Epochs, c.MiniBatch = 0, 0, 0, 0, 0 }, true},
		{"no features", func(c *Config) { c.NumFeatures = 0 }, true},
		{"negative features", func(c *Config) { c.NumFeatures = -1 }, false},
		{"no decisions", func(c *Config) { c.NumDecisions = 0 }, false},
		{"no options", func(c *Config) { c.MaxOptions = 0 }, false},
		{"negative LR", func(c *Config) { c.LR = -1 }, false},
		{"NaN clip", func(c *Config) { c.Clip = math.NaN() }, false},
		{"negative entropy", func(c *Config) { c.EntropyCoef = -1e-3 }, false},
		{"infinite KL", func(c *Config) { c.KLCoef = math.Inf(1) }, false},
		{"negative grad norm", func(c *Config) { c.MaxGradNorm = -1 }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.mutate(&c)
			_, err := New(c)
			if (err == nil) != tt.valid {
				t.Fatalf("New(%+v) error = %v, want valid=%v", c, err, tt.valid)
			}
		})
	}
}

func TestFreshNetIsUniform(t *testing.T) {
	n := mustNew(t, DefaultConfig(3, 4, 5))
	ctx := Context{Features: []float64{1, -2, 0.5}}
	for k := 1; k <= 5; k++ {
		p, err := n.Probs(ctx, []Step{{Decision: 1, NumOptions: 2, Chosen: 1}}, 3, k, 0.7)
		if err != nil {
			t.Fatal(err)
		}
		for j, pj := range p {
			if math.Abs(pj-1/float64(k)) > 1e-15 {
				t.Errorf("numOptions %d: p[%d] = %v, want %v", k, j, pj, 1/float64(k))
			}
		}
	}
}

// TestHintPrior: on a fresh (uniform) net a hint of weight b gives its option
// e^b/(e^b + k − 1); sampling, re-scoring and Probs agree; a net with
// HintLogit 0 ignores hints; a hint out of range is bad input.
func TestHintPrior(t *testing.T) {
	cfg := DefaultConfig(3, 4, 5)
	cfg.HintLogit = 2
	n := mustNew(t, cfg)
	ctx := Context{Features: []float64{1, -2, 0.5}}
	const k = 4
	next := Step{Decision: 2, NumOptions: k, Hint: 3}
	p, err := n.StepProbs(ctx, nil, next, 1)
	if err != nil {
		t.Fatal(err)
	}
	e := math.Exp(2)
	for j, pj := range p {
		want := 1 / (e + k - 1)
		if j == 2 {
			want = e / (e + k - 1)
		}
		if math.Abs(pj-want) > 1e-12 {
			t.Errorf("p[%d] = %v, want %v", j, pj, want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	hits := 0
	for range 2000 {
		c, lp := n.ChooseStep(ctx, nil, next, 1, rng)
		next.Chosen = c
		if got := n.LogProbs(ctx, []Step{next}, 1)[0]; math.Abs(got-lp) > 1e-12 {
			t.Fatalf("ChooseStep log-prob %v, LogProbs %v", lp, got)
		}
		if c == 2 {
			hits++
		}
	}
	if f := float64(hits) / 2000; math.Abs(f-e/(e+k-1)) > 0.04 {
		t.Errorf("hinted option sampled %.3f of the time, want %.3f", f, e/(e+k-1))
	}
	plain := mustNew(t, DefaultConfig(3, 4, 5))
	if p, _ := plain.StepProbs(ctx, nil, next, 1); math.Abs(p[2]-0.25) > 1e-12 {
		t.Errorf("HintLogit 0: hinted option has p %v, want 0.25", p[2])
	}
	if _, err := n.StepProbs(ctx, nil, Step{Decision: 2, NumOptions: k, Hint: k + 1}, 1); !errors.Is(err, ErrBadInput) {
		t.Errorf("hint out of range: %v", err)
	}
}

// TestAvoidPrior: on a fresh net, each avoided option loses AvoidLogit
// (tempered) against the others, the hint adds on top, sampling and
// re-scoring agree, and an avoided option out of range is bad input.
func TestAvoidPrior(t *testing.T) {
	cfg := DefaultConfig(3, 4, 5)
	cfg.HintLogit, cfg.AvoidLogit = 1.5, 4
	n := mustNew(t, cfg)
	ctx := Context{Features: []float64{1, -2, 0.5}}
	const temp = 0.7
	next := Step{Decision: 1, NumOptions: 4, Hint: 1, Avoid: []int{2, 3}}
	p, err := n.StepProbs(ctx, nil, next, temp)
	if err != nil {
		t.Fatal(err)
	}
	w := []float64{math.Exp(1.5 / temp), 1, math.Exp(-4 / temp), math.Exp(-4 / temp)}
	sum := w[0] + w[1] + w[2] + w[3]
	for j := range p {
		if math.Abs(p[j]-w[j]/sum) > 1e-12 {
			t.Errorf("p[%d] = %v, want %v", j, p[j], w[j]/sum)
		}
	}
	if p[2]+p[3] > 0.01 {
		t.Errorf("avoided options hold %.4f of the mass", p[2]+p[3])
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		c, lp := n.ChooseStep(ctx, nil, next, temp, rng)
		next.Chosen = c
		if got := n.LogProbs(ctx, []Step{next}, temp)[0]; math.Abs(got-lp) > 1e-12 {
			t.Fatalf("ChooseStep log-prob %v, LogProbs %v", lp, got)
		}
	}
	if _, err := n.StepProbs(ctx, nil, Step{Decision: 1, NumOptions: 4, Avoid: []int{4}}, 1); !errors.Is(err, ErrBadInput) {
		t.Errorf("avoided option out of range: %v", err)
	}
}

// TestMasking puts huge logits on options beyond numOptions and checks that
// they still get no probability, that probabilities sum to 1, and that the
// graph's entropy counts only valid options.
func TestMasking(t *testing.T) {
	n := mustNew(t, tinyConfig())
	randomize(n, 1, 0.5)
	n.params[pB3][2] = 1e6 // option 2 would win everything if not masked
	ctx := Context{Features: []float64{0.3, -0.1}}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, temp := range []float64{0.05, 0.7, 1, 5} {
		for k := 1; k <= 3; k++ {
			p, err := n.Probs(ctx, nil, 1, k, temp)
			if err != nil {
				t.Fatal(err)
			}
			if len(p) != k {
				t.Fatalf("len(p) = %d, want %d", len(p), k)
			}
			sum := 0.0
			for _, pj := range p {
				if math.IsNaN(pj) || pj < 0 {
					t.Fatalf("T=%v k=%d: bad probability %v", temp, k, pj)
				}
				sum += pj
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Errorf("T=%v k=%d: probabilities sum to %v", temp, k, sum)
			}
			for range 200 {
				c, lp := n.Choose(ctx, nil, 1, k, temp, rng)
				if c < 0 || c >= k || math.IsNaN(lp) || lp > 0 {
					t.Fatalf("T=%v k=%d: Choose = (%d, %v)", temp, k, c, lp)
				}
			}
			// Graph side: entropy over valid options only, finite log-prob.
			ex := Example{Ctx: ctx, Steps: []Step{{Decision: 1, NumOptions: k, Chosen: k - 1}}, OldLogProbs: []float64{-1}, Temperature: temp}
			out := evalBatch(t, n, []Example{ex})
			want := 0.0
			for _, pj := range p {
				if pj > 0 {
					want -= pj * math.Log(pj)
				}
			}
			if math.Abs(out.entropy-want) > 1e-9 || math.IsNaN(out.loss) {
				t.Errorf("T=%v k=%d: graph entropy %v, want %v (loss %v)", temp, k, out.entropy, want, out.loss)
			}
			if lp := math.Log(p[k-1]); math.Abs(out.newLP[0]-lp) > 1e-9 && !(lp < -700 && out.newLP[0] < -700) {
				t.Errorf("T=%v k=%d: graph log-prob %v, want %v", temp, k, out.newLP[0], lp)
			}
		}
	}
}

func TestBadInputIsPanicFree(t *testing.T) {
	n := mustNew(t, tinyConfig())
	good := Context{Features: []float64{1, 2}}
	rng := rand.New(rand.NewPCG(1, 1))
	tests := []struct {
		name       string
		ctx        Context
		history    []Step
		decision   int
		numOptions int
		temp       float64
		rng        *rand.Rand
	}{
		{"zero options", good, nil, 0, 0, 1, rng},
		{"too many options", good, nil, 0, 4, 1, rng},
		{"negative decision", good, nil, -1, 2, 1, rng},
		{"decision too large", good, nil, 2, 2, 1, rng},
		{"short features", Context{Features: []float64{1}}, nil, 0, 2, 1, rng},
		{"NaN feature", Context{Features: []float64{1, math.NaN()}}, nil, 0, 2, 1, rng},
		{"infinite parent reward", Context{Features: []float64{1, 2}, Parent: []Step{{Decision: 0, NumOptions: 2, Chosen: 1}}, ParentReward: math.Inf(-1)}, nil, 0, 2, 1, rng},
		{"bad parent step", Context{Features: []float64{1, 2}, Parent: []Step{{Decision: 0, NumOptions: 2, Chosen: 2}}}, nil, 0, 2, 1, rng},
		{"history chosen out of range", good, []Step{{Decision: 1, NumOptions: 2, Chosen: 5}}, 0, 2, 1, rng},
		{"history options out of range", good, []Step{{Decision: 1, NumOptions: 9, Chosen: 0}}, 0, 2, 1, rng},
		{"NaN temperature", good, nil, 0, 2, math.NaN(), rng},
		{"nil rng", good, nil, 0, 2, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, lp := n.Choose(tt.ctx, tt.history, tt.decision, tt.numOptions, tt.temp, tt.rng)
			if c != -1 || !math.IsNaN(lp) {
				t.Errorf("Choose = (%d, %v), want (-1, NaN)", c, lp)
			}
			if _, err := n.Probs(tt.ctx, tt.history, tt.decision, tt.numOptions, tt.temp); tt.rng != nil && !errors.Is(err, ErrBadInput) {
				t.Errorf("Probs error = %v, want ErrBadInput", err)
			}
		})
	}
	t.Run("LogProbs NaN from the first bad step on", func(t *testing.T) {
		lp := n.LogProbs(good, []Step{{Decision: 0, NumOptions: 2, Chosen: 1}, {Decision: 1, NumOptions: 3, Chosen: 3}, {Decision: 0, NumOptions: 2, Chosen: 0}}, 1)
		if math.IsNaN(lp[0]) || !math.IsNaN(lp[1]) || !math.IsNaN(lp[2]) {
			t.Errorf("LogProbs = %v, want [finite NaN NaN]", lp)
		}
		for _, lp := range n.LogProbs(Context{}, []Step{{Decision: 0, NumOptions: 2, Chosen: 1}}, 1) {
			if !math.IsNaN(lp) {
				t.Errorf("bad context: log-prob %v, want NaN", lp)
			}
		}
	})
}

func TestGreedy(t *testing.T) {
	n := mustNew(t, tinyConfig())
	randomize(n, 3, 1)
	ctx := Context{Features: []float64{0.2, 0.4}}
	p, err := n.Probs(ctx, nil, 0, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	best := 0
	for k := range p {
		if p[k] > p[best] {
			best = k
		}
	}
	if c, lp := n.Choose(ctx, nil, 0, 3, 0, nil); c != best || lp != 0 {
		t.Errorf("greedy Choose = (%d, %v), want (%d, 0); probs %v", c, lp, best, p)
	}
}

// TestChooseMatchesProbs checks the sampler's frequencies and its reported
// log-probabilities against the tempered distribution.
func TestChooseMatchesProbs(t *testing.T) {
	n := mustNew(t, tinyConfig())
	randomize(n, 4, 1)
	ctx := Context{Features: []float64{-0.5, 1}, Parent: []Step{{Decision: 1, NumOptions: 3, Chosen: 2}}, ParentReward: -9.7}
	hist := []Step{{Decision: 0, NumOptions: 3, Chosen: 1}}
	const temp, draws = 0.7, 20000
	p, err := n.Probs(ctx, hist, 1, 3, temp)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	counts := make([]int, 3)
	for range draws {
		c, lp := n.Choose(ctx, hist, 1, 3, temp, rng)
		if math.Abs(lp-math.Log(p[c])) > 1e-12 {
			t.Fatalf("Choose log-prob %v, want log p[%d] = %v", lp, c, math.Log(p[c]))
		}
		counts[c]++
	}
	for k := range p {
		freq := float64(counts[k]) / draws
		sd := math.Sqrt(p[k] * (1 - p[k]) / draws)
		if math.Abs(freq-p[k]) > 5*sd+1e-9 {
			t.Errorf("option %d: frequency %.4f, probability %.4f (5σ = %.4f)", k, freq, p[k], 5*sd)
		}
	}
}

// TestGraphAgreesWithGo: the GoMLX graph (training) and the plain-Go forward
// pass (sampling) compute the same log-probabilities, in float64, to 1e-9.
func TestGraphAgreesWithGo(t *testing.T) {
	cfg := DefaultConfig(5, 6, 7)
	cfg.HintLogit = 1.5 // randomPlan hints some steps
	n := mustNew(t, cfg)
	randomize(n, 11, 0.4)
	rng := rand.New(rand.NewPCG(8, 9))
	var batch []Example
	for i := range 12 {
		ctx, steps := randomPlan(n, rng, 1+rng.IntN(15), i%2 == 0)
		setFloors(steps, i)
		temp := []float64{0.7, 1, 1.3}[i%3]
		batch = append(batch, Example{Ctx: ctx, Steps: steps, OldLogProbs: n.LogProbs(ctx, steps, temp), Advantage: rng.NormFloat64(), Temperature: temp})
	}
	out := evalBatch(t, n, batch)
	r := 0
	worst := 0.0
	for i, ex := range batch {
		for s, want := range ex.OldLogProbs {
			got := out.newLP[r]
			worst = max(worst, math.Abs(got-want))
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("example %d step %d: graph %v, Go %v", i, s, got, want)
			}
			r++
		}
	}
	t.Logf("largest |graph − Go| log-prob difference: %.3g", worst)
	// Fresh samples: every ratio is 1, nothing clipped, KL 0.
	if out.clipFrac != 0 || math.Abs(out.approxKL) > 1e-12 {
		t.Errorf("on-policy batch: clipFrac %v, approxKL %v; want 0, 0", out.clipFrac, out.approxKL)
	}
}

// TestDeterminism: the same seed gives the same weights, samples and updates.
func TestDeterminism(t *testing.T) {
	run := func() ([]int, []float64, Stats) {
		n := mustNew(t, tinyConfig())
		rng := rand.New(rand.NewPCG(3, 3))
		var picks []int
		var batch []Example
		for range 6 {
			ctx := Context{Features: []float64{rng.NormFloat64(), rng.NormFloat64()}}
			var steps []Step
			var lps []float64
			for d := range 2 {
				c, lp := n.Choose(ctx, steps, d, 3, 0.7, rng)
				steps = append(steps, Step{Decision: d, NumOptions: 3, Chosen: c})
				lps = append(lps, lp)
				picks = append(picks, c)
			}
			batch = append(batch, Example{Ctx: ctx, Steps: steps, OldLogProbs: lps, Advantage: float64(steps[0].Chosen) - 1, Temperature: 0.7})
		}
		var st Stats
		for range 3 {
			var err error
			if st, err = n.Update(t.Context(), batch); err != nil {
				t.Fatal(err)
			}
		}
		var flat []float64
		for i := range numParams {
			flat = append(flat, n.params[i]...)
		}
		return picks, flat, st
	}
	p1, w1, s1 := run()
	p2, w2, s2 := run()
	for i := range p1 {
		if p1[i] != p2[i] {
			t.Fatalf("sample %d differs: %d vs %d", i, p1[i], p2[i])
		}
	}
	for i := range w1 {
		if w1[i] != w2[i] {
			t.Fatalf("weight %d differs after 3 updates: %v vs %v", i, w1[i], w2[i])
		}
	}
	if s1 != s2 {
		t.Errorf("stats differ: %+v vs %+v", s1, s2)
	}
}

// TestConcurrentUpdatesOfSeparateNets runs three nets' updates at once (as
// parallel seeds of an ablation would) and checks each ends exactly where it
// does alone: the shared simplego backend neither deadlocks nor mixes them.
func TestConcurrentUpdatesOfSeparateNets(t *testing.T) {
	train := func(seed uint64) []float64 {
		cfg := tinyConfig()
		cfg.Seed = seed
		n := mustNew(t, cfg)
		rng := rand.New(rand.NewPCG(seed, 5))
		for range 5 {
			var batch []Example
			for range 40 {
				ctx, steps := randomPlan(n, rng, 6, true)
				batch = append(batch, Example{Ctx: ctx, Steps: steps, OldLogProbs: n.LogProbs(ctx, steps, 1), Advantage: rng.NormFloat64(), Temperature: 1})
			}
			if _, err := n.Update(t.Context(), batch); err != nil {
				t.Error(err)
				return nil
			}
		}
		return append([]float64(nil), n.params[pW1]...)
	}
	want := map[uint64][]float64{}
	for seed := range uint64(3) {
		want[seed] = train(seed)
	}
	got := make([][]float64, 3)
	done := make(chan uint64)
	for seed := range uint64(3) {
		go func() {
			got[seed] = train(seed)
			done <- seed
		}()
	}
	for range 3 {
		<-done
	}
	for seed := range uint64(3) {
		for j := range want[seed] {
			if got[seed][j] != want[seed][j] {
				t.Fatalf("seed %d: w1[%d] = %v concurrently, %v alone", seed, j, got[seed][j], want[seed][j])
			}
		}
	}
}
