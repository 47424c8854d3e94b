// Package tabular is a softmax policy over a fixed list of plans, one logit
// vector per state (task, kind, parent plan), trained with PPO's clipped
// objective and exact gradients. It is small enough to check by hand and fast
// enough to run thousands of updates, which is what the duration ablation and
// the learner's tests need; its log-probabilities, stale ratios, clipping and
// entropy are the same quantities a language model's are.
package tabular

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"

	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/rl/replay"
)

// Config holds the PPO hyperparameters (names as in the paper, SPEC.md §4).
type Config struct {
	LR          float64 // SGD step on the logits
	Clip        float64 // PPO ε
	Epochs      int     // passes over each batch
	EntropyCoef float64 // bonus on the policy's entropy
	Temperature float64 // sampling temperature; log-probs are of the tempered policy
	Seed        uint64
}

// DefaultConfig is a setting that learns the synthetic table in a few hundred updates.
func DefaultConfig() Config {
	return Config{LR: 0.5, Clip: 0.2, Epochs: 4, EntropyCoef: 1e-3, Temperature: 1}
}

// Policy is the tabular softmax policy. Not safe for concurrent use; the
// learner never overlaps Sample and Update.
type Policy struct {
	cfg     Config
	plans   []string
	logits  map[string][]float64
	version int
	pcg     *rand.PCG
	rng     *rand.Rand
}

var _ rl.Policy = (*Policy)(nil)

// New returns a uniform policy over plans.
func New(plans []string, cfg Config) (*Policy, error) {
	if len(plans) == 0 {
		return nil, errors.New("tabular: no plans")
	}
	if cfg.Temperature <= 0 {
		cfg.Temperature = 1
	}
	if cfg.Epochs < 1 {
		cfg.Epochs = 1
	}
	p := &Policy{cfg: cfg, plans: append([]string(nil), plans...), logits: map[string][]float64{}}
	p.pcg = rand.NewPCG(cfg.Seed, cfg.Seed^0x5851f42d4c957f2d)
	p.rng = rand.New(p.pcg)
	return p, nil
}

// State is the row of the table a prompt uses.
func State(pr rl.Prompt) string {
	name := ""
	if pr.Task != nil {
		name = pr.Task.Name
	}
	parent := ""
	if pr.Parent != nil {
		parent = pr.Parent.Action.Plan
	}
	return name + "|" + string(pr.Kind) + "|" + parent
}

// Probs is the policy's distribution over plans in a state.
func (p *Policy) Probs(state string) []float64 { return p.softmax(p.row(state)) }

// Plans lists the plans, in the order of Probs.
func (p *Policy) Plans() []string { return append([]string(nil), p.plans...) }

func (p *Policy) row(state string) []float64 {
	r, ok := p.logits[state]
	if !ok {
		r = make([]float64, len(p.plans))
		p.logits[state] = r
	}
	return r
}

func (p *Policy) softmax(logits []float64) []float64 {
	out := make([]float64, len(logits))
	mx := math.Inf(-1)
	for _, l := range logits {
		mx = math.Max(mx, l/p.cfg.Temperature)
	}
	sum := 0.0
	for i, l := range logits {
		out[i] = math.Exp(l/p.cfg.Temperature - mx)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

func (p *Policy) Version() int { return p.version }

// Sample draws one plan per prompt.
func (p *Policy) Sample(ctx context.Context, prompts []rl.Prompt) ([]rl.Action, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]rl.Action, len(prompts))
	for i, pr := range prompts {
		probs := p.Probs(State(pr))
		u, k := p.rng.Float64(), len(probs)-1
		for j, q := range probs {
			if u < q {
				k = j
				break
			}
			u -= q
		}
		out[i] = rl.Action{
			Kind: pr.Kind, Plan: p.plans[k], PolicyVersion: p.version,
			Code:          replay.PlanCode(p.plans[k], "# written by the tabular policy; only the plan matters to a replay\n"),
			Tokens:        []int{k},
			TokenLogProbs: []float64{math.Log(probs[k])},
		}
	}
	return out, nil
}

// Update takes Epochs full-batch gradient-ascent steps on PPO's clipped
// surrogate plus the entropy bonus:
//
//	J(θ) = mean_i min(r_i A_i, clip(r_i, 1−ε, 1+ε) A_i) + c_H · mean_i H(π_θ(·|s_i))
//	r_i  = π_θ(a_i|s_i) / π_behaviour(a_i|s_i)
//
// π_behaviour comes from the sample's own TokenLogProbs, so a sample several
// versions old gets its true ratio. A_i arrives already multiplied by the
// duration weight when the learner runs duration-aware. With softmax logits
// θ_s, ∇_θs log π(a|s) = (e_a − π(·|s)) / T and ∇_θs H = −π ⊙ (log π + H) / T.
// The reported loss, entropy, KL (mean log π_behaviour − log π_θ, the k1
// estimator) and clip fraction are measured before the first step.
func (p *Policy) Update(ctx context.Context, samples []rl.Sample) (rl.UpdateStats, error) {
	if err := ctx.Err(); err != nil {
		return rl.UpdateStats{}, err
	}
	if len(samples) == 0 {
		return rl.UpdateStats{NewVersion: p.version}, nil
	}
	states, oldest, err := p.sampleStates(samples)
	if err != nil {
		return rl.UpdateStats{}, err
	}
	var stats rl.UpdateStats
	n := float64(len(samples))
	for epoch := 0; epoch < p.cfg.Epochs; epoch++ {
		e := p.epochGradients(samples, states)
		if epoch == 0 {
			stats.Loss = e.loss/n - p.cfg.EntropyCoef*e.ent/n
			stats.Entropy = e.ent / n
			stats.KL = e.kl / n
			stats.ClipFrac = e.clipped / n
		}
		if err := ctx.Err(); err != nil {
			return rl.UpdateStats{}, err
		}
		for st, g := range e.grads {
			row := p.row(st)
			for j := range row {
				row[j] += p.cfg.LR * g[j] / n
			}
		}
	}
	stats.MaxStale = p.version - oldest
	p.version++
	stats.NewVersion = p.version
	return stats, nil
}

