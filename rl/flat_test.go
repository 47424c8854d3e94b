package rl

import (
	"context"
	"testing"
	"time"
)

// FlatFamilyAfter marks a task's prompts Stalled once its best has stood
// that long on the run's clock: here "fast" sets the best at 1 s and
// nothing beats it, so from 6 s on every prompt, scratch and improve, is
// marked, and none before. Off, or longer than the run, none is; the
// best's time is checkpointed without Lines and restored on a resume.
func TestFlatFamilyAfterMarksStalledPrompts(t *testing.T) {
	for _, c := range []struct {
		after                 time.Duration
		minPrefix, maxPrefix  int // prompts before the first marked one
		wantMarked, wantSince bool
	}{
		{5 * time.Second, 4, 16, true, true},
		{time.Hour, 60, 60, false, true},
		{0, 60, 60, false, false},
	} {
		cfg := testConfig()
		cfg.Batch, cfg.MaxEpisodes, cfg.ImproveFraction, cfg.FlatFamilyAfter = 2, 60, 0.5, c.after
		pol := &scripted{plans: []string{"slow", "fast"}}
		sink := &Memory{}
		if _, err := Run(context.Background(), cfg, twoPlans(t, 2), pol, tasks, sink); err != nil {
			t.Fatal(err)
		}
		prefix, kinds := len(pol.prompts), map[string]int{}
		for i, pr := range pol.prompts {
			if pr.Stalled && prefix == len(pol.prompts) {
				prefix = i
			}
			if i >= prefix {
				if !pr.Stalled {
					t.Fatalf("after %v: prompt %d is not marked after prompt %d was, with no new best between", c.after, i, prefix)
				}
				kinds[string(pr.Kind)]++
			}
		}
		if prefix < c.minPrefix || prefix > c.maxPrefix || c.wantMarked && (kinds["scratch"] == 0 || kinds["improve"] == 0) {
			t.Errorf("after %v: first marked prompt %d of %d (kinds %v), want %d to %d", c.after, prefix, len(pol.prompts), kinds, c.minPrefix, c.maxPrefix)
		}
		since, ok := sink.LastCK.BestSince["t"]
		if ok != c.wantSince || ok && since != time.Second {
			t.Errorf("after %v: checkpointed best since %v (kept %v), want 1s kept %v", c.after, since, ok, c.wantSince)
		}
		if c.wantSince {
			if l := resumed(t, cfg, sink.LastCK); l.bestSince["t"] != time.Second {
				t.Errorf("after %v: resumed best since %v, want 1s", c.after, l.bestSince["t"])
			}
		}
	}
}

func TestCheckFlatFamilyAfter(t *testing.T) {
	for _, c := range []struct {
		after time.Duration
		ok    bool
	}{{0, true}, {5 * time.Minute, true}, {-time.Second, false}} {
		if err := CheckFlatFamilyAfter(c.after); (err == nil) != c.ok {
			t.Errorf("CheckFlatFamilyAfter(%v) = %v, want ok %v", c.after, err, c.ok)
		}
	}
	cfg := testConfig()
	cfg.FlatFamilyAfter = -time.Minute
	if _, err := Run(context.Background(), cfg, twoPlans(t, 2), &scripted{plans: []string{"fast"}}, tasks, &Memory{}); err == nil {
		t.Error("a run with a negative flat family after started")
	}
}
