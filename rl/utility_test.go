package rl

import (
	"context"
	"math"
	"strings"
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
		// Gain: the first child is worse than its parent (0), the second
		// better (1); the failure keeps the failure utility.
		{UtilityRank, ImproveGain, []float64{0, 1, 0.5, -1}},
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
	bad.ImproveCredit, bad.Utility = ImproveGain, UtilityReward
	if err := bad.check(); err == nil || !strings.Contains(err.Error(), "needs --utility rank") {
		t.Errorf("gain credit with reward utility: error %v, want it refused", err)
	}
}

// Under gain credit a child that ties its parent earns nothing (the best did
// not move), and the time charge is the child's own: a fast edit that beats
// its parent earns more than a slow one that does.
func TestImproveGainCredit(t *testing.T) {
	res := func(r, d float64) episode.Result {
		return episode.Result{Task: "t", Valid: true, Reward: r, DurationS: d}
	}
	improve := func(parent, child episode.Result) *job {
		return &job{prompt: Prompt{Kind: episode.Improve, Parent: &Solution{Result: parent}}, result: child}
	}
	d := Durations{}
	for _, s := range []float64{1, 2, 4, 8, 16} {
		d.Observe(res(0, s))
	}
	used := []*job{
		improve(res(0.5, 4), res(0.5, 4)),                            // a tie: 0
		improve(res(0.5, 16), res(0.6, 8)),                           // better, slower than the median: 1 − 0.25
		improve(res(0.5, 1), res(0.6, 1)),                            // better, fast: 1 + 0.5
		improve(res(0.5, 4), res(0.4, 2)),                            // worse, fast: 0 + 0.25
		{prompt: Prompt{Kind: episode.Scratch}, result: res(0.5, 4)}, // scratch: its rank
	}
	cfg := DefaultConfig()
	cfg.ImproveCredit = ImproveGain
	l := &learner{cfg: cfg, ranks: Ranks{}, durations: d, gains: Gains{}}
	for _, r := range []float64{0.4, 0.5, 0.6} {
		l.ranks.Observe(res(r, 1))
	}
	// No improve episode seen yet: the rate is (0+1)/(0+2) = 0.5, the
	// charge λ per doubling as under ranks.
	want := []float64{0, 1 - 0.25, 1 + 0.5, 0.25, 0.5}
	if got := l.utilities(used); !nearAll(got, want) {
		t.Errorf("utilities %v, want %v", got, want)
	}
	// One child in eight beat its parent: the rate is 2/10 and the charge
	// per doubling 0.25·0.2/0.5 = 0.1; scratch episodes keep λ.
	for i := range 8 {
		l.gains.Observe(res(0.5+float64(i/7), 1), res(0.5, 1))
	}
	if r := l.gains.Rate("t"); !near(r, 0.2) {
		t.Fatalf("rate after 1 win in 8: %v, want 0.2", r)
	}
	want = []float64{0, 1 - 0.1, 1 + 0.2, 0.1, 0.5}
	if got := l.utilities(used); !nearAll(got, want) {
		t.Errorf("after 1 win in 8: utilities %v, want %v", got, want)
	}
}

// The time charge lowers a slow program's utility and raises a fast one's by
// λ·log2(Δt / the task's median), clamped at 8 times either way, and under
// credit over the parent an edit is charged for the time it added. Charged
// on slower programs only, a fast program keeps its utility and a slow one
// pays as before.
func TestTimeCharge(t *testing.T) {
	res := func(d float64) episode.Result {
		return episode.Result{Task: "t", Valid: true, Reward: 0.5, DurationS: d}
	}
	d := Durations{}
	for _, s := range []float64{16, 1, 8, 2, 4} {
		d.Observe(res(s))
	}
	d.Observe(episode.Result{Task: "t"}) // no duration: not observed
	for _, tc := range []struct{ dur, want float64 }{
		{4, 0}, {8, 1}, {1, -2}, {1000, 3}, {0.001, -3}, {0, 0},
	} {
		if got := d.LogRatio(res(tc.dur)); !near(got, tc.want) {
			t.Errorf("LogRatio(%v s) = %v, want %v", tc.dur, got, tc.want)
		}
	}
	if got := d.LogRatio(episode.Result{Task: "other", DurationS: 3}); got != 0 {
		t.Errorf("a task without durations: LogRatio %v, want 0", got)
	}

	improve := func(parentS, childS float64) *job {
		return &job{prompt: Prompt{Kind: episode.Improve, Parent: &Solution{Result: res(parentS)}}, result: res(childS)}
	}
	used := []*job{{prompt: Prompt{Kind: episode.Scratch}, result: res(8)}, {prompt: Prompt{Kind: episode.Scratch}, result: res(1)},
		improve(2, 8)}
	for _, tc := range []struct {
		credit     string
		charge     float64
		slowerOnly bool
		want       []float64
	}{
		{ImproveAbsolute, 0, false, []float64{0.5, 0.5, 0.5}},
		{ImproveAbsolute, 0.1, false, []float64{0.5 - 0.1, 0.5 + 0.2, 0.5 - 0.1}},
		{ImproveOverParent, 0.1, false, []float64{0.5 - 0.1, 0.5 + 0.2, -0.1 - 0.1}}, // parent 2 s: −1, child 8 s: +1
		{ImproveAbsolute, 0.1, true, []float64{0.5 - 0.1, 0.5, 0.5 - 0.1}},           // the 1 s program is not credited
		{ImproveOverParent, 0.1, true, []float64{0.5 - 0.1, 0.5, -0.1}},              // nor the 2 s parent: the edit pays 8 s only
	} {
		cfg := DefaultConfig()
		cfg.Utility, cfg.ImproveCredit, cfg.TimeCharge, cfg.ChargeSlowerOnly = UtilityReward, tc.credit, tc.charge, tc.slowerOnly
		l := &learner{cfg: cfg, ranks: Ranks{}, durations: d}
		if got := l.utilities(used); !nearAll(got, tc.want) {
			t.Errorf("%s, charge %v, slower only %v: utilities %v, want %v", tc.credit, tc.charge, tc.slowerOnly, got, tc.want)
		}
	}
	for _, bad := range []float64{-0.1, math.NaN(), math.Inf(1)} {
		cfg := DefaultConfig()
		cfg.TimeCharge = bad
		if err := cfg.check(); err == nil {
			t.Errorf("time charge %v accepted", bad)
		}
	}
	cfg := DefaultConfig()
	cfg.TimeCharge, cfg.ChargeSlowerOnly = 0, true
	if err := cfg.check(); err == nil || !strings.Contains(err.Error(), "--time-charge-slower-only") {
		t.Errorf("slower only without a charge: %v, want an error naming --time-charge-slower-only", err)
	}
}

