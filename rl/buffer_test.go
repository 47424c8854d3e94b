package rl

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mlerl/mlerl/episode"
)

func lineSol(code, line string, reward float64) *Solution {
	s := sol("t", code, true, reward)
	s.Action.Line = line
	return s
}

// With Lines 2, half the draws go to the best of the two best lines other
// than the best program's (a quarter each), the rest to the best (K = 1); a
// third line and a line's second program are never drawn. With LinesAfter,
// so once the stall has reached it.
func TestBufferLinesPick(t *testing.T) {
	b := NewBuffer(1)
	b.Lines, b.LinesAfter = 2, 5*time.Minute
	for _, s := range []*Solution{
		lineSol("hgb1", "hgb", 0.9), lineSol("xgb1", "xgb", 0.5), lineSol("xgb2", "xgb", 0.6),
		lineSol("rf1", "rf", 0.4), lineSol("knn1", "knn", 0.1), lineSol("hgb2", "hgb", 0.8),
	} {
		b.Add(s)
	}
	got := []string{}
	for _, s := range b.LineBests("t") {
		got = append(got, s.Action.Code)
	}
	if want := []string{"hgb1", "xgb2", "rf1", "knn1"}; !slices.Equal(got, want) {
		t.Fatalf("line bests %v, want %v", got, want)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 40000
	count := map[string]int{}
	for range n {
		count[b.Pick("t", 5*time.Minute, rng).Action.Code]++
	}
	for code, want := range map[string]float64{"hgb1": 0.5, "xgb2": 0.25, "rf1": 0.25, "knn1": 0, "xgb1": 0, "hgb2": 0} {
		// 5 standard deviations of a binomial share at n = 40000 is under 0.013.
		if got := float64(count[code]) / n; math.Abs(got-want) > 0.013 {
			t.Errorf("%s picked %.3f of the time, want %.3f", code, got, want)
		}
	}
	// A new best from another line: its line is now the one left out, and
	// the old best's line becomes a parent of the other half.
	b.Add(lineSol("xgb3", "xgb", 0.95))
	others := b.otherLines("t", b.ByTask["t"][0])
	if len(others) != 2 || others[0].Action.Code != "hgb1" || others[1].Action.Code != "rf1" {
		t.Errorf("other lines after a new best %v, want hgb1 and rf1", others)
	}
}

// Without Lines, lines named by the policy change nothing: the draws are
// the ones Pick made before lines existed (the best on a first coin of 0,
// else a uniform one of the K), from the same random stream, so runs
// without --lines replay the stores of earlier ones. The same holds with
// Lines and LinesAfter while the best has stood less than LinesAfter, so a
// run's first minutes replay the store of a run without lines.
func TestBufferWithoutLinesDrawsAsBefore(t *testing.T) {
	for _, c := range []struct {
		name         string
		lines        int
		after, stood time.Duration
	}{
		{"no lines", 0, 0, time.Hour},
		{"lines, the best standing less than lines after", 2, 5 * time.Minute, 5*time.Minute - time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := NewBuffer(4)
			b.Lines, b.LinesAfter = c.lines, c.after
			for i, r := range []float64{0.2, 0.9, 0.5, 0.7} {
				b.Add(lineSol(string(rune('a'+i)), []string{"x", "y", "z", "w"}[i], r))
			}
			list := b.ByTask["t"]
			before := func(rng *rand.Rand) *Solution { // Pick as it was
				if rng.IntN(2) == 0 {
					return list[0]
				}
				return list[rng.IntN(len(list))]
			}
			r1, r2 := rand.New(rand.NewPCG(5, 6)), rand.New(rand.NewPCG(5, 6))
			for i := range 1000 {
				if a, want := b.Pick("t", c.stood, r1).Action.Code, before(r2).Action.Code; a != want {
					t.Fatalf("draw %d: %s, before lines %s", i, a, want)
				}
			}
			if kept := len(b.LineBests("t")); (kept != 0) != (c.lines > 0) {
				t.Errorf("%d line bests kept with Lines %d", kept, c.lines)
			}
		})
	}
}

