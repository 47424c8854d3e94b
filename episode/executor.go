package episode

import (
	"context"
	"fmt"
	"time"
)

// Executor runs jobs on a number of slots and hands back their raw
// executions in completion order. Every way a program gets run is one: the
// local Pool, the job queue's workers (queue.Env), the Cache in front of
// either, and serve. None of them sees a task's answers: the trainer grades
// (Graded).
type Executor interface {
	// Slots is the number of jobs that can run at once.
	Slots() int
	// Submit starts job; it does not wait for it to finish.
	Submit(ctx context.Context, job Job) error
	// Next waits for the next job to finish.
	Next(ctx context.Context) (Execution, error)
	// Now is the executor's clock: time since it started.
	Now() time.Duration
}

// Graded is the trainer's one step from executions to episode results, the
// same whichever executor ran the program: it fills each job's task data and
// the run's settings, and grades each execution against the task's private
// answers with the run's reward. It is the learner's environment (rl.Env).
type Graded struct {
	Executor
	tasks    map[string]*Prepared
	reward   Reward
	settings Settings
}

// NewGraded grades ex's executions for tasks with rw (zero: DefaultReward());
// every job submitted through it carries settings.
func NewGraded(ex Executor, tasks []*Prepared, rw Reward, settings Settings) *Graded {
	if rw == (Reward{}) {
		rw = DefaultReward()
	}
	g := &Graded{Executor: ex, tasks: map[string]*Prepared{}, reward: rw, settings: settings}
	for _, p := range tasks {
		g.tasks[p.Task.Name] = p
	}
	return g
}

// Submit completes job (task data digest, the run's settings) and starts it.
func (g *Graded) Submit(ctx context.Context, job Job) error {
	p, ok := g.tasks[job.Task]
	if !ok {
		return fmt.Errorf("job %s: unknown task %q", job.ID, job.Task)
	}
	job.Data = p.Data
	job.Settings = g.settings
	return g.Executor.Submit(ctx, job)
}

// Next grades the next execution.
func (g *Graded) Next(ctx context.Context) (Result, error) {
	ex, err := g.Executor.Next(ctx)
	if err != nil {
		return Result{}, err
	}
	p, ok := g.tasks[ex.Task]
	if !ok {
		return Result{}, fmt.Errorf("execution %s: unknown task %q", ex.Episode, ex.Task)
	}
	return Grade(p, ex, g.reward), nil
}

// Busy is the number of programs running, when the executor knows it.
func (g *Graded) Busy() int {
	if b, ok := g.Executor.(interface{ Busy() int }); ok {
		return b.Busy()
	}
	return 0
}
