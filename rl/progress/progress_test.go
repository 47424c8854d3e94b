package progress

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/task"
)

// scriptedEnv hands out a fixed list of results; only Next matters here.
type scriptedEnv struct {
	rl.Env
	results []episode.Result
}

func (e *scriptedEnv) Next(context.Context) (episode.Result, error) {
	r := e.results[0]
	e.results = e.results[1:]
	return r, nil
}

// The progress line counts episodes and the best score as results arrive,
// before any update, compares scores the metric's way, and takes the
// learner's (possibly resumed) best at an update without losing a better one.
func TestLineCountsResultsAsTheyArrive(t *testing.T) {
	score := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		metric  string
		results []episode.Result
		learner float64 // the best score the update reports
		before  string  // the line before the update
		after   string  // the line after it
	}{
		{"log_loss", []episode.Result{
			{Task: "t", Valid: true, Score: score(0.9)},
			{Task: "t", Valid: false, Score: nil},
			{Task: "t", Valid: true, Score: score(0.4)},
			{Task: "other", Valid: true, Score: score(0.1)}, // not the shown task
			{Task: "t", Valid: true, Score: score(0.6)},
		}, 0.5, "episodes 5, updates 0, running 2, best score 0.4", "episodes 7, updates 1, running 2, best score 0.4"},
		{"accuracy", []episode.Result{
			{Task: "t", Valid: true, Score: score(0.7)},
			{Task: "t", Valid: true, Score: score(0.8)},
		}, 0.95, "episodes 2, updates 0, running 2, best score 0.8", "episodes 7, updates 1, running 2, best score 0.95"},
	} {
		t.Run(tc.metric, func(t *testing.T) {
			var out bytes.Buffer
			p := New(&out, 4*time.Minute, func() int { return 2 }, &task.Task{Name: "t", Metric: tc.metric})
			env := p.Env(&scriptedEnv{results: tc.results})
			for range tc.results {
				if _, err := env.Next(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			p.Print()
			if got := out.String(); !strings.Contains(got, tc.before) {
				t.Errorf("before the update: %q, want %q", got, tc.before)
			}
			out.Reset()
			// An update that has seen 7 episodes in all (2 from a resumed run).
			if err := p.Sink(rl.Discard{}).Metrics(rl.Metrics{Update: 1, Episodes: 7, BestScore: score(tc.learner)}); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); !strings.Contains(got, tc.after) {
				t.Errorf("after the update: %q, want %q", got, tc.after)
			}
		})
	}
}