// An improve prompt edits the other line's best only once the task's best
// has stood LinesAfter on the run's clock, and then half the time.
func TestLinesAfterPrompts(t *testing.T) {
	cfg := testConfig()
	cfg.ImproveFraction, cfg.Lines, cfg.LinesAfter = 1, 1, 10*time.Second
	l, err := newLearner(cfg, twoPlans(t, 2), &scripted{}, tasks, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.buffer.Add(lineSol("fast", "a", 1))
	l.buffer.Add(lineSol("slow", "b", 0))
	l.bestSince["t"] = 3 * time.Second
	for _, c := range []struct {
		now        time.Duration
		minS, maxS float64 // share of prompts editing the other line's best
	}{
		{12*time.Second + 999*time.Millisecond, 0, 0},
		{13 * time.Second, 0.45, 0.55},
	} {
		l.elapsed = c.now // the replay clock stands at 0: now is elapsed
		slow := 0
		const n = 4000
		for range n {
			if p := l.prompt(); p.Parent.Action.Code == "slow" {
				slow++
			}
		}
		if got := float64(slow) / n; got < c.minS || got > c.maxS {
			t.Errorf("best standing %v: %.3f of edits of the other line, want %.2f to %.2f", c.now-3*time.Second, got, c.minS, c.maxS)
		}
	}
}

// In a run, a new best restarts the wait (kept in the checkpoint): "fast",
// the best, is found at 1 s and never beaten; with a wait longer than the
// run the other line is never edited, with a short one it is.
func TestLinesAfterInRun(t *testing.T) {
	for _, c := range []struct {
		after            time.Duration
		minSlow, maxSlow int
	}{
		{5 * time.Second, 8, 60},
		{time.Hour, 0, 0},
	} {
		cfg := testConfig()
		cfg.Batch, cfg.MaxEpisodes, cfg.ImproveFraction, cfg.Lines, cfg.LinesAfter = 2, 60, 1, 1, c.after
		pol := &scripted{plans: []string{"fast", "slow"}, lines: map[string]string{"fast": "a", "slow": "b"}}
		sink := &Memory{}
		if _, err := Run(context.Background(), cfg, twoPlans(t, 2), pol, tasks, sink); err != nil {
			t.Fatal(err)
		}
		slow := 0
		for _, pr := range pol.prompts {
			if pr.Kind == episode.Improve && pr.Parent.Action.Plan == "slow" {
				slow++
			}
		}
		if slow < c.minSlow || slow > c.maxSlow {
			t.Errorf("lines after %v: %d edits of the other line, want %d to %d", c.after, slow, c.minSlow, c.maxSlow)
		}
		if got := sink.LastCK.BestSince["t"]; got != time.Second {
			t.Errorf("lines after %v: checkpointed best since %v, want 1s (fast's completion)", c.after, got)
		}
		if l := resumed(t, cfg, sink.LastCK); l.bestSince["t"] != time.Second {
			t.Errorf("resumed best since %v, want 1s", l.bestSince["t"])
		}
	}
}

func TestCheckLinesAfter(t *testing.T) {
	for _, c := range []struct {
		after time.Duration
		lines int
		ok    bool
	}{
		{0, 0, true}, {0, 2, true}, {5 * time.Minute, 2, true}, {-time.Second, 2, false}, {5 * time.Minute, 0, false},
	} {
		if err := CheckLinesAfter(c.after, c.lines); (err == nil) != c.ok {
			t.Errorf("CheckLinesAfter(%d, %d) = %v, want ok %v", c.after, c.lines, err, c.ok)
		}
	}
	cfg := testConfig()
	cfg.LinesAfter = time.Minute // without lines
	if _, err := Run(context.Background(), cfg, twoPlans(t, 2), &scripted{plans: []string{"fast"}}, tasks, &Memory{}); err == nil {
		t.Error("a run with lines after but no lines started")
	}
}

// A run with Lines gives improve prompts the other line's best as well as
// the best, keeps the line bests in its checkpoint, and a resume restores
// them, an older best keeping its line on a tie with a buffered program.
func TestLinesInRunAndCheckpoint(t *testing.T) {
	cfg := testConfig()
	cfg.Batch, cfg.MaxEpisodes, cfg.ImproveFraction, cfg.Lines = 2, 40, 1, 1
	pol := &scripted{plans: []string{"fast", "slow"}, lines: map[string]string{"fast": "a", "slow": "b"}}
	sink := &Memory{}
	if _, err := Run(context.Background(), cfg, twoPlans(t, 2), pol, tasks, sink); err != nil {
		t.Fatal(err)
	}
	parents := map[string]int{}
	for _, pr := range pol.prompts {
		if pr.Kind == episode.Improve {
			parents[pr.Parent.Action.Plan]++
		}
	}
	// 38 improve prompts (the first two have no parent yet), half to each
	// line's best in expectation: each gets at least 8 unless the learner
	// ignores lines (then "slow", worse than "fast", gets none).
	if parents["fast"] < 8 || parents["slow"] < 8 {
		t.Errorf("improve parents %v: want both lines' bests edited", parents)
	}
	ck := sink.LastCK
	if len(ck.LineBests) != 2 || ck.LineBests[0].Action.Plan != "fast" || ck.LineBests[1].Action.Plan != "slow" {
		t.Fatalf("checkpointed line bests %+v, want fast then slow", ck.LineBests)
	}
	// A buffered program of line b scoring as the line's best, but newer:
	// the restored line keeps its best.
	tie := storeSolution(&Solution{Action: Action{Plan: "slow2", Code: "slow2", Line: "b"}, Result: ck.LineBests[1].Result})
	ck.Buffer = append(ck.Buffer, tie)
	l := resumed(t, cfg, ck)
	var got []string
	for _, s := range l.buffer.LineBests("t") {
		got = append(got, s.Action.Plan)
	}
	if !slices.Equal(got, []string{"fast", "slow"}) {
		t.Errorf("resumed line bests %v, want [fast slow]", got)
	}
}

// resumed is a learner resumed from ck as a run would be: the checkpoint
// through its JSON, then restored with cfg.
func resumed(t *testing.T, cfg Config, ck *Checkpoint) *learner {
	t.Helper()
	raw, err := json.Marshal(ck)
	if err != nil {
		t.Fatal(err)
	}
	var back Checkpoint
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	cfg.Resume = &back
	l, err := newLearner(cfg, twoPlans(t, 2), &scripted{version: back.PolicyVersion}, tasks, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
