package rl

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"strings"
	"testing"

	"github.com/mlerl/mlerl/episode"
)

// Credit per decision: a hyperparameter token is judged against the
// programs of its own family, the family token against every program. Family
// a's programs score 0.9 and 0.7, family b's 0.3 and 0.1: b's better setting
// is below the batch's mean as a program (−0.2) but above its family's (+0.1),
// and that is what its hyperparameter token is credited with.
func TestDecisionCredit(t *testing.T) {
	act := func(groups ...string) Action {
		return Action{TokenLogProbs: make([]float64, len(groups)), CreditGroups: groups}
	}
	jobs := []*job{
		{action: act("", "family=a", "family=a")},
		{action: act("", "family=a", "family=a")},
		{action: act("", "family=b")},
		{action: act("", "family=b")},
		{action: Action{TokenLogProbs: []float64{0, 0}, CreditGroups: []string{"family=b"}}}, // groups do not match the tokens
	}
	utils := []float64{0.9, 0.7, 0.3, 0.1, 0.5}
	for _, j := range jobs {
		j.prompt.Kind = episode.Scratch
		j.result = episode.Result{Task: "t", Valid: true, DurationS: 2}
	}
	// Program advantages against the batch mean 0.5: 0.4, 0.2, −0.2, −0.4, 0;
	// their spread 0.2828 gives the common scale.
	scale := 1 / math.Sqrt((0.16+0.04+0.04+0.16)/5)
	for _, tc := range []struct {
		name   string
		known  float64 // V of family a before the batch (0: none)
		tokens [][]float64
	}{
		{"groups unseen: their batch means", 0, [][]float64{{0.4, 0.1, 0.1}, {0.2, -0.1, -0.1}, {-0.2, 0.1}, {-0.4, -0.1}, nil}},
		{"family a known", 0.6, [][]float64{{0.4, 0.3, 0.3}, {0.2, 0.1, 0.1}, {-0.2, 0.1}, {-0.4, -0.1}, nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.DecisionCredit = true
			var logged bytes.Buffer
			l := &learner{cfg: cfg, baseline: NewBaseline(0.1), log: slog.New(slog.NewTextHandler(&logged, nil))}
			if tc.known != 0 {
				l.baseline.observeKey(groupKey("t", episode.Scratch, "family=a"), tc.known)
			}
			samples := l.credit(jobs, utils)
			if !strings.Contains(logged.String(), "do not match its tokens") {
				t.Errorf("no warning for the action whose groups do not match its tokens; log:\n%s", logged.String())
			}
			for i, s := range samples {
				want := tc.tokens[i]
				if want == nil {
					if s.TokenAdvantages != nil {
						t.Errorf("job %d: token advantages %v, want none", i, s.TokenAdvantages)
					}
					continue
				}
				if len(s.TokenAdvantages) != len(want) {
					t.Fatalf("job %d: %d token advantages, want %d", i, len(s.TokenAdvantages), len(want))
				}
				for k := range want {
					if !near(s.TokenAdvantages[k], want[k]*scale) {
						t.Errorf("job %d token %d: advantage %.4f, want %.4f", i, k, s.TokenAdvantages[k], want[k]*scale)
					}
				}
				if !near(s.Advantage, want[0]*scale) {
					t.Errorf("job %d: program advantage %.4f, want %.4f", i, s.Advantage, want[0]*scale)
				}
			}
		})
	}
	t.Run("off", func(t *testing.T) {
		l := &learner{cfg: DefaultConfig(), baseline: NewBaseline(0.1)}
		for i, s := range l.credit(jobs, utils) {
			if s.TokenAdvantages != nil {
				t.Errorf("job %d: token advantages %v without DecisionCredit", i, s.TokenAdvantages)
			}
		}
	})
}

// The duration weight multiplies a token's advantage as it does its program's.
func TestDecisionCreditIsDurationWeighted(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DecisionCredit, cfg.NormalizeAdvantages = true, false
	l := &learner{cfg: cfg, baseline: NewBaseline(0.1)}
	mk := func(d float64) *job {
		return &job{prompt: Prompt{Kind: episode.Scratch}, result: episode.Result{Task: "t", Valid: true, DurationS: d},
			action: Action{TokenLogProbs: []float64{0, 0}, CreditGroups: []string{"", "family=a"}}}
	}
	samples := l.credit([]*job{mk(1), mk(3)}, []float64{1, 0})
	// Weights 0.5 and 1.5; advantages ±0.5 for both tokens (one family).
	for i, want := range [][]float64{{0.25, 0.25}, {-0.75, -0.75}} {
		for k := range want {
			if !near(samples[i].TokenAdvantages[k], want[k]) {
				t.Errorf("job %d: token advantages %v, want %v", i, samples[i].TokenAdvantages, want)
			}
		}
	}
}

// The critic learns each group's value from the updates, and keeps it in
// the checkpoint: after the first update (fast 1, slow 0, each its own
// group) the second batch's tokens are judged against their groups' values,
// so they get no credit, while their programs still do against the task's.
func TestDecisionCreditLearnsGroupValues(t *testing.T) {
	cfg := testConfig()
	cfg.DecisionCredit, cfg.DurationAware = true, false
	cfg.Batch, cfg.MaxEpisodes = 2, 4
	pol := &scripted{plans: []string{"fast", "slow"}, groups: map[string]string{"fast": "g=fast", "slow": "g=slow"}}
	sink := &Memory{}
	if _, err := Run(context.Background(), cfg, twoPlans(t, 2), pol, tasks, sink); err != nil {
		t.Fatal(err)
	}
	if len(pol.updates) != 2 {
		t.Fatalf("%d updates, want 2", len(pol.updates))
	}
	for _, s := range pol.updates[1] {
		if len(s.TokenAdvantages) != 1 || !near(s.TokenAdvantages[0], 0) {
			t.Errorf("%s: token advantages %v, want [0] (its group's value is its reward)", s.Action.Plan, s.TokenAdvantages)
		}
		if near(s.Advantage, 0) {
			t.Errorf("%s: program advantage 0; the task's value is between the two plans' rewards", s.Action.Plan)
		}
	}
	cp := sink.LastCK
	for _, g := range []string{"g=fast", "g=slow"} {
		if _, ok := cp.Baseline.valueOf(groupKey(tasks[0].Name, episode.Scratch, g)); !ok {
			t.Errorf("checkpoint's critic has no value for group %s: %v", g, cp.Baseline.Values)
		}
	}
}
