package episode

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Pool is the plain local executor: a fixed number of slots, each running
// one sandboxed program at a time with the Runner, reading task data from
// local folders. It needs no broker (exec, serve, tests); train runs its
// local slots as workers of its job queue instead, so that remote workers
// can join.
type Pool struct {
	runner *Runner
	dirs   map[string]string // task name -> public folder
	slots  int
	start  time.Time

	mu      sync.Mutex
	busy    int
	done    chan completion
	wg      sync.WaitGroup
	runCtx  context.Context
	stopRun context.CancelFunc
}

type completion struct {
	ex  Execution
	err error
}

// NewPool makes a pool of slots executors for tasks, given as task name ->
// folder of its public files.
func NewPool(r *Runner, tasks map[string]string, slots int) (*Pool, error) {
	if slots < 1 {
		return nil, fmt.Errorf("pool: need at least one executor slot, got %d", slots)
	}
	m := make(map[string]string, len(tasks))
	for k, v := range tasks {
		m[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Pool{
		runner: r, dirs: m, slots: slots, start: time.Now(),
		// Buffered to the slot count: a finished episode never waits for the learner.
		done:   make(chan completion, slots),
		runCtx: ctx, stopRun: cancel,
	}, nil
}

// Slots is the number of episodes that can run at once.
func (p *Pool) Slots() int { return p.slots }

// Now is the wall-clock time since the pool started.
func (p *Pool) Now() time.Duration { return time.Since(p.start) }

// Submit starts a job on a free slot. It fails when every slot is busy, so a
// learner that over-submits learns at once instead of queueing silently.
func (p *Pool) Submit(ctx context.Context, job Job) error {
	dir, ok := p.dirs[job.Task]
	if !ok {
		return fmt.Errorf("pool: job %s: unknown task %q", job.ID, job.Task)
	}
	p.mu.Lock()
	if p.busy >= p.slots {
		p.mu.Unlock()
		return fmt.Errorf("pool: job %s: all %d slots are busy", job.ID, p.slots)
	}
	p.busy++
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		// Episodes outlive the Submit call's ctx; Close cancels them.
		ex, err := p.runner.Execute(p.runCtx, dir, job)
		p.mu.Lock()
		p.busy--
		p.mu.Unlock()
		p.done <- completion{ex, err}
	}()
	return nil
}

// Next waits for the next episode to finish, in completion order.
func (p *Pool) Next(ctx context.Context) (Execution, error) {
	select {
	case c := <-p.done:
		return c.ex, c.err
	case <-ctx.Done():
		return Execution{}, ctx.Err()
	}
}

// Busy is the number of episodes running now.
func (p *Pool) Busy() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.busy
}

// Close kills running episodes and waits for their sandboxes to clean up.
func (p *Pool) Close() {
	p.stopRun()
	go func() {
		for range p.done {
		}
	}()
	p.wg.Wait()
	close(p.done)
}
