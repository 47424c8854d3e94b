package replay

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mlerl/mlerl/episode"
)

func table(t *testing.T) *Table {
	t.Helper()
	tb, err := LoadTable("testdata/synthetic.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func job(id, key string) episode.Job {
	return episode.Job{ID: id, Task: "synthetic-churn", Kind: episode.Scratch, Code: PlanCode(key, "print(1)\n")}
}

func TestSyntheticTableIsRealistic(t *testing.T) {
	tb := table(t)
	d, s, v := tb.Mean("logreg")
	if d > 2 || s < 0.63 || s > 0.65 || v != 1 {
		t.Errorf("logreg: %v s, score %v, valid %v", d, s, v)
	}
	d, s, _ = tb.Mean("xgb-ensemble")
	if d < 60 || d > 300 || s < 0.85 {
		t.Errorf("xgb-ensemble: %v s, score %v", d, s)
	}
	stages := map[int]bool{}
	for _, k := range tb.Keys() {
		for _, r := range tb.Rows(k) {
			if !r.Valid {
				stages[len(r.Stages)] = true
				if want := -10 + 0.1*float64(len(r.Stages)); r.Reward < want-1e-9 || r.Reward > want+1e-9 {
					t.Errorf("%s: reward %v for %d stages", k, r.Reward, len(r.Stages))
				}
			}
		}
	}
	if len(stages) < 4 {
		t.Errorf("failures reach only %d distinct stage counts", len(stages))
	}
}

func TestVirtualClockOrderAndTies(t *testing.T) {
	tb, err := ReadTable(strings.NewReader(`{"key":"a","duration_s":2,"stages":[],"valid":false,"score":null,"reward":-10}
{"key":"b","duration_s":1,"stages":["imported packages"],"valid":true,"score":0.5,"reward":0.5}`))
	if err != nil {
		t.Fatal(err)
	}
	env, err := New(tb, Config{Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, j := range []episode.Job{job("x", "a"), job("y", "b"), job("z", "a")} {
		if err := env.Submit(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Submit(ctx, job("w", "a")); err == nil {
		t.Error("a fourth job on three workers was accepted")
	}
	// b at 1 s; then the two a's tie at 2 s: submit order decides.
	for _, want := range []struct {
		id  string
		now time.Duration
	}{{"y", time.Second}, {"x", 2 * time.Second}, {"z", 2 * time.Second}} {
		r, err := env.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.Episode != want.id || env.Now() != want.now {
			t.Errorf("got %s at %v, want %s at %v", r.Episode, env.Now(), want.id, want.now)
		}
	}
	if _, err := env.Next(ctx); !errors.Is(err, ErrIdle) {
		t.Errorf("idle Next: %v", err)
	}
	// Busy: 2+1+2 = 5 slot-seconds of 3 workers × 2 s.
	if u := env.Utilisation(); u < 5.0/6-1e-9 || u > 5.0/6+1e-9 {
		t.Errorf("utilisation %v, want 5/6", u)
	}
}

func TestLearnerCostAdvancesClock(t *testing.T) {
	env, _ := New(table(t), Config{Workers: 1, SampleCost: 100 * time.Millisecond, UpdateCost: time.Second})
	ctx := context.Background()
	env.Sampled(3)
	if env.Now() != 300*time.Millisecond {
		t.Fatalf("now %v after sampling 3", env.Now())
	}
	env.Submit(ctx, job("a", "naive-bayes")) // ≤ 0.6 s
	env.Updated(128)                         // the job finishes while the learner updates
	r, _ := env.Next(ctx)
	if env.Now() != 1300*time.Millisecond {
		t.Errorf("clock went back or forward to %v", env.Now())
	}
	busy := r.DurationS / 1.3
	if u := env.Utilisation(); u < busy-1e-9 || u > busy+1e-9 {
		t.Errorf("utilisation %v, want %v: the slot idles while the learner computes", u, busy)
	}
}

func TestUnseenKeys(t *testing.T) {
	ctx := context.Background()
	fail, _ := New(table(t), Config{Workers: 1})
	fail.Submit(ctx, episode.Job{ID: "1", Code: "import numpy\n"})
	r, _ := fail.Next(ctx)
	if r.Valid || r.Reward != -10 || r.DurationS != 1 || !strings.Contains(r.Error, "not in table") || fail.Unseen() != 1 {
		t.Errorf("fail fallback: %+v", r)
	}
	h1, _ := New(table(t), Config{Workers: 1, Fallback: FallbackHash})
	h2, _ := New(table(t), Config{Workers: 1, Fallback: FallbackHash})
	h1.Submit(ctx, episode.Job{ID: "1", Code: "import pandas\n"})
	h2.Submit(ctx, episode.Job{ID: "1", Code: "import pandas\n"})
	a, _ := h1.Next(ctx)
	b, _ := h2.Next(ctx)
	if a.DurationS != b.DurationS || a.Reward != b.Reward || a.Error == "replay: plan not in table" {
		t.Errorf("hash fallback not deterministic or not a table row: %+v %+v", a, b)
	}
}

func TestSameSeedSameOutcomes(t *testing.T) {
	ctx := context.Background()
	run := func(seed uint64) []float64 {
		env, _ := New(table(t), Config{Workers: 1, Seed: seed})
		var out []float64
		for i := 0; i < 20; i++ {
			env.Submit(ctx, job("j"+string(rune('a'+i)), "xgb-ensemble"))
			r, _ := env.Next(ctx)
			out = append(out, r.DurationS)
		}
		return out
	}
	a, b := run(1), run(1)
	distinct := map[float64]bool{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("run differs at %d", i)
		}
		distinct[a[i]] = true
	}
	if len(distinct) < 2 {
		t.Error("a key with several recorded outcomes always gives the same one")
	}
}

func TestKeyOf(t *testing.T) {
	for _, c := range []struct{ code, want string }{
		{"# plan: xgb-tuned\nimport x\n", "xgb-tuned"},
		{"  # plan:   a b  \n", "a b"},
		{"# plan:\nx", "sha256:"},
		{"import x", "sha256:"},
	} {
		if got := KeyOf(c.code); !strings.HasPrefix(got, c.want) || (c.want == "sha256:" && len(got) != 7+64) {
			t.Errorf("KeyOf(%q) = %q, want %q", c.code, got, c.want)
		}
	}
}

func TestReadTableErrors(t *testing.T) {
	for _, in := range []string{
		"",
		"// only a comment\n",
		`{"key":"a","duration_s":-1,"stages":[],"valid":false,"score":null,"reward":-10}`,
		`{"key":"a","duration_s":1,"stages":[],"valid":true,"score":null,"reward":1}`,
		`{"duration_s":1,"stages":[],"valid":false,"score":null,"reward":-10}`,
		`{"key":"a","duration_s":1,"bogus":1}`,
		`{"key":"a",`,
	} {
		if _, err := ReadTable(strings.NewReader(in)); err == nil {
			t.Errorf("ReadTable(%q): no error", in)
		}
	}
	tb, err := ReadTable(strings.NewReader(`{"code":"print(1)\n","duration_s":1,"stages":[],"valid":false,"score":null,"reward":-10}`))
	if err != nil || len(tb.Rows(KeyOf("print(1)\n"))) != 1 {
		t.Errorf("row keyed by its code: %v", err)
	}
}

func FuzzReadTable(f *testing.F) {
	f.Add(`{"key":"a","duration_s":1,"stages":[],"valid":false,"score":null,"reward":-10}`)
	f.Fuzz(func(t *testing.T, s string) {
		tb, err := ReadTable(strings.NewReader(s))
		if err == nil && len(tb.Keys()) == 0 {
			t.Fatal("no error and no keys")
		}
	})
}

func TestSyntheticEmbedded(t *testing.T) {
	tb, err := Builtin("synthetic")
	if err != nil {
		t.Fatal(err)
	}
	if tb.Task() != "synthetic-churn" || len(tb.Keys()) != len(table(t).Keys()) {
		t.Errorf("embedded table: task %q, %d keys", tb.Task(), len(tb.Keys()))
	}
}

// The built-in real tables: recorded from real runs of recipe plans on
// suite tasks, keyed by plan keys (not code hashes), with repeats, real
// failures (partial-credit rewards) and a real duration spread.
func TestBuiltinRealTables(t *testing.T) {
	for _, name := range []string{DefaultTable, "letter-recognition"} {
		t.Run(name, func(t *testing.T) { checkRealTable(t, name) })
	}
	if _, err := Builtin("no-such-table"); err == nil || !strings.Contains(err.Error(), "synthetic") {
		t.Errorf("unknown built-in: %v", err)
	}
}

func checkRealTable(t *testing.T, name string) {
	tb, err := Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	if tb.Task() != name {
		t.Fatalf("task %q", tb.Task())
	}
	var failed, valid int
	minD, maxD := math.Inf(1), 0.0
	for _, k := range tb.Keys() {
		if !strings.Contains(k, "model.family=") || strings.HasPrefix(k, "sha256:") {
			t.Errorf("key %q is not a recipe plan key", k)
		}
		if n := len(tb.Rows(k)); n < 2 {
			t.Errorf("%s: %d rows, want repeats", k, n)
		}
		for _, r := range tb.Rows(k) {
			if r.Valid {
				valid++
			} else {
				failed++
				if r.Reward >= -9 || r.Reward < -10 || r.Error == "" {
					t.Errorf("failed row %+v: want reward -10 + 0.1/stage and an error", r)
				}
			}
			if r.Note == "" || r.Isolation == "" {
				t.Errorf("row without note or isolation: %+v", r)
			}
		}
		d, _, _ := tb.Mean(k)
		minD, maxD = min(minD, d), max(maxD, d)
	}
	// hpc-job-class's plans take 1.5-7.3 s on average with one thread each.
	if len(tb.Keys()) < 12 || failed == 0 || valid == 0 || maxD < 4*minD {
		t.Errorf("%d keys, %d valid and %d failed rows, mean durations %.1f-%.1f s: want a varied table", len(tb.Keys()), valid, failed, minD, maxD)
	}
}
