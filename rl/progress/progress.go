// Package progress is train's progress line: one line per update and a
// heartbeat between updates, so a person watching a long run always knows
// where it is. Episodes and the best score count results as they arrive,
// not only at updates: on a task whose programs take a minute, a batch of 8
// takes minutes to fill.
package progress

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/task"
)

// Line prints the progress of one run.
type Line struct {
	w      io.Writer
	budget time.Duration
	busy   func() int
	task   *task.Task // the task whose best score is shown (the first, as in summary.json)
	start  time.Time

	mu       sync.Mutex
	episodes int // completed, as of the last update
	since    int // completed after the last update
	updates  int
	best     *float64
}

// New makes the line of a run of budget on t; busy says how many programs
// are running (nil: none shown).
func New(w io.Writer, budget time.Duration, busy func() int, t *task.Task) *Line {
	if busy == nil {
		busy = func() int { return 0 }
	}
	return &Line{w: w, budget: budget, busy: busy, task: t, start: time.Now()}
}

// offer keeps score if it beats the best so far (the caller holds mu).
func (p *Line) offer(score float64) {
	if p.best == nil || (p.task.LowerIsBetter() && score < *p.best) || (!p.task.LowerIsBetter() && score > *p.best) {
		p.best = &score
	}
}

// Print writes the line now.
func (p *Line) Print() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.print()
}

func (p *Line) print() {
	best := "-"
	if p.best != nil {
		best = fmt.Sprintf("%.4g", *p.best)
	}
	fmt.Fprintf(p.w, "[%s/%s] episodes %d, updates %d, running %d, best score %s\n",
		time.Since(p.start).Round(time.Second), p.budget, p.episodes+p.since, p.updates, p.busy(), best)
}

// result counts a completed episode and offers its score if it is valid.
func (p *Line) result(r episode.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.since++
	if r.Valid && r.Score != nil && r.Task == p.task.Name {
		p.offer(*r.Score)
	}
}

// Tick prints the line every so often until stop is called or ctx ends.
func (p *Line) Tick(ctx context.Context, every time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				p.Print()
			}
		}
	}()
	return cancel
}

// Env reports each result to the line as the learner takes it.
func (p *Line) Env(env rl.Env) rl.Env { return lineEnv{env, p} }

type lineEnv struct {
	rl.Env
	p *Line
}

func (e lineEnv) Next(ctx context.Context) (episode.Result, error) {
	r, err := e.Env.Next(ctx)
	if err == nil {
		e.p.result(r)
	}
	return r, err
}

// SummaryStats passes the wrapped Env's counts on (rl.EnvStats).
func (e lineEnv) SummaryStats() (int, map[string]any) {
	if s, ok := e.Env.(rl.EnvStats); ok {
		return s.SummaryStats()
	}
	return 0, nil
}

// Sink prints the line at every update, with the learner's counts.
func (p *Line) Sink(s rl.Sink) rl.Sink { return lineSink{s, p} }

type lineSink struct {
	rl.Sink
	p *Line
}

func (s lineSink) Metrics(m rl.Metrics) error {
	s.p.mu.Lock()
	s.p.episodes, s.p.since, s.p.updates = m.Episodes, 0, m.Update
	if m.BestScore != nil { // the learner's best, which includes a resumed run's
		s.p.offer(*m.BestScore)
	}
	s.p.print()
	s.p.mu.Unlock()
	return s.Sink.Metrics(m)
}
