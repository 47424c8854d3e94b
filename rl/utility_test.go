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

// An improve episode is credited with what it added to its parent: two
// children of the same score get opposite credit when one's parent was
// better and the other's worse, and a scratch episode keeps its own utility.
func TestImproveCreditedOverParent(t *testing.T) {
	res := func(r float64) episode.Result { return episode.Result{Task: "t", Valid: true, Reward: r} }
	improve := func(parent, child float64) *job {
		return &job{prompt: Prompt{Kind: episode.Improve, Parent: &Solution{Result: res(parent)}}, result: res(child)}
	}
	used := []*job{improve(0.8, 0.5), improve(0.2, 0.5), {prompt: Prompt{Kind: episode.Scratch}, result: res(0.5)},
		improve(0.8, 0), // a failed edit: −1 below its parent's utility
	}
	used[3].result.Valid = false
	for _, tc := range []struct {
		utility, credit string
		want            []float64
	}{
		// Ranks among {0.2, 0.5, 0.8}: 1/6, 1/2, 5/6.
		{UtilityRank, ImproveOverParent, []float64{0.5 - 5.0/6, 0.5 - 1.0/6, 0.5, -1 - 5.0/6}},
		{UtilityRank, ImproveAbsolute, []float64{0.5, 0.5, 0.5, -1}},
		{UtilityReward, ImproveOverParent, []float64{-0.3, 0.3, 0.5, -0.8}},
		{UtilityReward, "", []float64{0.5, 0.5, 0.5, 0}}, // the default: absolute
	} {
		cfg := DefaultConfig()
		cfg.Utility, cfg.ImproveCredit = tc.utility, tc.credit
		l := &learner{cfg: cfg, ranks: Ranks{}}
		for _, r := range []float64{0.2, 0.5, 0.8} {
			l.ranks.Observe(res(r))
		}
		got := l.utilities(used)
		for i := range got {
			if !near(got[i], tc.want[i]) {
				t.Errorf("%s/%q: utilities %v, want %v", tc.utility, tc.credit, got, tc.want)
				break
			}
		}
	}
	bad := DefaultConfig()
	bad.ImproveCredit = "best"
	if err := bad.check(); err == nil {
		t.Error("improve credit \"best\" accepted")
	}
}
