package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/rl/ablation"
	"github.com/mlerl/mlerl/rl/replay"
)

const benchUsage = `usage: mlerl bench duration-ablation [--json] [--seeds N] [--workers N] [--budget DUR] [--batch B] [--table NAME|FILE]
       mlerl bench record-replay --task T --out FILE [--plans N] [--repeats R] [--seed S] [--timeout DUR]
       mlerl bench mlebench --repo MLEBENCH --data DATA [--out DIR] [--budget 4m] [--policy recipe|llm ...] [--seed S] [--json] ID...
       mlerl bench rl-vs-prompting --task T[,T...] [--seeds 5] [--first-seed 1] [--budget 4m] [--workers 2] [--batch 8] [--arms A,B] [--cache DIR] [--at DUR,...] [--json]
       mlerl bench rl-vs-prompting --merge FILE,FILE... [--at DUR,...] [--json]
built-in tables (--table NAME): hpc-job-class (default) and letter-recognition, recorded from real runs; synthetic, made up`

// runBench runs benchmarks that stand for a claim of the method:
// duration-ablation, the paper's naive-vs-duration-aware comparison
// (CONTRACT.md §3), and record-replay, which records the replay table it runs
// on from real executions (record.go).
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return exitStatus(stderr, usageErrorf("%s", benchUsage))
	}
	switch args[0] {
	case "duration-ablation":
		return exitStatus(stderr, benchDurationAblation(ctx, args[1:], stdout, stderr))
	case "record-replay":
		return exitStatus(stderr, benchRecordReplay(ctx, args[1:], stdout, stderr))
	case "mlebench":
		return exitStatus(stderr, benchMLEBench(ctx, args[1:], stdout, stderr))
	case "rl-vs-prompting":
		return exitStatus(stderr, benchRLVsPrompting(ctx, args[1:], stdout, stderr))
	}
	return exitStatus(stderr, usageErrorf("%s", benchUsage))
}

func benchDurationAblation(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	def := ablation.DefaultConfig()
	fs := flag.NewFlagSet("bench duration-ablation", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print one JSON document on stdout")
	seeds := fs.Int("seeds", def.Seeds, "seeds per arm (at least 3 to show the effect is not luck)")
	workers := fs.Int("workers", def.Workers, "simulated executor slots")
	budget := fs.Duration("budget", def.Budget, "training budget on the replay's virtual clock (synthetic table: "+ablation.SyntheticConfig().Budget.String()+" unless given)")
	batch := fs.Int("batch", def.Batch, "episodes per policy update (B)")
	tablePath := fs.String("table", replay.DefaultTable, "replay table: a built-in one by name ("+strings.Join(replay.BuiltinNames(), ", ")+
		"; "+replay.DefaultTable+" is recorded from real runs, synthetic is made up) or a JSONL file")
	staleness := fs.Int("max-staleness", def.MaxStaleness, "drop samples older than this many policy versions (negative: keep all)")
	updateCost := fs.Duration("update-cost", 0, "modelled learner time per update on the virtual clock")
	sampleCost := fs.Duration("sample-cost", 0, "modelled learner time per action written on the virtual clock")
	utility := fs.String("utility", def.Utility, "what advantages are computed from: reward (the paper's) or rank (train's default)")
	if err := fs.Parse(args); err != nil {
		return errUsage{err}
	}
	if fs.NArg() > 0 {
		return usageErrorf("bench duration-ablation: unexpected argument %q", fs.Arg(0))
	}
	shapingErr := rl.Config{Utility: *utility}.CheckShaping()
	switch {
	case *seeds < 1:
		return usageErrorf("--seeds %d: must be at least 1", *seeds)
	case *workers < 1:
		return usageErrorf("--workers %d: must be at least 1", *workers)
	case *budget <= 0:
		return usageErrorf("--budget %v: must be positive", *budget)
	case *batch < 1:
		return usageErrorf("--batch %d: must be at least 1", *batch)
	case shapingErr != nil:
		return errUsage{shapingErr}
	case *updateCost < 0 || *sampleCost < 0:
		return usageErrorf("--update-cost and --sample-cost must not be negative")
	}
	var table *replay.Table
	var err error
	if slices.Contains(replay.BuiltinNames(), *tablePath) {
		table, err = replay.Builtin(*tablePath)
	} else if table, err = replay.LoadTable(*tablePath); err != nil {
		err = errUsage{err}
	}
	if err != nil {
		return err
	}
	if *tablePath == "synthetic" {
		// Its strong plans take minutes: a longer budget unless one was given.
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["budget"] {
			*budget = ablation.SyntheticConfig().Budget
		}
	}
	cfg := def
	cfg.Task, cfg.TableName = "replay", *tablePath
	cfg.Table, cfg.Seeds, cfg.Workers, cfg.Budget, cfg.Batch, cfg.MaxStaleness = table, *seeds, *workers, *budget, *batch, *staleness
	cfg.UpdateCost, cfg.SampleCost, cfg.Utility = *updateCost, *sampleCost, *utility
	if t := table.Task(); t != "" {
		cfg.Task = t
	}
	start := time.Now()
	res, err := ablation.Ablate(ctx, cfg)
	if err != nil {
		return fmt.Errorf("bench duration-ablation: %w", err)
	}
	ablation.WriteTable(stderr, res)
	n, a := res.Naive, res.DurationAware
	fmt.Fprintf(stderr, "duration-aware vs naive: mean duration %.1f s vs %.1f s, mean score %.4f vs %.4f (%d seeds, %.1fs wall)\n",
		a.FinalMeanDurationS, n.FinalMeanDurationS, a.FinalMeanScore, n.FinalMeanScore, res.Seeds, time.Since(start).Seconds())
	if *asJSON {
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(res); err != nil {
			return fmt.Errorf("bench duration-ablation: %w", err)
		}
	}
	return nil
}
