package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/policy/recipe"
	"github.com/mlerl/mlerl/rl/replay"
)

const recordUsage = `usage: mlerl bench record-replay --task T --out FILE [--plans N] [--repeats R] [--seed S] [--timeout DUR]
       [--threads N] [--instrument none|ast|lm] [--memory BYTES] [--isolation LEVEL]

Records a replay table from real executions: picks N recipe plans for task T (the default plan,
the hand-picked edits of policy/recipe/testdata/measured.md that T allows, then random plans from
seed S), renders each ("# plan: KEY" first line), runs each R times through the real episode
runner (sandbox, instrumentation, grader, reward; the same as exec and train), and appends one
replay row per execution to FILE, flushed as it comes. Progress goes to stderr. Running it again
on the same FILE continues: a plan's repeat already in FILE is skipped. A new FILE starts with a
"//" header saying how it was recorded. Each program gets --threads OpenMP/BLAS threads, by
default what train gives each of its 2 default workers on a 2-core machine (1), so the recorded
durations are those of the programs train runs.
`

func benchRecordReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench record-replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, recordUsage); fs.PrintDefaults() }
	taskArg := fs.String("task", "", "suite name or task folder")
	out := fs.String("out", "", "replay table to write (JSONL; appended to, and continued, if it exists)")
	nPlans := fs.Int("plans", 16, "plans to record: the default, the hand-picked edits, then random ones")
	repeats := fs.Int("repeats", 2, "executions per plan")
	seed := fs.Uint64("seed", 1, "seed of the random plans")
	threads := fs.Int("threads", episode.ThreadsPerProgram(2, 2), "OpenMP/BLAS threads per program (train: cores / workers)")
	var ef envFlags
	ef.register(fs)
	_ = fs.Set("timeout", "5m") // a recording's own default: slow plans should finish, runaway ones not stall it
	fs.Lookup("timeout").DefValue = "5m0s"
	if err := fs.Parse(args); err != nil {
		return errUsage{err}
	}
	switch {
	case fs.NArg() > 0:
		return usageErrorf("bench record-replay: unexpected argument %q", fs.Arg(0))
	case *out == "":
		return usageErrorf("bench record-replay: --out is required")
	case *nPlans < 1:
		return usageErrorf("--plans %d: must be at least 1", *nPlans)
	case *repeats < 1:
		return usageErrorf("--repeats %d: must be at least 1", *repeats)
	case *threads < 1:
		return usageErrorf("--threads %d: must be at least 1", *threads)
	}
	t, err := loadTask(*taskArg)
	if err != nil {
		return err
	}
	prof, err := recipe.NewProfile(t)
	if err != nil {
		return errUsage{fmt.Errorf("task %s: %w", t.Name, err)}
	}
	prep, err := episode.Prepare(t)
	if err != nil {
		return errUsage{err}
	}
	done, doneTask, err := replay.Recorded(*out)
	if err != nil {
		return errUsage{fmt.Errorf("--out: %w", err)}
	}
	if doneTask != "" && doneTask != t.Name {
		return usageErrorf("--out %s holds rows of task %s, not %s", *out, doneTask, t.Name)
	}
	programs, err := candidatePrograms(prof, *nPlans, *seed)
	if err != nil {
		return err
	}
	runner, err := ef.runner(ctx)
	if err != nil {
		return err
	}
	runner.Max.Threads = *threads
	f, err := openTable(*out, recordHeader(t.Name, string(runner.Sandbox.Level()), *threads, args))
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(stderr, "recording %d plans x %d repeats of %s into %s (isolation %s, timeout %v, %d thread(s) per program)\n",
		len(programs), *repeats, t.Name, *out, runner.Sandbox.Level(), ef.timeout, *threads)
	rec := &replay.Recorder{
		Run:      func(ctx context.Context, job episode.Job) (episode.Result, error) { return runner.Run(ctx, prep, job) },
		Out:      f,
		Sync:     f.Sync,
		Progress: stderr,
		Done:     done,
	}
	sum, err := rec.Record(ctx, programs, *repeats)
	fmt.Fprintf(stderr, "recorded %d executions (%d valid), skipped %d already in %s, in %.0fs\n",
		sum.Executed, sum.Valid, sum.Skipped, *out, sum.Elapsed.Seconds())
	if err != nil {
		return fmt.Errorf("bench record-replay: %w", err)
	}
	return f.Close()
}

// candidatePrograms renders recipe.Candidates, each noted with its name.
func candidatePrograms(prof *recipe.Profile, n int, seed uint64) ([]replay.Program, error) {
	plans := recipe.Candidates(prof, n, seed)
	programs := make([]replay.Program, len(plans))
	for i, c := range plans {
		code, err := recipe.Render(prof, c.Plan)
		if err != nil {
			return nil, fmt.Errorf("bench record-replay: rendering %s: %w", c.Name, err)
		}
		programs[i] = replay.Program{Note: c.Name, Code: code}
	}
	return programs, nil
}

// openTable opens a replay table for appending; a new one starts with header.
func openTable(path, header string) (*os.File, error) {
	st, err := os.Stat(path)
	fresh := err != nil || st.Size() == 0
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, usageErrorf("--out: %v", err)
	}
	if fresh {
		if _, err := io.WriteString(f, header); err != nil {
			f.Close()
			return nil, fmt.Errorf("--out: %w", err)
		}
	}
	return f, nil
}

// recordHeader is the "//" comment block a new table starts with.
func recordHeader(taskName, isolation string, threads int, args []string) string {
	host, _ := os.Hostname()
	var b strings.Builder
	fmt.Fprintf(&b, "// Replay table of task %s, recorded from real executions of recipe plans.\n", taskName)
	fmt.Fprintf(&b, "// Command: mlerl bench record-replay %s\n", strings.Join(args, " "))
	fmt.Fprintf(&b, "// Started %s on %s (%s/%s, %d CPUs), isolation %s.\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), host, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), isolation)
	fmt.Fprintf(&b, "// %d OpenMP/BLAS thread(s) per program.\n", threads)
	b.WriteString("// One row per execution: plan key, duration, stages reached, validity, score, reward, note = plan's name.\n")
	return b.String()
}
