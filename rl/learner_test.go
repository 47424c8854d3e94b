package rl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl/replay"
	"github.com/mlerl/mlerl/task"
)

// scripted is a Policy that writes a fixed cycle of plans and records what
// the learner hands it, so tests can check advantages and weights by hand.
type scripted struct {
	plans   []string
	groups  map[string]string // a plan's credit group (Action.CreditGroups), if any
	lines   map[string]string // a plan's line (Action.Line), if any
	next    int
	version int
	prompts []Prompt
	updates [][]Sample
}

func (p *scripted) Version() int { return p.version }

func (p *scripted) Sample(_ context.Context, prompts []Prompt) ([]Action, error) {
	out := make([]Action, len(prompts))
	for i := range prompts {
		plan := p.plans[p.next%len(p.plans)]
		p.next++
		out[i] = Action{Plan: plan, Code: replay.PlanCode(plan, ""), Tokens: []int{0}, TokenLogProbs: []float64{-1}}
		if g, ok := p.groups[plan]; ok {
			out[i].CreditGroups = []string{g}
		}
		out[i].Line = p.lines[plan]
	}
	p.prompts = append(p.prompts, prompts...)
	return out, nil
}

func (p *scripted) Update(_ context.Context, s []Sample) (UpdateStats, error) {
	p.updates = append(p.updates, append([]Sample(nil), s...))
	p.version++
	return UpdateStats{NewVersion: p.version}, nil
}

func (p *scripted) Save(string) error { return nil }
func (p *scripted) Load(string) error { return nil }

