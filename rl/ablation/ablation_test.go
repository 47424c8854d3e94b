package ablation

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mlerl/mlerl/rl/replay"
)

func loadTable(t testing.TB) *replay.Table {
	t.Helper()
	tb, err := replay.LoadTable("../replay/testdata/synthetic.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// The paper's Figure 8 effect on the synthetic table: without the duration
// weight the policy settles on faster, weaker programs; with it, on slower,
// stronger ones. Checked on every seed, not only on average.
func TestAblationEffect(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Table = loadTable(t)
	r, err := Ablate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	WriteTable(&buf, r)
	t.Log("\n" + buf.String())
	if r.Seeds != 3 || len(r.Naive.PerSeed) != 3 || len(r.DurationAware.PerSeed) != 3 {
		t.Fatalf("want 3 seeds per arm, got %+v", r)
	}
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
	if !strings.Contains(buf.String(), "duration-aware") {
		t.Error("table lacks the duration-aware arm")
	}
}

func TestAblationDeterministic(t *testing.T) {
	cfg := DefaultConfig()
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
	if a.Naive.PerSeed[0] != b.Naive.PerSeed[0] || a.DurationAware.PerSeed[0] != b.DurationAware.PerSeed[0] {
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
