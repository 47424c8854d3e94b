package tabular

import (
	"context"
	"math"
	"testing"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/task"
)

var tk = &task.Task{Name: "t"}

func sample(plan int, oldProb, adv float64) rl.Sample {
	return rl.Sample{
		Prompt:    rl.Prompt{Kind: episode.Scratch, Task: tk},
		Action:    rl.Action{Tokens: []int{plan}, TokenLogProbs: []float64{math.Log(oldProb)}},
		Advantage: adv,
	}
}

// objective is the PPO surrogate plus entropy bonus, written out directly.
func objective(p *Policy, samples []rl.Sample) float64 {
	j := 0.0
	for _, s := range samples {
		probs := p.Probs(State(s.Prompt))
		a := s.Action.Tokens[0]
		r := math.Exp(math.Log(probs[a]) - s.Action.LogProb())
		rc := math.Max(1-p.cfg.Clip, math.Min(1+p.cfg.Clip, r))
		j += math.Min(r*s.Advantage, rc*s.Advantage)
		for _, q := range probs {
			j -= p.cfg.EntropyCoef * q * math.Log(q)
		}
	}
	return j / float64(len(samples))
}

// One SGD step moves the logits by LR × the exact gradient: compare with
// central finite differences of the objective, on stale samples (behaviour
// probabilities differ from the current policy's), some of them clipped.
func TestGradientMatchesFiniteDifferences(t *testing.T) {
	cfg := Config{LR: 1e-3, Clip: 0.2, Epochs: 1, EntropyCoef: 0.05, Temperature: 0.7}
	p, _ := New([]string{"a", "b", "c"}, cfg)
	p.logits["t|scratch|"] = []float64{0.3, -0.2, 0.1}
	samples := []rl.Sample{
		sample(0, 0.30, 1.5),  // ratio ≈ 1.4: clipped for a positive advantage
		sample(1, 0.25, -0.7), // ratio ≈ 0.8: unclipped
		sample(2, 0.33, 0.4),  // ratio ≈ 1: unclipped
		sample(1, 0.40, -2),   // ratio ≈ 0.5: clipped for a negative advantage
	}
	before := append([]float64(nil), p.logits["t|scratch|"]...)
	const h = 1e-6
	numeric := make([]float64, 3)
	for j := range numeric {
		q, _ := New(p.plans, cfg)
		q.logits["t|scratch|"] = append([]float64(nil), before...)
		q.logits["t|scratch|"][j] += h
		up := objective(q, samples)
		q.logits["t|scratch|"][j] -= 2 * h
		numeric[j] = (up - objective(q, samples)) / (2 * h)
	}
	st, err := p.Update(context.Background(), samples)
	if err != nil {
		t.Fatal(err)
	}
	for j := range numeric {
		got := (p.logits["t|scratch|"][j] - before[j]) / cfg.LR
		if math.Abs(got-numeric[j]) > 1e-6 {
			t.Errorf("d/dθ%d: step %v, finite difference %v", j, got, numeric[j])
		}
	}
	if st.ClipFrac != 0.5 || st.NewVersion != 1 || p.Version() != 1 {
		t.Errorf("stats %+v", st)
	}
}

// A sample whose ratio is beyond 1+ε with a positive advantage adds nothing:
// PPO will not push an action further than the clip from its behaviour policy.
func TestClippedSampleHasNoGradient(t *testing.T) {
	p, _ := New([]string{"a", "b"}, Config{LR: 1, Clip: 0.2, Epochs: 3})
	// Uniform now (0.5); the behaviour policy gave it 0.3: ratio 5/3.
	st, err := p.Update(context.Background(), []rl.Sample{sample(0, 0.3, 2)})
	if err != nil {
		t.Fatal(err)
	}
	if l := p.logits["t|scratch|"]; l[0] != 0 || l[1] != 0 || st.ClipFrac != 1 {
		t.Errorf("logits %v, clip frac %v", l, st.ClipFrac)
	}
	if want := math.Log(0.3) - math.Log(0.5); math.Abs(st.KL-want) > 1e-12 {
		t.Errorf("kl %v, want %v", st.KL, want)
	}
	// Inside the clip range it moves toward the action.
	if _, err := p.Update(context.Background(), []rl.Sample{sample(0, 0.5, 2)}); err != nil {
		t.Fatal(err)
	}
	if pr := p.Probs("t|scratch|"); pr[0] <= 0.5 {
		t.Errorf("positive advantage lowered the probability: %v", pr)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	p, _ := New([]string{"a", "b", "c"}, Config{LR: 1, Clip: 0.2, Epochs: 1, Seed: 3})
	p.Update(context.Background(), []rl.Sample{sample(2, 1.0/3, 1)})
	dir := t.TempDir()
	if err := p.Save(dir); err != nil {
		t.Fatal(err)
	}
	q, _ := New([]string{"a", "b", "c"}, Config{LR: 1, Clip: 0.2, Epochs: 1, Seed: 99})
	if err := q.Load(dir); err != nil {
		t.Fatal(err)
	}
	prompts := make([]rl.Prompt, 50)
	for i := range prompts {
		prompts[i] = rl.Prompt{Kind: episode.Scratch, Task: tk}
	}
	a, _ := p.Sample(context.Background(), prompts)
	b, _ := q.Sample(context.Background(), prompts)
	for i := range a {
		if a[i].Plan != b[i].Plan || a[i].TokenLogProbs[0] != b[i].TokenLogProbs[0] || b[i].PolicyVersion != 1 {
			t.Fatalf("sample %d differs after load: %+v vs %+v", i, a[i], b[i])
		}
	}
	other, _ := New([]string{"x"}, Config{})
	if err := other.Load(dir); err == nil {
		t.Error("loaded a policy over other plans")
	}
}

func TestUpdateRejectsForeignTokens(t *testing.T) {
	p, _ := New([]string{"a"}, DefaultConfig())
	for _, tokens := range [][]int{nil, {1}, {-1}, {0, 0}} {
		s := sample(0, 1, 1)
		s.Action.Tokens = tokens
		if _, err := p.Update(context.Background(), []rl.Sample{s}); err == nil {
			t.Errorf("tokens %v accepted", tokens)
		}
	}
	if _, err := New(nil, DefaultConfig()); err == nil {
		t.Error("no plans accepted")
	}
}
