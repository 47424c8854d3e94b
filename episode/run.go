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

// Prepared is a task made ready for many episodes: its answers parsed once,
// its public files' digest taken once.
type Prepared struct {
	Task    *task.Task
	Answers *grade.Answers
	// Data is DataDigest of the task's public folder.
	Data string
}

// Prepare loads a task's answers; a broken answers file is a broken task.
func Prepare(t *task.Task) (*Prepared, error) {
	ans, err := t.Answers()
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", t.Name, err)
	}
	sum, err := DataDigest(t.PublicDir())
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", t.Name, err)
	}
	return &Prepared{Task: t, Answers: ans, Data: sum}, nil
}

// Runner runs episodes: instrument, run sandboxed, grade, reward. It is the
// executor behind a local slot and a remote worker alike.
type Runner struct {
	Sandbox *sandbox.Sandbox
	// Instrumenter serves jobs asking for the mode Max.Instrument names (the
	// LM instrumenter for "lm"); "ast" and "none" need nothing configured.
	Instrumenter instrument.Instrumenter
	Reward       Reward
	// Max are this executor's ceilings, and the settings of a job that leaves
	// one unset: a job may ask for less time, memory or threads, never more
	// (Settings.Under). Zero fields leave the sandbox's defaults. Threads
	// should be cores / programs running at once: two programs of two OpenMP
	// threads each on two cores stall each other (a thread spins on a core the
	// thread it waits for needs; bench/RESULTS.md has the measurement).
	Max Settings
}

// threadEnv is the environment that sets a program's thread counts.
func threadEnv(threads int) []string {
	if threads <= 0 {
		return nil
	}
	n := strconv.Itoa(threads)
	return []string{"OMP_NUM_THREADS=" + n, "OPENBLAS_NUM_THREADS=" + n, "MKL_NUM_THREADS=" + n}
}

// instrumenter is the one for mode: the configured one when it is that
// mode's, a fresh AST instrumenter for "ast", nil for "none".
func (r *Runner) instrumenter(mode string) (instrument.Instrumenter, error) {
	switch {
	case mode == "none":
		return nil, nil
	case mode == r.Max.Instrument && r.Instrumenter != nil:
		return r.Instrumenter, nil
	case mode == "ast" || mode == "":
		return instrument.NewAST(""), nil
	}
	return nil, fmt.Errorf("instrumentation %q is not configured on this executor (it has %q)", mode, r.Max.Instrument)
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
	job.Task, job.Data = p.Task.Name, p.Data
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
		return DefaultReward()
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
