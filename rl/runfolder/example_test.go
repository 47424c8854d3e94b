package runfolder_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mlerl/mlerl/report"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/rl/replay"
	"github.com/mlerl/mlerl/rl/runfolder"
	"github.com/mlerl/mlerl/rl/tabular"
	"github.com/mlerl/mlerl/task"
)

// How `mlerl train --out DIR` wires a run: a run folder as the Sink, the
// learner, then the report. `--resume DIR` swaps Create for Resume and passes
// the checkpoint in Config.Resume.
func Example() {
	dir, _ := os.MkdirTemp("", "run")
	defer os.RemoveAll(dir)

	table, _ := replay.Builtin("synthetic")
	env, _ := replay.New(table, replay.Config{Workers: 8, Seed: 1})
	pol, _ := tabular.New(table.Keys(), tabular.DefaultConfig())
	folder, err := runfolder.Create(dir, runfolder.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := rl.DefaultConfig()
	cfg.Batch, cfg.Budget, cfg.Seed = 8, 10*time.Minute, 1
	sum, err := rl.Run(context.Background(), cfg, env, pol, []*task.Task{{Name: "synthetic-churn"}}, folder)
	folder.Close()
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := report.Write(dir); err != nil {
		fmt.Println(err)
		return
	}
	_, statErr := os.Stat(filepath.Join(dir, "report.html"))
	fmt.Println(sum.Stopped, sum.Dispatched == sum.Completed+sum.AbandonedAtStop, sum.Updates > 0, statErr == nil)
	// Output: budget true true true
}
