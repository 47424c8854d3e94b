package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/mlerl/mlerl/grade"
	"github.com/mlerl/mlerl/suite"
	"github.com/mlerl/mlerl/task"
)

// loadTask resolves a suite name or a folder path (CONTRACT.md §3) and loads it.
// Any failure is bad input: exit status 2.
func loadTask(nameOrPath string) (*task.Task, error) {
	if nameOrPath == "" {
		return nil, usageErrorf("--task is required (a suite name or a task folder)")
	}
	dir, err := suite.Resolve(nameOrPath)
	if err != nil {
		return nil, errUsage{err}
	}
	t, err := task.Load(dir)
	if err != nil {
		return nil, errUsage{err}
	}
	return t, nil
}

func runTasks(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: mlerl tasks list [--json] | mlerl tasks check TASK | mlerl tasks import-mlebench ...")
		return 2
	}
	switch args[0] {
	case "list":
		return exitStatus(stderr, tasksList(args[1:], stdout, stderr))
	case "check":
		return exitStatus(stderr, tasksCheck(args[1:], stderr))
	case "import-mlebench":
		return exitStatus(stderr, tasksImportMLEBench(args[1:], stderr))
	default:
		return exitStatus(stderr, usageErrorf("tasks: unknown subcommand %q (want list, check or import-mlebench)", args[0]))
	}
}

type taskEntry struct {
	Name          string `json:"name"`
	Metric        string `json:"metric"`
	LowerIsBetter bool   `json:"lower_is_better"`
	Path          string `json:"path"`
}

func tasksList(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tasks list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print one JSON document on stdout")
	if err := fs.Parse(args); err != nil {
		return errUsage{err}
	}
	root, err := suite.Dir()
	if err != nil {
		return fmt.Errorf("extracting the built-in suite: %w", err)
	}
	entries := []taskEntry{}
	for _, name := range suite.Names() {
		t, err := task.Load(filepath.Join(root, name))
		if err != nil {
			return err
		}
		entries = append(entries, taskEntry{t.Name, t.Metric, t.LowerIsBetter(), t.Dir})
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(entries)
	}
	for _, e := range entries {
		fmt.Fprintf(stdout, "%-22s %-18s %-17s %s\n", e.Name, e.Metric, grade.Direction(e.LowerIsBetter), e.Path)
	}
	return nil
}

func tasksCheck(args []string, stderr io.Writer) error {
	if len(args) != 1 {
		return usageErrorf("usage: mlerl tasks check TASK")
	}
	t, err := loadTask(args[0])
	if err != nil {
		return err
	}
	if err := t.Check(); err != nil {
		return errUsage{err}
	}
	fmt.Fprintf(stderr, "%s: ok (%s, %s)\n", t.Name, t.Metric, t.Dir)
	return nil
}