func twoPlans(t *testing.T, workers int) *replay.Env {
	t.Helper()
	tb, err := replay.LoadTable("testdata/two_plans.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	env, err := replay.New(tb, replay.Config{Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

var tasks = []*task.Task{{Name: "t"}}

func testConfig() Config {
	c := DefaultConfig()
	c.Budget, c.ImproveFraction, c.NormalizeAdvantages, c.MaxStaleness = time.Hour, 0, false, -1
	c.Utility = UtilityReward // the arithmetic below is on rewards; utility_test.go covers ranks
	c.TimeCharge = 0          // nor a charge on time: TestTimeCharge and TestTimeChargeInUpdate cover it
	return c
}

// Two workers, B=2, plans fast(1 s, reward 1), slow(3 s, reward 0), slow, fast:
//
//	t=0 j0 fast, j1 slow; t=1 j0 done, j2 slow starts; t=3 j1 done → update 1 on [fast, slow]
//	j3 fast starts at 3; t=4 j2 and j3 tie, submit order breaks it → update 2 on [slow, fast]
//
// Update 1: no V yet, so V = batch mean 0.5: raw advantages +0.5, −0.5;
// weights 1/2, 3/2 → +0.25, −0.75. Update 2: V = 0.5 (1, then 0 averaged):
// slow −0.5 × 1.5 = −0.75, fast +0.5 × 0.5 = +0.25.
func TestAdvantagesAndDurationWeights(t *testing.T) {
	for _, c := range []struct {
		name  string
		aware bool
		want  [][]float64 // advantages per update, in completion order
		w     [][]float64
	}{
		{"duration-aware", true, [][]float64{{0.25, -0.75}, {-0.75, 0.25}}, [][]float64{{0.5, 1.5}, {1.5, 0.5}}},
		{"naive", false, [][]float64{{0.5, -0.5}, {-0.5, 0.5}}, [][]float64{{1, 1}, {1, 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Batch, cfg.MaxEpisodes, cfg.DurationAware = 2, 4, c.aware
			pol := &scripted{plans: []string{"fast", "slow", "slow", "fast"}}
			sink := &Memory{}
			sum, err := Run(context.Background(), cfg, twoPlans(t, 2), pol, tasks, sink)
			if err != nil {
				t.Fatal(err)
			}
			if len(pol.updates) != 2 {
				t.Fatalf("%d updates, want 2", len(pol.updates))
			}
			wantPlans := [][]string{{"fast", "slow"}, {"slow", "fast"}}
			for u, batch := range pol.updates {
				for i, s := range batch {
					if s.Action.Plan != wantPlans[u][i] || !near(s.Advantage, c.want[u][i]) || !near(s.Weight, c.w[u][i]) {
						t.Errorf("update %d sample %d: plan %s adv %v weight %v; want %s %v %v",
							u+1, i, s.Action.Plan, s.Advantage, s.Weight, wantPlans[u][i], c.want[u][i], c.w[u][i])
					}
				}
			}
			if sum.Dispatched != 4 || sum.Completed != 4 || sum.Updates != 2 || sum.AbandonedAtStop != 0 || sum.Stopped != "max_episodes" {
				t.Errorf("summary %+v", sum)
			}
			m := sink.MetricLines[0]
			if m.Update != 1 || m.TimeS != 3 || m.Episodes != 2 || m.MeanReward != 0.5 || m.MeanDurationS != 2 || !near(m.WeightsMean, 1) {
				t.Errorf("metrics line 1: %+v", m)
			}
			if len(sink.EpisodeRecs) != 4 || sink.EpisodeRecs[0].Advantage == nil || !near(*sink.EpisodeRecs[0].Advantage, c.want[0][0]) {
				t.Errorf("episode records: %+v", sink.EpisodeRecs)
			}
			if *sink.Final.BestScore != 1 || len(sink.Bests) != 1 || sink.Bests[0].Result.Episode != "run-0" {
				t.Errorf("best: %+v %+v", sink.Final.BestScore, sink.Bests)
			}
		})
	}
}

// Normalising divides by the batch's spread only: the weighted advantages
// keep their ratio 1:3 from the durations 1 s : 3 s.
func TestNormalisationKeepsWeights(t *testing.T) {
	cfg := testConfig()
	cfg.Batch, cfg.MaxEpisodes, cfg.DurationAware, cfg.NormalizeAdvantages = 2, 2, true, true
	pol := &scripted{plans: []string{"fast", "slow"}}
	if _, err := Run(context.Background(), cfg, twoPlans(t, 2), pol, tasks, nil); err != nil {
		t.Fatal(err)
	}
	s := pol.updates[0]
	// raw ±0.5, std 0.5 → ±1; times weights 0.5, 1.5.
	if !near(s[0].Advantage, 0.5) || !near(s[1].Advantage, -1.5) {
		t.Errorf("advantages %v, %v; want 0.5, -1.5", s[0].Advantage, s[1].Advantage)
	}
}

// B=1, MaxStaleness=1, plans fast, slow, fast, fast:
//
//	t=1 j0 → update 1 (v0→v1); t=2 j2 (v1) → update 2 (v2); t=3 j1 (v0) is 2
//	versions stale → dropped, no policy step; j3 (v2) → update 4.
func TestStalenessBound(t *testing.T) {
	for _, c := range []struct {
		name         string
		maxStale     int
		policySteps  int
		dropped      int
		lastStale    int
		lastAdvIsNil bool
	}{
		{"bounded", 1, 3, 1, 2, true},
		{"unbounded", -1, 4, 0, 2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Batch, cfg.MaxEpisodes, cfg.MaxStaleness = 1, 4, c.maxStale
			pol := &scripted{plans: []string{"fast", "slow", "fast", "fast"}}
			sink := &Memory{}
			sum, err := Run(context.Background(), cfg, twoPlans(t, 2), pol, tasks, sink)
			if err != nil {
				t.Fatal(err)
			}
			if len(pol.updates) != c.policySteps || sum.Updates != 4 || sum.Dropped != c.dropped {
				t.Fatalf("policy steps %d, updates %d, dropped %d; want %d, 4, %d", len(pol.updates), sum.Updates, sum.Dropped, c.policySteps, c.dropped)
			}
			r := sink.EpisodeRecs[2]
			if r.Episode != "run-1" || r.Staleness != c.lastStale || (r.Advantage == nil) != c.lastAdvIsNil || r.Dropped != c.lastAdvIsNil {
				t.Errorf("slow episode record %+v", r)
			}
			if m := sink.MetricLines[2]; m.Dropped != c.dropped || m.MaxStaleness != 2 || m.DroppedTotal != c.dropped {
				t.Errorf("metrics of update 3: %+v", m)
			}
		})
	}
}

// Half the prompts improve a buffered solution once one exists, and a failed
// program is never a parent.
func TestImproveFraction(t *testing.T) {
	for _, c := range []struct {
		frac   float64
		lo, hi float64
	}{{0, 0, 0}, {0.5, 0.45, 0.55}, {1, 1, 1}} {
		cfg := testConfig()
		cfg.Batch, cfg.MaxEpisodes, cfg.ImproveFraction, cfg.Seed = 4, 2000, c.frac, 7
		pol := &scripted{plans: []string{"fast", "broken", "slow"}}
		if _, err := Run(context.Background(), cfg, twoPlans(t, 4), pol, tasks, nil); err != nil {
			t.Fatal(err)
		}
		var improve, after int
		bufferFilled := false
		for _, pr := range pol.prompts {
			if pr.Kind == episode.Improve {
				bufferFilled = true
				improve++
				if pr.Parent == nil || !pr.Parent.Result.Valid {
					t.Fatalf("improve prompt with parent %+v", pr.Parent)
				}
			}
			if bufferFilled || c.frac == 0 {
				after++
			}
		}
		got := float64(improve) / math.Max(1, float64(after))
		if got < c.lo || got > c.hi {
			t.Errorf("improve fraction %v: got %.3f of %d prompts, want in [%v, %v]", c.frac, got, after, c.lo, c.hi)
		}
	}
}

// At the budget, jobs in flight are abandoned: counted, written as cancelled
// episodes and kept in the checkpoint; the one that completed after the
// budget is among them.
func TestBudgetAbandonsInFlight(t *testing.T) {
	cfg := testConfig()
	cfg.Batch, cfg.Budget = 10, 2500*time.Millisecond
	pol := &scripted{plans: []string{"slow", "fast"}}
	sink := &Memory{}
	sum, err := Run(context.Background(), cfg, twoPlans(t, 2), pol, tasks, sink)
	if err != nil {
		t.Fatal(err)
	}
	// t=0 j0 slow, j1 fast; t=1 j2 slow; then j1 done... see counts:
	if sum.Stopped != "budget" || sum.Dispatched != sum.Completed+sum.AbandonedAtStop || sum.AbandonedAtStop == 0 {
		t.Errorf("summary %+v", sum)
	}
	cancelled := 0
	for _, r := range sink.EpisodeRecs {
		if r.Cancelled {
			cancelled++
			if r.Valid || r.Error == "" || r.Advantage != nil {
				t.Errorf("cancelled episode %+v", r)
			}
		}
	}
	if sum.Unused != sum.Completed || len(sink.EpisodeRecs) != sum.Completed+cancelled || cancelled != sum.AbandonedAtStop {
		t.Errorf("completed %d, unused %d, records %d, cancelled %d of %d abandoned", sum.Completed, sum.Unused, len(sink.EpisodeRecs), cancelled, sum.AbandonedAtStop)
	}
	if len(sink.LastCK.InFlight) != sum.AbandonedAtStop {
		t.Errorf("final checkpoint keeps %d in flight, lost %d", len(sink.LastCK.InFlight), sum.AbandonedAtStop)
	}
}

// blocking is a wall-clock Env whose jobs never finish.
type blocking struct {
	start time.Time
	mu    sync.Mutex
	n     int
}

func (b *blocking) Slots() int { return 2 }
func (b *blocking) Submit(context.Context, episode.Job) error {
	b.mu.Lock()
	b.n++
	b.mu.Unlock()
	return nil
}
func (b *blocking) Next(ctx context.Context) (episode.Result, error) {
	<-ctx.Done()
	return episode.Result{}, ctx.Err()
}
func (b *blocking) Now() time.Duration { return time.Since(b.start) }

func TestWallClockBudgetEndsWait(t *testing.T) {
	cfg := testConfig()
	cfg.Budget = 30 * time.Millisecond
	sum, err := Run(context.Background(), cfg, &blocking{start: time.Now()}, &scripted{plans: []string{"x"}}, tasks, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Stopped != "budget" || sum.Dispatched != 2 || sum.AbandonedAtStop != 2 {
		t.Errorf("summary %+v", sum)
	}
}

func TestCancelReturnsAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sink := &Memory{}
	sum, err := Run(ctx, testConfig(), &blocking{start: time.Now()}, &scripted{plans: []string{"x"}}, tasks, sink)
	if !errors.Is(err, context.Canceled) || sum.Stopped != "canceled" || sink.Final != nil || sink.Checkpoints != 0 {
		t.Errorf("err %v, summary %+v, sink %+v", err, sum, sink)
	}
}

func TestBadConfig(t *testing.T) {
	env := twoPlans(t, 1)
	for _, mut := range []func(*Config){
		func(c *Config) { c.Batch = 0 },
		func(c *Config) { c.Budget = 0 },
		func(c *Config) { c.ImproveFraction = 1.5 },
		func(c *Config) { c.BufferSize = 0 },
		func(c *Config) { c.RunID = "a b" },
		func(c *Config) { c.TimeCharge = -1 },
	} {
		c := testConfig()
		mut(&c)
		if _, err := Run(context.Background(), c, env, &scripted{plans: []string{"x"}}, tasks, nil); err == nil {
			t.Errorf("config %+v: no error", c)
		}
	}
	if _, err := Run(context.Background(), testConfig(), env, &scripted{plans: []string{"x"}}, nil, nil); err == nil {
		t.Error("no tasks: no error")
	}
}

// With Drain the programs running at the budget may finish: nothing new is
// dispatched, what completes goes into one last update, and nothing is
// abandoned when the drain is long enough.
func TestDrainFinishesInFlight(t *testing.T) {
	cfg := testConfig()
	cfg.Batch, cfg.Budget, cfg.Drain = 10, 2500*time.Millisecond, 10*time.Second
	pol := &scripted{plans: []string{"slow", "fast"}}
	sink := &Memory{}
	sum, err := Run(context.Background(), cfg, twoPlans(t, 2), pol, tasks, sink)
	if err != nil {
		t.Fatal(err)
	}
	if sum.AbandonedAtStop != 0 || sum.Dispatched != sum.Completed || sum.Unused != 0 {
		t.Errorf("summary %+v: want every dispatched job completed and used", sum)
	}
	if len(pol.updates) != 1 || len(pol.updates[0]) != sum.Completed {
		t.Errorf("%d updates; want one last update on all %d completions", len(pol.updates), sum.Completed)
	}
	for _, r := range sink.EpisodeRecs {
		if r.Cancelled || r.Advantage == nil {
			t.Errorf("episode %s: cancelled %v, advantage %v", r.Episode, r.Cancelled, r.Advantage)
		}
	}
}

// A time charge reaches the update: with λ = 0.5 the fast plan (1 s against a
// median of 2 s) gains 0.5 and the slow one (3 s) loses 0.5·log2(1.5) before
// the baseline and the duration weights; the durations are checkpointed, so
// a resume charges against the same median.
func TestTimeChargeInUpdate(t *testing.T) {
	cfg := testConfig()
	cfg.Batch, cfg.MaxEpisodes, cfg.TimeCharge = 2, 2, 0.5
	pol := &scripted{plans: []string{"fast", "slow"}}
	sink := &Memory{}
	if _, err := Run(context.Background(), cfg, twoPlans(t, 2), pol, tasks, sink); err != nil {
		t.Fatal(err)
	}
	uFast, uSlow := 1+0.5, 0-0.5*math.Log2(1.5)
	v := (uFast + uSlow) / 2
	want := []float64{(uFast - v) * 0.5, (uSlow - v) * 1.5}
	if len(pol.updates) != 1 || !near(pol.updates[0][0].Advantage, want[0]) || !near(pol.updates[0][1].Advantage, want[1]) {
		t.Fatalf("updates %+v, want advantages %v", pol.updates, want)
	}
	if got := sink.LastCK.Durations["t"]; !nearAll(got, []float64{1, 3}) {
		t.Errorf("checkpointed durations %v, want [1 3]", got)
	}
}

// spending answers every other improve prompt from scratch, as the recipe
// policy does when a parent's edits are spent.
type spending struct {
	scripted
	improves int
	scratch  map[int]bool // sample index → answered an improve prompt from scratch
}

func (p *spending) Sample(ctx context.Context, prompts []Prompt) ([]Action, error) {
	first := p.next
	out, err := p.scripted.Sample(ctx, prompts)
	for i, pr := range prompts {
		if pr.Kind != episode.Improve {
			continue
		}
		if p.improves++; p.improves%2 == 0 {
			out[i].Kind = episode.Scratch
			p.scratch[first+i] = true
		}
	}
	return out, err
}

// An improve prompt the policy answers from scratch is a scratch episode:
// recorded without a parent, counted in the summary, and the others stay
// edits of their parents.
func TestImproveAnsweredFromScratch(t *testing.T) {
	cfg := testConfig()
	cfg.Batch, cfg.MaxEpisodes, cfg.ImproveFraction, cfg.Seed = 2, 40, 1, 3
	pol := &spending{scripted: scripted{plans: []string{"fast", "slow"}}, scratch: map[int]bool{}}
	sink := &Memory{}
	sum, err := Run(context.Background(), cfg, twoPlans(t, 2), pol, tasks, sink)
	if err != nil {
		t.Fatal(err)
	}
	if len(pol.scratch) < 5 {
		t.Fatalf("only %d improve prompts answered from scratch: the test shows little", len(pol.scratch))
	}
	var edits int
	for _, r := range sink.EpisodeRecs {
		var i int
		if _, err := fmt.Sscanf(r.Episode, "run-%d", &i); err != nil {
			t.Fatalf("episode id %q: %v", r.Episode, err)
		}
		switch {
		case pol.scratch[i] && (r.Kind != episode.Scratch || r.Parent != ""):
			t.Errorf("episode %s was answered from scratch but recorded as kind %s, parent %q", r.Episode, r.Kind, r.Parent)
		case !pol.scratch[i] && r.Kind == episode.Improve:
			if r.Parent == "" {
				t.Errorf("episode %s is an edit without a parent", r.Episode)
			}
			edits++
		}
	}
	if edits == 0 || sum.ImproveAsScratch != len(pol.scratch) {
		t.Errorf("%d edits recorded; summary counts %d answered from scratch, the policy %d", edits, sum.ImproveAsScratch, len(pol.scratch))
	}
}