func nearAll(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !near(a[i], b[i]) {
			return false
		}
	}
	return true
}

// With an elite threshold q only the programs that beat the share q of the
// task's results earn utility above the bottom, rescaled to [0, 1]; every
// valid program below it counts as the worst valid one, and failures stay
// below all of them.
func TestEliteUtility(t *testing.T) {
	r := Ranks{}
	for v := range 10 { // rewards 0, 0.1, ..., 0.9
		r.Observe(episode.Result{Task: "t", Valid: true, Reward: float64(v) / 10})
	}
	res := func(reward float64) episode.Result { return episode.Result{Task: "t", Valid: true, Reward: reward} }
	used := []*job{
		{prompt: Prompt{Kind: episode.Scratch}, result: res(0.9)},  // rank 0.95
		{prompt: Prompt{Kind: episode.Scratch}, result: res(0.8)},  // rank 0.85
		{prompt: Prompt{Kind: episode.Scratch}, result: res(0.5)},  // rank 0.55
		{prompt: Prompt{Kind: episode.Scratch}, result: res(0.05)}, // rank 0.1
		{prompt: Prompt{Kind: episode.Scratch}, result: episode.Result{Task: "t", Reward: -10, Stages: []string{"a"}}},
	}
	for _, tc := range []struct {
		elite float64
		want  []float64
	}{
		{0, []float64{0.95, 0.85, 0.55, 0.1, -0.99}},
		{0.8, []float64{0.75, 0.25, 0, 0, -0.99}},
		{0.5, []float64{0.9, 0.7, 0.1, 0, -0.99}},
	} {
		cfg := DefaultConfig()
		cfg.Elite = tc.elite
		l := &learner{cfg: cfg, ranks: r, durations: Durations{}}
		if got := l.utilities(used); !nearAll(got, tc.want) {
			t.Errorf("elite %v: utilities %v, want %v", tc.elite, got, tc.want)
		}
	}
	for _, bad := range []struct {
		elite   float64
		utility string
	}{{-0.1, UtilityRank}, {1, UtilityRank}, {math.NaN(), UtilityRank}, {0.5, UtilityReward}} {
		cfg := DefaultConfig()
		cfg.Elite, cfg.Utility = bad.elite, bad.utility
		if err := cfg.check(); err == nil {
			t.Errorf("elite %v with utility %s accepted", bad.elite, bad.utility)
		}
	}
}

// A run counts its improve episodes and those that beat their parent, keeps
// the counts in its checkpoint, and a resume starts from them.
func TestImproveGainCountsCheckpointed(t *testing.T) {
	cfg := testConfig()
	cfg.Utility, cfg.ImproveCredit = UtilityRank, ImproveGain
	cfg.Batch, cfg.MaxEpisodes, cfg.ImproveFraction = 2, 10, 1
	// The first update sees two slow programs, so the first improve
	// prompts edit a slow parent and a fast child beats it.
	reward := map[string]float64{"slow": 0, "fast": 1}
	plans := []string{"slow", "slow", "fast", "slow", "fast"}
	pol := &scripted{plans: plans}
	sink := &Memory{}
	if _, err := Run(context.Background(), cfg, twoPlans(t, 2), pol, tasks, sink); err != nil {
		t.Fatal(err)
	}
	var want [2]int
	for i, pr := range pol.prompts {
		if pr.Kind == episode.Improve {
			want[0]++
			if reward[plans[i%len(plans)]] > pr.Parent.Result.Reward {
				want[1]++
			}
		}
	}
	if want[1] == 0 || want[1] == want[0] {
		t.Fatalf("improve episodes and wins %v: the script should give both wins and losses", want)
	}
	got := sink.LastCK.Gains["t"]
	if got != want {
		t.Errorf("checkpointed gains %v, want %v (improve episodes, wins)", got, want)
	}
	l := resumed(t, cfg, sink.LastCK)
	if l.gains["t"] != want {
		t.Errorf("resumed gains %v, want %v", l.gains["t"], want)
	}
}
