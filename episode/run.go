package episode

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/mlerl/mlerl/grade"
	"github.com/mlerl/mlerl/instrument"
	"github.com/mlerl/mlerl/sandbox"
	"github.com/mlerl/mlerl/task"
)

// SubmissionFile is what a program must write into its working directory.
const SubmissionFile = "submission.csv"

// Prepared is a task made ready for many episodes: its answers parsed once.
type Prepared struct {
	Task    *task.Task
	Answers *grade.Answers
}

// Prepare loads a task's answers; a broken answers file is a broken task.
func Prepare(t *task.Task) (*Prepared, error) {
	ans, err := t.Answers()
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", t.Name, err)
	}
	return &Prepared{Task: t, Answers: ans}, nil
}

// Runner runs episodes: instrument, run sandboxed, grade, reward.
type Runner struct {
	Sandbox *sandbox.Sandbox
	// Instrumenter inserts progress markers; nil runs programs unchanged (no partial credit).
	Instrumenter instrument.Instrumenter
	Reward       Reward
	// Limits override the sandbox's defaults for every episode (zero fields keep them).
	Limits sandbox.Limits
	// Threads is how many threads a program's OpenMP and BLAS libraries may
	// use (0: the sandbox's default, 2). Set it to cores / programs running
	// at once: two programs of two OpenMP threads each on two cores stall
	// each other (a thread spins on a core the thread it waits for needs):
	// measured on a 2-core machine, two histogram-boosting programs side by
	// side took 5-160 s at two threads each, 2.5-2.8 s at one.
	Threads int
}

// env is the environment the runner adds to every program.
func (r *Runner) env() []string {
	if r.Threads <= 0 {
		return nil
	}
	n := strconv.Itoa(r.Threads)
	return []string{"OMP_NUM_THREADS=" + n, "OPENBLAS_NUM_THREADS=" + n, "MKL_NUM_THREADS=" + n}
}

// ThreadsPerProgram splits cores evenly among slots programs running at
// once, at least one thread each.
func ThreadsPerProgram(cores, slots int) int {
	if slots < 1 {
		slots = 1
	}
	return max(1, cores/slots)
}

// Run executes one job: Execute, then Grade with the runner's reward. The
// error is for infrastructure failures only (the sandbox could not start); a
// program that fails is a Result with its reward.
func (r *Runner) Run(ctx context.Context, p *Prepared, job Job) (Result, error) {
	job.Task = p.Task.Name
	ex, err := r.Execute(ctx, p.Task.PublicDir(), job)
	if err != nil {
		return Result{
			Episode: job.ID, Task: p.Task.Name, Kind: job.Kind, PolicyVersion: job.PolicyVersion,
			Stages: []string{}, Isolation: ex.Isolation, Instrumentation: ex.Instrumentation,
		}, err
	}
	return Grade(p, ex, r.reward()), nil
}

func (r *Runner) reward() Reward {
	if r.Reward == (Reward{}) {
		return DefaultReward
	}
	return r.Reward
}

// exitNote explains a non-zero exit with the last line of output, usually the
// Python exception.
func exitNote(out sandbox.Result) string {
	if out.ExitCode == 0 {
		return ""
	}
	note := fmt.Sprintf(" (exit code %d", out.ExitCode)
	if out.Signal != "" {
		note += ", " + out.Signal
	}
	if out.OOM {
		note += ", out of memory"
	}
	if last := lastLine(out.Output); last != "" {
		note += ": " + last
	}
	return note + ")"
}

func lastLine(b []byte) string {
	s := strings.TrimRight(string(b), "\n ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
