package episode

import (
	"bytes"
	"context"
	"fmt"
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
}

// Run executes one job. The error is for infrastructure failures only (the
// sandbox could not start); a program that fails is a Result with its reward.
func (r *Runner) Run(ctx context.Context, p *Prepared, job Job) (Result, error) {
	res := Result{
		Episode: job.ID, Task: p.Task.Name, Kind: job.Kind, PolicyVersion: job.PolicyVersion,
		Stages: []string{}, Isolation: string(r.Sandbox.Level()),
	}
	prog, err := instrument.Prepare(ctx, r.Instrumenter, job.Code)
	if err != nil {
		return res, fmt.Errorf("episode %s: instrumenting: %w", job.ID, err)
	}
	res.Instrumentation = prog.Method
	out, err := r.Sandbox.Run(ctx, sandbox.Spec{
		Program: []byte(prog.Code),
		DataDir: p.Task.PublicDir(),
		Collect: []string{SubmissionFile},
		Limits:  r.Limits,
	})
	if err != nil {
		return res, fmt.Errorf("episode %s: %w", job.ID, err)
	}
	res.ExitCode = out.ExitCode
	res.TimedOut = out.TimedOut
	res.DurationS = out.Duration.Seconds()
	res.PeakMemoryBytes = out.PeakMemoryBytes
	res.Isolation = string(out.Isolation)
	// Tracebacks name the sealed program's lines; map them back to the lines
	// the policy wrote, since improve prompts show this output to the policy.
	res.Output = prog.MapOutput(string(out.Output), sandbox.ProgramName)
	res.Stages = prog.Stages(out.Markers)
	if res.Stages == nil {
		res.Stages = []string{}
	}

	sub, wrote := out.Files[SubmissionFile]
	switch {
	case out.TimedOut:
		// A program that overran its budget is not graded even if it left a
		// file behind: otherwise writing early and looping forever would pay.
		res.Error = fmt.Sprintf("timed out after %.0fs", res.DurationS)
	case !wrote:
		res.Error = "no " + SubmissionFile + " written" + exitNote(out)
	default:
		g := p.Answers.Grade(bytes.NewReader(sub))
		res.Valid, res.Error = g.Valid, g.Error
		if g.Valid {
			res.Score = g.Score
			res.Submission = sub
		} else {
			res.Error = "invalid submission: " + g.Error
		}
	}
	score := 0.0
	if res.Score != nil {
		score = *res.Score
	}
	res.Reward = r.reward().Of(res.Valid, score, p.Task.LowerIsBetter(), len(res.Stages))
	return res, nil
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
