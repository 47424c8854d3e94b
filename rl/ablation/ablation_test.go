package ablation

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/rl/replay"
	"github.com/mlerl/mlerl/rl/tabular"
	"github.com/mlerl/mlerl/task"
)

func loadTable(t testing.TB) *replay.Table {
	t.Helper()
	tb, err := replay.LoadTable("../replay/testdata/synthetic.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// ablate3 runs the ablation, logs its table, and checks it ran 3 seeds per arm.
func ablate3(t *testing.T, cfg Config) (Result, string) {
	t.Helper()
	r, err := Ablate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	WriteTable(&buf, r)
	t.Log("\n" + buf.String())
	if r.Seeds != 3 || len(r.Naive.PerSeed) != 3 || len(r.DurationAware.PerSeed) != 3 {
		t.Fatalf("want 3 seeds per arm, got %d (%d and %d runs)", r.Seeds, len(r.Naive.PerSeed), len(r.DurationAware.PerSeed))
	}
	return r, buf.String()
}

// The paper's Figure 8 effect on the synthetic table: without the duration
// weight the policy settles on faster, weaker programs; with it, on slower,
// stronger ones. Checked on every seed, not only on average.
func TestAblationEffect(t *testing.T) {
	cfg := SyntheticConfig()
	cfg.Table = loadTable(t)
	r, table := ablate3(t, cfg)
	for i := range r.Naive.PerSeed {
		n, a := r.Naive.PerSeed[i], r.DurationAware.PerSeed[i]
		if a.FinalMeanDurationS <= n.FinalMeanDurationS {
			t.Errorf("seed %d: duration-aware mean duration %.1fs not above naive %.1fs", n.Seed, a.FinalMeanDurationS, n.FinalMeanDurationS)
		}
		if a.FinalMeanScore <= n.FinalMeanScore {
			t.Errorf("seed %d: duration-aware mean score %.4f not above naive %.4f", n.Seed, a.FinalMeanScore, n.FinalMeanScore)
		}
	}
	// The weight is the whole difference; the naive arm sees more completions
	// in the same budget because it runs faster programs.
	if r.Naive.Episodes <= r.DurationAware.Episodes {
		t.Errorf("naive completed %.0f episodes, duration-aware %.0f: expected naive to complete more", r.Naive.Episodes, r.DurationAware.Episodes)
	}
	if !strings.Contains(table, "duration-aware") {
		t.Error("table lacks the duration-aware arm")
	}
}

func TestAblationDeterministic(t *testing.T) {
	cfg := SyntheticConfig()
	cfg.Table = loadTable(t)
	cfg.Seeds, cfg.Budget = 1, cfg.Budget/8
	a, err := Ablate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Ablate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("same seed, different results:\n%+v\n%+v", a, b)
	}
}

func TestAblationBadConfig(t *testing.T) {
	for _, c := range []Config{{}, {Table: loadTable(t), Seeds: 0, Workers: 4, Batch: 4, Budget: 1}} {
		if _, err := Ablate(context.Background(), c); err == nil {
			t.Errorf("config %+v: want an error", c)
		}
	}
}

// The paper's Figure 8 effect on the table recorded from real runs
// (hpc-job-class), at the default setting: the naive arm's policy writes
// faster programs on every seed, and weaker ones on average; the duration-aware
// arm keeps slower, stronger ones. Virtual clock: well under a second.
func TestAblationEffectRealTable(t *testing.T) {
	tb, err := replay.Builtin(replay.DefaultTable)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Table, cfg.Task = tb, tb.Task()
	r, _ := ablate3(t, cfg)
	for i := range r.Naive.PerSeed {
		n, a := r.Naive.PerSeed[i], r.DurationAware.PerSeed[i]
		if a.FinalMeanDurationS <= n.FinalMeanDurationS {
			t.Errorf("seed %d: duration-aware mean duration %.1fs not above naive %.1fs", n.Seed, a.FinalMeanDurationS, n.FinalMeanDurationS)
		}
	}
	n, a := r.Naive, r.DurationAware
	if a.FinalMeanScore <= n.FinalMeanScore {
		t.Errorf("mean over seeds: duration-aware score %.4f not above naive %.4f", a.FinalMeanScore, n.FinalMeanScore)
	}
	// The table's plans take 1.5-7.3 s on average (one thread each, as train
	// runs them), so the gap in duration is bounded; it was 6.6 s against
	// 5.5 s when the table was recorded (2026-11-25).
	if a.FinalMeanDurationS < 1.15*n.FinalMeanDurationS {
		t.Errorf("mean duration: duration-aware %.1fs, naive %.1fs: want at least 15%% longer", a.FinalMeanDurationS, n.FinalMeanDurationS)
	}
	if len(n.Trajectory) != cfg.Points || n.Trajectory[len(n.Trajectory)-1].MeanScore != n.FinalMeanScore {
		t.Errorf("trajectory %+v: want %d points ending at the final numbers", n.Trajectory, cfg.Points)
	}
	for i := 1; i < len(n.Trajectory); i++ {
		if n.Trajectory[i].TimeS <= n.Trajectory[i-1].TimeS || n.Trajectory[i].Updates < n.Trajectory[i-1].Updates {
			t.Errorf("trajectory not in time order: %+v", n.Trajectory)
		}
	}
}

// Past the early phase the score gap closes and turns on this table (see the
// package comment); the duration gap stays. Checked so the comment stays true.
func TestAblationRealTableLongBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds")
	}
	tb, err := replay.Builtin(replay.DefaultTable)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Table, cfg.Task, cfg.Budget = tb, tb.Task(), time.Hour
	r, err := Ablate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	n, a := r.Naive, r.DurationAware
	t.Logf("1 h: naive %.4f in %.1fs, duration-aware %.4f in %.1fs", n.FinalMeanScore, n.FinalMeanDurationS, a.FinalMeanScore, a.FinalMeanDurationS)
	// The table's plans take 1.5-7.3 s on average (one thread each, as train
	// runs them), so the gap in duration is bounded; it was 6.6 s against
	// 5.5 s when the table was recorded (2026-11-25).
	if a.FinalMeanDurationS < 1.15*n.FinalMeanDurationS {
		t.Errorf("mean duration: duration-aware %.1fs, naive %.1fs: want at least 15%% longer", a.FinalMeanDurationS, n.FinalMeanDurationS)
	}
	if n.FinalMeanScore < a.FinalMeanScore {
		t.Errorf("naive %.4f below duration-aware %.4f after 1 h: the package comment says the score gap has turned by then; update it",
			n.FinalMeanScore, a.FinalMeanScore)
	}
}

