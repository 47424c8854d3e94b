package rl

import (
	"context"
	"math"
	"testing"

	"github.com/mlerl/mlerl/episode"
)

func TestRanksUtility(t *testing.T) {
	r := Ranks{}
	for _, v := range []float64{0.80, 0.70, 0.90, 0.80} {
		r.Observe(episode.Result{Task: "t", Valid: true, Reward: v})
	}
	r.Observe(episode.Result{Task: "t", Valid: false, Reward: -9.7}) // failures are not ranked
	r.Observe(episode.Result{Task: "other", Valid: true, Reward: 5})
	for _, c := range []struct {
		name string
		res  episode.Result
		want float64
	}{
		{"best of four", episode.Result{Task: "t", Valid: true, Reward: 0.90}, 3.5 / 4},
		{"worst", episode.Result{Task: "t", Valid: true, Reward: 0.70}, 0.5 / 4},
		{"tied pair", episode.Result{Task: "t", Valid: true, Reward: 0.80}, 2.0 / 4},
		{"above all seen", episode.Result{Task: "t", Valid: true, Reward: 0.95}, 1},
		{"first of its task", episode.Result{Task: "new", Valid: true, Reward: 0.1}, 0.5},
		{"failure, nothing reached", episode.Result{Task: "t", Reward: -10}, -1},
		{"failure after 3 stages", episode.Result{Task: "t", Reward: -9.7, Stages: []string{"a", "b", "c"}}, -0.97},
	} {
		if got := r.Utility(c.res); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: utility %v, want %v", c.name, got, c.want)
		}
	}
}

// Under UtilityRank the advantages come from ranks, the rewards recorded stay
// the rewards. Plans fast (reward 1) and slow (reward 0) from two_plans.jsonl.
func TestRankUtilityAdvantages(t *testing.T) {
	cfg := testConfig()
	cfg.Utility = UtilityRank
	cfg.Batch, cfg.MaxEpisodes = 2, 2
	pol := &scripted{plans: []string{"fast", "slow"}}
	if _, err := Run(context.Background(), cfg, twoPlans(t, 2), pol, tasks, nil); err != nil {
		t.Fatal(err)
	}
	// Ranked among {0, 1}: fast 0.75, slow 0.25; no V yet, so V = 0.5;
	// duration weights 0.5 and 1.5.
	s := pol.updates[0]
	if !near(s[0].Advantage, 0.25*0.5) || !near(s[1].Advantage, -0.25*1.5) {
		t.Errorf("advantages %v, %v; want %v, %v", s[0].Advantage, s[1].Advantage, 0.25*0.5, -0.25*1.5)
	}
	if s[0].Reward != 1 || s[1].Reward != 0 {
		t.Errorf("samples carry rewards %v, %v: the reward itself must not change", s[0].Reward, s[1].Reward)
	}

	bad := DefaultConfig()
	bad.Utility = "score"
	if err := bad.check(); err == nil {
		t.Error("utility \"score\" accepted")
	}
}
