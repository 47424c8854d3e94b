package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/mlerl/mlerl/report"
)

// bench mlebench trains on MLE-bench competitions one by one and prints the
// MLE-bench paper's Table 1 (docs/mlebench.md). Each competition is imported
// into DIR/tasks/ID (once) and trained exactly as `mlerl train` trains, in
// DIR/runs/ID; a competition whose run has finished is not trained again, so
// an interrupted bench continues where it stopped.

const benchMLEUsage = "usage: mlerl bench mlebench --repo MLEBENCH --data DATA [--out DIR] [--budget 4m] [--policy recipe|llm ...] [--seed S] [--json] ID..."

func benchMLEBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("bench mlebench", flag.ContinueOnError)
	fl.SetOutput(stderr)
	repo := fl.String("repo", "", "MLE-bench checkout (with its Git LFS files pulled)")
	data := fl.String("data", "", "MLE-bench data folder: DATA/<id>/prepared/{public,private}")
	out := fl.String("out", "mlebench-bench", "folder for the imported tasks (DIR/tasks) and the runs (DIR/runs)")
	asJSON := fl.Bool("json", false, "print the table as one JSON document on stdout")
	var rc runConfig
	fl.StringVar(&rc.Policy, "policy", "recipe", "the policy: recipe (built in) or llm (an OpenAI-compatible server)")
	fl.DurationVar(&rc.Budget, "budget", 4*time.Minute, "training budget per competition")
	fl.IntVar(&rc.Workers, "workers", runtime.NumCPU(), "local executor slots")
	fl.IntVar(&rc.Batch, "batch", 8, "B: one update on each B completed episodes")
	fl.Uint64Var(&rc.Seed, "seed", 1, "random seed")
	var pf policyFlags
	pf.register(fl)
	var lf learnFlags
	lf.register(fl)
	var ef envFlags
	ef.register(fl)
	ids, err := parseInterleaved(fl, args)
	if err != nil {
		return err
	}
	if *repo == "" || *data == "" || len(ids) == 0 {
		return usageErrorf("%s", benchMLEUsage)
	}
	if rc.Workers < 1 || rc.Batch < 1 || rc.Budget <= 0 {
		return usageErrorf("bench mlebench: --workers, --batch and --budget must be positive")
	}
	set := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["timeout"] {
		ef.timeout = programTimeout(rc.Budget, ef.timeout) // as train sets it
	}
	rc.Instrument, rc.Timeout, rc.Memory, rc.Isolation = ef.instrument, ef.timeout, ef.memory, ef.isolation
	rc.InstrumenterURL, rc.InstrumenterModel = ef.instrumenterURL, ef.instrumenterModel
	pf.apply(&rc)
	lf.apply(&rc, set)
	probe := rc
	probe.Tasks = ids // each competition's run names its own task
	if err := probe.check(); err != nil {
		return err
	}
	var rows []report.MLEBenchRow
	for _, id := range ids {
		row, err := benchCompetition(ctx, rc, &ef, *repo, *data, *out, id, stderr)
		if err != nil {
			return fmt.Errorf("bench mlebench: %s: %w", id, err)
		}
		rows = append(rows, row)
	}
	table, err := report.NewMLEBenchTable(rows)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(table)
	}
	return table.Print(stdout)
}

// benchCompetition imports competition id (unless DIR/tasks/id is there),
// trains on it (unless DIR/runs/id has finished) and reads its row.
func benchCompetition(ctx context.Context, rc runConfig, ef *envFlags, repo, data, out, id string, stderr io.Writer) (report.MLEBenchRow, error) {
	taskDir := filepath.Join(out, "tasks", id)
	if _, err := os.Stat(filepath.Join(taskDir, "task.yaml")); errors.Is(err, fs.ErrNotExist) {
		if _, err := importCompetition(repo, data, filepath.Dir(taskDir), id, stderr); err != nil {
			return report.MLEBenchRow{}, errUsage{err}
		}
		fmt.Fprintf(stderr, "%s: imported to %s\n", id, taskDir)
	}
	runDir := filepath.Join(out, "runs", id)
	_, err := os.Stat(filepath.Join(runDir, "summary.json"))
	switch {
	case err == nil:
		fmt.Fprintf(stderr, "%s: %s has finished; its result is reused (remove it to train again)\n", id, runDir)
	case !errors.Is(err, fs.ErrNotExist):
		return report.MLEBenchRow{}, err
	default:
		if _, err := os.Stat(runDir); err == nil {
			return report.MLEBenchRow{}, usageErrorf("%s exists but has not finished: continue it with `mlerl train --resume %s`, or remove it", runDir, runDir)
		}
		if err := os.MkdirAll(filepath.Dir(runDir), 0o755); err != nil {
			return report.MLEBenchRow{}, err
		}
		rc.Tasks = []string{taskDir}
		tr := trainRun{rc: rc, dir: runDir, env: ef, queue: &queueFlags{ackWait: 30 * time.Second}, stderr: stderr}
		if err := tr.run(ctx); err != nil {
			return report.MLEBenchRow{}, err
		}
	}
	run, err := report.Load(runDir)
	if err != nil {
		return report.MLEBenchRow{}, err
	}
	return report.MLEBenchRowOf(id, runDir, run)
}
