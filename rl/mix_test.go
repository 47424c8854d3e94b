package rl

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/mlerl/mlerl/episode"
)

// The share starts at the half, moves to improve prompts when their
// episodes set the new bests and scratch ones do not, back when both win
// alike, never below the half when scratch wins more, and follows the run's
// phase: early scratch wins are forgotten once edits are what wins.
func TestMixImproveShare(t *testing.T) {
	m := Mix{}
	if got := m.ImproveShare("t"); got != 0.5 {
		t.Fatalf("fresh share %v, want 0.5", got)
	}
	for range 10 { // the first programs: every scratch one a new best
		m.Observe("t", episode.Scratch, true)
	}
	early := m.ImproveShare("t")
	if early != MixLow {
		t.Errorf("after ten scratch new bests and no edit: share %.3f, want the bound %.1f", early, MixLow)
	}
	// Then edits win one in forty (as late in a long run), scratch programs
	// never: the share rises as the early scratch wins are forgotten.
	prev := early
	for i := range 600 {
		m.Observe("t", episode.Improve, i%40 == 0)
		m.Observe("t", episode.Scratch, false)
		if i%40 == 39 {
			now := m.ImproveShare("t")
			if now < prev {
				t.Errorf("round %d: share fell from %.3f to %.3f while only edits won", i, prev, now)
			}
			prev = now
		}
	}
	if prev < 0.85 || prev >= MixHigh {
		t.Errorf("after 600 rounds where only edits won, one in forty: share %.3f, want in [0.85, %.1f)", prev, MixHigh)
	}
	for i := range 300 {
		m.Observe("t", episode.Improve, i%10 == 0)
		m.Observe("t", episode.Scratch, false)
	}
	if high := m.ImproveShare("t"); high != MixHigh {
		t.Errorf("when edits win one in ten and scratch never: share %.3f, want the bound %.1f", high, MixHigh)
	}
	// Both kinds win alike: back near the half.
	for range 1000 {
		m.Observe("t", episode.Improve, false)
		m.Observe("t", episode.Scratch, false)
	}
	if even := m.ImproveShare("t"); math.Abs(even-0.5) > 0.02 {
		t.Errorf("after 1000 rounds where neither won: share %.3f, want about 0.5", even)
	}
	for range 200 {
		m.Observe("t", episode.Scratch, true)
		m.Observe("t", episode.Improve, false)
	}
	if low := m.ImproveShare("t"); low != MixLow {
		t.Errorf("after 200 rounds where only scratch won: share %.3f, want the bound %.1f", low, MixLow)
	}
	if other := m.ImproveShare("u"); other != 0.5 {
		t.Errorf("another task's share %v, want its own fresh 0.5", other)
	}
}

// climbing is a virtual-clock Env whose improve episodes always set a new
// best (each scores above every earlier one) and whose scratch episodes
// never do after the first: the case, measured on every long run, where
// progress comes from edits.
type climbing struct {
	now     time.Duration
	pending []episode.Job
	n       int
}

func (c *climbing) Slots() int { return 2 }
func (c *climbing) Submit(_ context.Context, j episode.Job) error {
	c.pending = append(c.pending, j)
	return nil
}
func (c *climbing) Next(context.Context) (episode.Result, error) {
	j := c.pending[0]
	c.pending = c.pending[1:]
	c.now += time.Second
	c.n++
	score := 0.0
	if j.Kind == episode.Improve {
		score = float64(c.n)
	}
	return episode.Result{Episode: j.ID, Task: j.Task, Kind: j.Kind, Valid: true, Score: &score, Reward: score, DurationS: 1}, nil
}
func (c *climbing) Now() time.Duration { return c.now }

// With AdaptiveMix a run whose new bests come from edits gives most of its
// late prompts to edits (the fixed half without it, and no counts kept),
// checkpoints the counts, and a resume continues from them.
func TestAdaptiveMixInRun(t *testing.T) {
	for _, adaptive := range []bool{false, true} {
		cfg := testConfig()
		cfg.Batch, cfg.MaxEpisodes, cfg.ImproveFraction, cfg.AdaptiveMix, cfg.Seed = 4, 600, 0.5, adaptive, 3
		pol := &scripted{plans: []string{"a", "b", "c"}}
		sink := &Memory{}
		if _, err := Run(context.Background(), cfg, &climbing{}, pol, tasks, sink); err != nil {
			t.Fatal(err)
		}
		improve := 0
		late := pol.prompts[300:]
		for _, pr := range late {
			if pr.Kind == episode.Improve {
				improve++
			}
		}
		share := float64(improve) / float64(len(late))
		// 300 draws: 4 standard deviations of a share of 0.5 is 0.12, of 0.9 is 0.07.
		if !adaptive && math.Abs(share-0.5) > 0.12 || adaptive && share < 0.83 {
			t.Errorf("adaptive %v: %.3f of the last 300 prompts improve", adaptive, share)
		}
		if !adaptive {
			if len(sink.LastCK.Mix) != 0 {
				t.Errorf("without the adaptive mix the checkpoint keeps mix counts %+v", sink.LastCK.Mix)
			}
			continue
		}
		ck := sink.LastCK
		r := ck.Mix["t"]
		if r == nil || r.ImproveWins < 10 || r.ScratchWins > 1 {
			t.Fatalf("checkpointed mix %+v", r)
		}
		l := resumed(t, cfg, ck)
		if got, want := l.mix.ImproveShare("t"), ck.Mix.ImproveShare("t"); got != want || got != MixHigh {
			t.Errorf("resumed share %v, checkpointed %v, want the bound %v", got, want, MixHigh)
		}
	}
}