// sampleStates checks that every sample's action is one plan index and
// returns each sample's state and the oldest policy version among them.
func (p *Policy) sampleStates(samples []rl.Sample) (states []string, oldest int, err error) {
	states = make([]string, len(samples))
	oldest = p.version
	for i, s := range samples {
		if len(s.Action.Tokens) != 1 || s.Action.Tokens[0] < 0 || s.Action.Tokens[0] >= len(p.plans) {
			return nil, 0, fmt.Errorf("tabular: sample %d has tokens %v, want one plan index below %d", i, s.Action.Tokens, len(p.plans))
		}
		states[i] = State(s.Prompt)
		oldest = min(oldest, s.Action.PolicyVersion)
	}
	return states, oldest, nil
}

// epochSums are one pass over the samples: the objective's gradient per
// state (summed, not yet divided by the sample count) and the sums behind
// the reported loss, entropy, KL and clip fraction.
type epochSums struct {
	grads                  map[string][]float64
	loss, ent, kl, clipped float64
}

// epochGradients makes one pass over the samples at the current logits.
func (p *Policy) epochGradients(samples []rl.Sample, states []string) epochSums {
	e := epochSums{grads: map[string][]float64{}}
	for i, s := range samples {
		a := s.Action.Tokens[0]
		probs := p.Probs(states[i])
		lpNew := math.Log(probs[a])
		lpOld := s.Action.LogProb()
		r := math.Exp(lpNew - lpOld)
		A := s.Advantage
		rc := math.Max(1-p.cfg.Clip, math.Min(1+p.cfg.Clip, r))
		surr := math.Min(r*A, rc*A)
		e.loss -= surr
		e.kl += lpOld - lpNew
		g, ok := e.grads[states[i]]
		if !ok {
			g = make([]float64, len(p.plans))
			e.grads[states[i]] = g
		}
		// The min picks the clipped term, whose gradient is zero, only
		// when it is strictly smaller.
		if rc*A < r*A {
			e.clipped++
		} else {
			p.addSurrogateGrad(g, probs, a, A*r)
		}
		e.ent += p.addEntropyGrad(g, probs)
	}
	return e
}

// addSurrogateGrad adds rA·∇ log π(a|s) = rA (e_a − π(·|s)) / T to g.
func (p *Policy) addSurrogateGrad(g, probs []float64, a int, rA float64) {
	T := p.cfg.Temperature
	for j := range g {
		e := 0.0
		if j == a {
			e = 1
		}
		g[j] += rA * (e - probs[j]) / T
	}
}

// addEntropyGrad adds c_H·∇H = c_H·(−π ⊙ (log π + H) / T) to g and returns
// the entropy H of probs.
func (p *Policy) addEntropyGrad(g, probs []float64) float64 {
	T := p.cfg.Temperature
	h := 0.0
	for _, q := range probs {
		if q > 0 {
			h -= q * math.Log(q)
		}
	}
	for j, q := range probs {
		if q > 0 {
			g[j] += p.cfg.EntropyCoef * (-q * (math.Log(q) + h) / T)
		}
	}
	return h
}

type saved struct {
	Version int                  `json:"version"`
	Plans   []string             `json:"plans"`
	Logits  map[string][]float64 `json:"logits"`
	RNG     []byte               `json:"rng"`
}

const fileName = "tabular_policy.json"

// Save writes the policy into dir (write-temp-then-rename).
func (p *Policy) Save(dir string) error {
	st, _ := p.pcg.MarshalBinary()
	b, err := json.Marshal(saved{Version: p.version, Plans: p.plans, Logits: p.logits, RNG: st})
	if err != nil {
		return fmt.Errorf("tabular: save: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("tabular: save: %w", err)
	}
	tmp, err := os.CreateTemp(dir, fileName+".tmp*")
	if err != nil {
		return fmt.Errorf("tabular: save: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("tabular: save: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("tabular: save: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("tabular: save: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, fileName)); err != nil {
		return fmt.Errorf("tabular: save: %w", err)
	}
	return nil
}

// Load reads a policy saved by Save; its plans must be the same.
func (p *Policy) Load(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, fileName))
	if err != nil {
		return fmt.Errorf("tabular: load: %w", err)
	}
	var s saved
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("tabular: load %s: %w", dir, err)
	}
	if fmt.Sprint(s.Plans) != fmt.Sprint(p.plans) {
		return fmt.Errorf("tabular: load %s: saved plans %v differ from %v", dir, s.Plans, p.plans)
	}
	for st, row := range s.Logits {
		if len(row) != len(p.plans) {
			return fmt.Errorf("tabular: load %s: state %q has %d logits for %d plans", dir, st, len(row), len(p.plans))
		}
	}
	if err := p.pcg.UnmarshalBinary(s.RNG); err != nil {
		return fmt.Errorf("tabular: load %s: rng: %w", dir, err)
	}
	p.version, p.logits = s.Version, s.Logits
	if p.logits == nil {
		p.logits = map[string][]float64{}
	}
	return nil
}

// States lists the states the policy has seen, sorted.
func (p *Policy) States() []string {
	out := make([]string, 0, len(p.logits))
	for k := range p.logits {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
