package rl

import (
	"context"
	"testing"
	"time"

	"github.com/mlerl/mlerl/episode"
)

func TestWidenShare(t *testing.T) {
	for _, tc := range []struct {
		stall, after int
		want         float64
	}{
		{0, 0, 0}, {1000, 0, 0}, // off
		{0, 64, 0}, {64, 64, 0}, // waiting
		{65, 64, 1.0 / 128}, {128, 64, 0.5}, {191, 64, 127.0 / 128},
		{192, 64, 1}, {5000, 64, 1}, // all of the prior
		{11, 10, 0.05}, {30, 10, 1},
	} {
		if got := WidenShare(tc.stall, tc.after); got != tc.want {
			t.Errorf("WidenShare(%d, %d) = %v, want %v", tc.stall, tc.after, got, tc.want)
		}
	}
	if CheckWidenAfter(-1) == nil || CheckWidenAfter(0) != nil || CheckWidenAfter(64) != nil {
		t.Error("CheckWidenAfter accepts a negative wait or refuses 0 / 64")
	}
	if _, err := Run(context.Background(), func() Config { c := testConfig(); c.WidenAfter = -3; return c }(), twoPlans(t, 2), &scripted{plans: []string{"a"}}, tasks, nil); err == nil {
		t.Error("a run with WidenAfter -3 started")
	}
}

// plateau is a virtual-clock Env whose first five completions each set a new
// best, then none until the 150th, which does, then none again: a run that
// stalls twice. It records how many completions there were when each job
// was submitted, so a test can recount the stall each prompt saw.
type plateau struct {
	now      time.Duration
	pending  []episode.Job
	n        int
	atSubmit []int
}

func (p *plateau) Slots() int { return 2 }
func (p *plateau) Submit(_ context.Context, j episode.Job) error {
	p.pending = append(p.pending, j)
	p.atSubmit = append(p.atSubmit, p.n)
	return nil
}
func (p *plateau) Next(context.Context) (episode.Result, error) {
	j := p.pending[0]
	p.pending = p.pending[1:]
	p.now += time.Second
	score := plateauScore(p.n)
	p.n++
	return episode.Result{Episode: j.ID, Task: j.Task, Kind: j.Kind, Valid: true, Score: &score, Reward: score, DurationS: 1}, nil
}
func (p *plateau) Now() time.Duration { return p.now }

func plateauScore(n int) float64 {
	switch {
	case n < 5:
		return float64(n + 1)
	case n == 150:
		return 100
	}
	return 0
}

// With WidenAfter a task's improve prompts carry WidenShare of the episodes
// completed since its last new best: 0 while the best moves, rising once it
// has stalled for WidenAfter episodes, all of the prior after 3·WidenAfter,
// and back to 0 after the next new best. Scratch prompts are never widened.
// The stall is checkpointed and a resume continues from it; without the
// setting nothing is widened or kept.
func TestWidenInRun(t *testing.T) {
	for _, after := range []int{0, 20} {
		cfg := testConfig()
		cfg.Batch, cfg.MaxEpisodes, cfg.ImproveFraction, cfg.WidenAfter, cfg.Seed = 4, 300, 0.5, after, 5
		pol := &scripted{plans: []string{"a", "b", "c"}}
		env := &plateau{}
		sink := &Memory{}
		if _, err := Run(context.Background(), cfg, env, pol, tasks, sink); err != nil {
			t.Fatal(err)
		}
		// stall[k]: episodes without a new best after k completions.
		stall := make([]int, env.n+1)
		best := -1.0
		for k := range env.n {
			if s := plateauScore(k); s > best {
				best, stall[k+1] = s, 0
			} else {
				stall[k+1] = stall[k] + 1
			}
		}
		if len(pol.prompts) != len(env.atSubmit) {
			t.Fatalf("%d prompts, %d jobs submitted", len(pol.prompts), len(env.atSubmit))
		}
		var partial, full, afterNewBest int
		for i, pr := range pol.prompts {
			k := env.atSubmit[i]
			want := 0.0
			if pr.Kind == episode.Improve {
				want = WidenShare(stall[k], after)
			}
			if pr.Widen != want {
				t.Fatalf("after %d: prompt %d (%s, %d completions, stall %d) has Widen %v, want %v", after, i, pr.Kind, k, stall[k], pr.Widen, want)
			}
			switch {
			case pr.Widen > 0 && pr.Widen < 1:
				partial++
			case pr.Widen == 1:
				full++
			case pr.Kind == episode.Improve && k > 151 && k < 151+after:
				afterNewBest++
			}
		}
		if after == 0 {
			if partial+full != 0 || len(sink.LastCK.Stalls) != 0 {
				t.Errorf("off: %d prompts widened, checkpoint keeps stalls %v", partial+full, sink.LastCK.Stalls)
			}
			continue
		}
		if partial == 0 || full == 0 || afterNewBest == 0 {
			t.Errorf("the run did not go through every phase: %d prompts partly widened, %d fully, %d plain edits after the second best", partial, full, afterNewBest)
		}
		ck := sink.LastCK
		if ck.Stalls["t"] < 3*after {
			t.Fatalf("checkpointed stall %v, want at least %d (no new best after the 151st completion)", ck.Stalls, 3*after)
		}
		if l := resumed(t, cfg, ck); l.stalls["t"] != ck.Stalls["t"] {
			t.Errorf("resumed stall %d, checkpointed %d", l.stalls["t"], ck.Stalls["t"])
		}
	}
}