// The package comment's "why": with a fixed policy (learning rate 0) every
// plan's share of the completed episodes is its probability, however long it
// runs — a freed slot samples afresh — not probability / duration. Measured
// after the first 5 virtual minutes, once every slot has turned over.
func TestFixedPolicyCompletionsFollowProbabilities(t *testing.T) {
	tb, err := replay.Builtin(replay.DefaultTable)
	if err != nil {
		t.Fatal(err)
	}
	env, err := replay.New(tb, replay.Config{Workers: 64, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := tabular.New(tb.Keys(), tabular.Config{LR: 0, Epochs: 1, Temperature: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	lc := rl.DefaultConfig()
	lc.Batch, lc.Budget, lc.MaxStaleness, lc.ImproveFraction = 64, 30*time.Minute, -1, 0
	sink := &rl.Memory{}
	if _, err := rl.Run(context.Background(), lc, env, pol, []*task.Task{{Name: tb.Task()}}, sink); err != nil {
		t.Fatal(err)
	}
	count, total := map[string]int{}, 0
	for _, e := range sink.EpisodeRecs {
		if e.DoneS > 300 {
			count[e.Plan]++
			total++
		}
	}
	want := 1 / float64(len(tb.Keys()))
	for _, k := range tb.SortedKeys() {
		d, _, _ := tb.Mean(k)
		share := float64(count[k]) / float64(total)
		if share < 0.85*want || share > 1.15*want {
			t.Errorf("%s (%.1f s): share %.4f of %d completions, want about %.4f", tb.Rows(k)[0].Note, d, share, total, want)
		}
	}
}
