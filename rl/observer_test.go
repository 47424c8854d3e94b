package rl

import (
	"context"
	"encoding/json"
	"testing"
)

// observing is a scripted policy that is also an Observer.
type observing struct {
	scripted
	seen []Solution
}

func (p *observing) Observe(s Solution) { p.seen = append(p.seen, s) }

// EpisodeNote makes observing a Noter too: it notes the plan it chose.
func (p *observing) EpisodeNote(a Action) json.RawMessage {
	return json.RawMessage(`{"chose":"` + a.Plan + `"}`)
}

// Every completion reaches Observe as it completes, with its action and
// result, whether or not it ends in an update batch; a frozen policy (the
// prompting baseline) observes nothing. A Noter's note for each action is in
// that action's episode record.
func TestObserverSeesEveryCompletion(t *testing.T) {
	cfg := testConfig()
	cfg.Batch, cfg.MaxEpisodes = 4, 6 // the last two complete but never fill a batch
	pol := &observing{scripted: scripted{plans: []string{"fast", "slow", "slow", "fast"}}}
	sum, err := Run(context.Background(), cfg, twoPlans(t, 2), pol, tasks, &Memory{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pol.seen) != sum.Completed || sum.Completed != 6 {
		t.Fatalf("observed %d of %d completions, want all 6", len(pol.seen), sum.Completed)
	}
	updated := 0
	for _, u := range pol.updates {
		updated += len(u)
	}
	if updated >= len(pol.seen) {
		t.Fatalf("%d samples in updates and %d observed: the test needs completions outside any update", updated, len(pol.seen))
	}
	var mem Memory
	if _, err := Run(context.Background(), cfg, twoPlans(t, 2), &observing{scripted: scripted{plans: []string{"fast", "slow"}}}, tasks, &mem); err != nil {
		t.Fatal(err)
	}
	if len(mem.EpisodeRecs) != 6 {
		t.Fatalf("%d episode records, want 6", len(mem.EpisodeRecs))
	}
	for _, r := range mem.EpisodeRecs {
		if want := `{"chose":"` + r.Plan + `"}`; string(r.Note) != want {
			t.Errorf("episode %s: policy note %s, want %s", r.Episode, r.Note, want)
		}
	}
	for i, s := range pol.seen {
		want := map[string]float64{"fast": 1, "slow": 0}[s.Action.Plan]
		if s.Result.Reward != want || s.Result.Episode == "" || s.Result.Task != "t" {
			t.Errorf("observation %d: plan %s result %+v, want reward %v with its episode and task", i, s.Action.Plan, s.Result, want)
		}
	}

	frozen := &observing{scripted: scripted{plans: []string{"fast", "slow"}}}
	if _, err := Run(context.Background(), cfg, twoPlans(t, 2), Frozen(frozen), tasks, &Memory{}); err != nil {
		t.Fatal(err)
	}
	if len(frozen.seen) != 0 {
		t.Errorf("a frozen policy observed %d completions, want none", len(frozen.seen))
	}
}
