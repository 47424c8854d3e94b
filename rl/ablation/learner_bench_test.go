package ablation

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/rl/replay"
	"github.com/mlerl/mlerl/rl/tabular"
	"github.com/mlerl/mlerl/task"
)

func replayRun(t testing.TB, seed uint64, workers int, budget time.Duration, cost time.Duration) (*rl.Memory, *replay.Env, rl.Summary) {
	tb := loadTable(t)
	env, err := replay.New(tb, replay.Config{Workers: workers, Seed: seed, UpdateCost: cost})
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := tabular.New(tb.Keys(), tabular.Config{LR: 0.5, Clip: 0.2, Epochs: 4, EntropyCoef: 1e-3, Temperature: 1, Seed: seed})
	cfg := rl.DefaultConfig()
	cfg.Batch, cfg.Budget, cfg.Seed = 32, budget, seed
	sink := &rl.Memory{}
	sum, err := rl.Run(context.Background(), cfg, env, pol, []*task.Task{{Name: "synthetic-churn"}}, sink)
	if err != nil {
		t.Fatal(err)
	}
	return sink, env, sum
}

// Same seed, same run: every metrics line and every episode identical.
func TestReplayRunDeterministic(t *testing.T) {
	a, _, sa := replayRun(t, 3, 32, 30*time.Minute, 0)
	b, _, sb := replayRun(t, 3, 32, 30*time.Minute, 0)
	if len(a.MetricLines) < 10 {
		t.Fatalf("only %d updates", len(a.MetricLines))
	}
	if !reflect.DeepEqual(a.MetricLines, b.MetricLines) || !reflect.DeepEqual(a.EpisodeRecs, b.EpisodeRecs) || !reflect.DeepEqual(sa, sb) {
		t.Fatal("same seed, different runs")
	}
	c, _, _ := replayRun(t, 4, 32, 30*time.Minute, 0)
	if reflect.DeepEqual(a.MetricLines, c.MetricLines) {
		t.Error("different seeds, identical runs")
	}
}

// Executor utilisation (busy slot-time / available slot-time on the virtual
// clock) with 64 simulated workers, for a learner that costs nothing and for
// one whose update is modelled at 2 s.
func BenchmarkUtilisation64Workers(b *testing.B) {
	for _, cost := range []time.Duration{0, 2 * time.Second} {
		b.Run(fmt.Sprintf("update_cost=%v", cost), func(b *testing.B) {
			var u float64
			for i := 0; i < b.N; i++ {
				_, env, _ := replayRun(b, uint64(i+1), 64, time.Hour, cost)
				u = env.Utilisation()
			}
			b.ReportMetric(100*u, "util%")
		})
	}
}

// Learner update time for a batch of 128 with the tabular policy: advantages,
// weights and 4 PPO epochs, measured through Policy.Update on a realistic batch.
func BenchmarkUpdateBatch128(b *testing.B) {
	tb := loadTable(b)
	pol, _ := tabular.New(tb.Keys(), tabular.DefaultConfig())
	prompts := make([]rl.Prompt, 128)
	for i := range prompts {
		prompts[i] = rl.Prompt{Kind: episode.Scratch, Task: &task.Task{Name: "synthetic-churn"}}
	}
	acts, _ := pol.Sample(context.Background(), prompts)
	samples := make([]rl.Sample, 128)
	durs := make([]float64, 128)
	for i, a := range acts {
		d, s, _ := tb.Mean(a.Plan)
		durs[i] = d
		samples[i] = rl.Sample{Prompt: prompts[i], Action: a, Reward: s - 0.7}
	}
	w := rl.DurationWeights(durs)
	for i := range samples {
		samples[i].Advantage = samples[i].Reward * w[i]
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := pol.Update(context.Background(), samples); err != nil {
			b.Fatal(err)
		}
	}
}
