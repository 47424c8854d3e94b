package episode

import (
	"bytes"
	"context"
	"fmt"

	"github.com/mlerl/mlerl/instrument"
	"github.com/mlerl/mlerl/sandbox"
)

// Execution is the raw run of one job: everything an executor learns by
// instrumenting and running the program, and nothing that needs the task's
// private answers. A remote worker returns it; the trainer grades it (Grade),
// so answers never leave the trainer.
//
// The executor also reads the markers: the instrumenter's nonce is made where
// the program is sealed and must stay with whoever checks the fd-3 lines.
// Workers are trusted infrastructure; the sandboxed program is not.
type Execution struct {
	Episode         string   `json:"episode"`
	Task            string   `json:"task"`
	Kind            Kind     `json:"kind"`
	PolicyVersion   int      `json:"policy_version"`
	ExitCode        int      `json:"exit_code"`
	TimedOut        bool     `json:"timed_out"`
	DurationS       float64  `json:"duration_s"`
	Stages          []string `json:"stages"`
	Isolation       string   `json:"isolation"`
	PeakMemoryBytes int64    `json:"peak_memory_bytes"`
	Instrumentation string   `json:"instrumentation,omitempty"`
	// Settings are those the program really ran under: the job's, lowered to
	// the executor's ceilings.
	Settings Settings `json:"settings"`
	// Reused and ReusedFrom: see Result.
	Reused     bool   `json:"reused,omitempty"`
	ReusedFrom string `json:"reused_from,omitempty"`
	// Output is the head and tail of the output, traceback lines mapped back
	// to the policy's code.
	Output string `json:"output"`
	// ExitNote explains a non-zero exit (exit code, signal, OOM, the last
	// output line); empty on a clean exit.
	ExitNote string `json:"exit_note,omitempty"`
	// Wrote says the program left a submission file; Submission is its bytes.
	// Submission is kept out of the JSON so a transport can ship it its own way.
	Wrote      bool   `json:"wrote_submission"`
	Submission []byte `json:"-"`
}

// Execute is the worker's half of Run: instrument, run sandboxed in dataDir
// (the task's public files), read the stages. The error is for infrastructure
// failures only.
func (r *Runner) Execute(ctx context.Context, dataDir string, job Job) (Execution, error) {
	set := job.Settings.Under(r.Max)
	ex := Execution{
		Episode: job.ID, Task: job.Task, Kind: job.Kind, PolicyVersion: job.PolicyVersion,
		Stages: []string{}, Isolation: string(r.Sandbox.Level()), Settings: set,
	}
	ins, err := r.instrumenter(set.Instrument)
	if err != nil {
		return ex, fmt.Errorf("episode %s: %w", job.ID, err)
	}
	prog, err := instrument.Prepare(ctx, ins, job.Code)
	if err != nil {
		return ex, fmt.Errorf("episode %s: instrumenting: %w", job.ID, err)
	}
	ex.Instrumentation = prog.Method
	out, err := r.Sandbox.Run(ctx, sandbox.Spec{
		Program: []byte(prog.Code),
		DataDir: dataDir,
		Collect: []string{SubmissionFile},
		Limits:  sandbox.Limits{Timeout: set.Timeout, MemoryBytes: set.MemoryBytes},
		Env:     threadEnv(set.Threads),
	})
	if err != nil {
		return ex, fmt.Errorf("episode %s: %w", job.ID, err)
	}
	ex.ExitCode = out.ExitCode
	ex.TimedOut = out.TimedOut
	ex.DurationS = out.Duration.Seconds()
	ex.PeakMemoryBytes = out.PeakMemoryBytes
	ex.Isolation = string(out.Isolation)
	// Tracebacks name the sealed program's lines; map them back to the lines
	// the policy wrote, since improve prompts show this output to the policy.
	ex.Output = prog.MapOutput(string(out.Output), sandbox.ProgramName)
	ex.Stages = prog.Stages(out.Markers)
	if ex.Stages == nil {
		ex.Stages = []string{}
	}
	ex.ExitNote = exitNote(out)
	ex.Submission, ex.Wrote = out.Files[SubmissionFile]
	return ex, nil
}

// Grade is the trainer's half of Run: grade the submission against p's
// private answers and compute the reward with rw (zero: DefaultReward()).
func Grade(p *Prepared, ex Execution, rw Reward) Result {
	if rw == (Reward{}) {
		rw = DefaultReward()
	}
	res := Result{
		Episode: ex.Episode, Task: p.Task.Name, Kind: ex.Kind, PolicyVersion: ex.PolicyVersion,
		ExitCode: ex.ExitCode, TimedOut: ex.TimedOut, DurationS: ex.DurationS, Stages: ex.Stages,
		Isolation: ex.Isolation, PeakMemoryBytes: ex.PeakMemoryBytes, Output: ex.Output,
		Instrumentation: ex.Instrumentation, Reused: ex.Reused, ReusedFrom: ex.ReusedFrom,
	}
	if res.Stages == nil {
		res.Stages = []string{}
	}
	switch {
	case ex.TimedOut:
		// A program that overran its budget is not graded even if it left a
		// file behind: otherwise writing early and looping forever would pay.
		res.Error = fmt.Sprintf("timed out after %.0fs", res.DurationS)
	case !ex.Wrote:
		res.Error = "no " + SubmissionFile + " written" + ex.ExitNote
	default:
		g := p.Answers.Grade(bytes.NewReader(ex.Submission))
		res.Valid, res.Error = g.Valid, g.Error
		if g.Valid {
			res.Score = g.Score
			res.Submission = ex.Submission
		} else {
			res.Error = "invalid submission: " + g.Error
		}
	}
	score := 0.0
	if res.Score != nil {
		score = *res.Score
	}
	res.Reward = rw.Of(res.Valid, score, p.Task.LowerIsBetter(), len(res.Stages))
	return res
}
