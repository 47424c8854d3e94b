package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/policy/recipe"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/rl/compare"
)

// benchRLVsPrompting is `mlerl bench rl-vs-prompting`: every arm of package
// compare on the same tasks, budget, workers and seeds, on a virtual clock
// over a shared store of real executions (--cache keeps it for next time).
func benchRLVsPrompting(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench rl-vs-prompting", flag.ContinueOnError)
	fs.SetOutput(stderr)
	taskArg := fs.String("task", "", "suite name(s) or task folder(s), comma-separated: each is compared on its own")
	seeds := fs.Int("seeds", 5, "seeds per arm (1..N)")
	firstSeed := fs.Int("first-seed", 1, "the first seed: --first-seed 4 --seeds 2 runs seeds 4 and 5, to add to results of seeds 1-3 (--merge)")
	budget := fs.Duration("budget", 4*time.Minute, "virtual budget of each run")
	workers := fs.Int("workers", runtime.NumCPU(), "virtual executor slots of each run (as train --workers)")
	batch := fs.Int("batch", 8, "B: one update on each B completed episodes (as train --batch)")
	armsArg := fs.String("arms", "", "arms to run, comma-separated (default: rl-duration-aware, rl-naive, no-learn, random; also no-learn-flat, the prompting baseline given the RL arms' flat-family walks, with --flat-family-after)")
	cacheDir := fs.String("cache", "", "folder keeping real executions for later comparisons and train --cache (default: memory only)")
	slots := fs.Int("slots", runtime.NumCPU(), "programs really run at once when runs need new ones, shared by the bench processes side by side on one --cache (an arm each: a slot one frees goes to the others)")
	parallel := fs.Int("parallel", 1, "runs going at once (a run on the virtual clock mostly waits for one real program; --slots still bounds real programs)")
	runsDir := fs.String("runs", "", "folder to keep each run's episodes.jsonl and metrics.jsonl in (TASK/ARM-seedN)")
	asJSON := fs.Bool("json", false, "print the result as one JSON document on stdout")
	utility := fs.String("utility", rl.DefaultConfig().Utility, "RL arms: what advantages are computed from, rank or reward (the paper's)")
	credit := fs.String("improve-credit", rl.DefaultConfig().ImproveCredit, "RL arms: what an improve episode is credited with, absolute (its own utility), parent (its utility minus its parent's) or gain (1 if it beats its parent, 0 if not)")
	timeCharge := fs.Float64("time-charge", rl.DefaultConfig().TimeCharge, "RL arms: λ, lower each episode's utility by λ·log2(its duration / the task's median) (0: none)")
	slowerOnly := fs.Bool("time-charge-slower-only", false, "RL arms: charge only programs slower than the task's median; a fast one gains nothing for its speed")
	elite := fs.Float64("elite", rl.DefaultConfig().Elite, "RL arms: q in [0,1), only programs beating the share q of the task's results so far earn credit above the worst valid one (0: plain ranks)")
	decisionCredit := fs.Bool("decision-credit", rl.DefaultConfig().DecisionCredit, "RL arms: credit per decision, each hyperparameter judged against the task's programs of its own model family")
	editFloor := fs.Float64("edit-floor", 0, "RL arms: the share in [0,1] of each improve edit's choice of what to change (which part; the model family) that stays the prior's, so learning cannot stop its exploration (0: none)")
	scratchPrior := fs.Float64("scratch-prior", DefaultScratchPrior, "RL arms: the share in [0,1] of scratch programs drawn wholly from the prior, the prompting baseline's walk, so a model family the learnt policy stopped drawing stays reachable (=0: none, as before 2026-12-04)")
	initPolicy := fs.String("init-policy", "", "RL arms: start from what the run in this folder learnt (train --init-policy); no-learn and random keep the untrained prior")
	buffer := fs.Int("buffer", rl.DefaultConfig().BufferSize, "RL arms: improve parents kept per task (no-learn keeps 1, the best)")
	lines := fs.Int("lines", 0, "every arm: also keep the best program of each model family, and give half the improve prompts to the best of one of the N best families other than the best program's (0: off)")
	linesAfter := fs.Duration("lines-after", 0, "every arm, with --lines: give a task's improve prompts to other families only once its best has stood still this long on the run's clock, say 5m (0: from the start)")
	priorOnRepeat := fs.Bool("prior-on-repeat", true, "RL arms: when a walk's 64 redraws all repeat plans already written for the task, draw it again with each decision half and then wholly the prior's, and answer an improve prompt whose parent has no new edit from scratch, instead of repeating one (=false: repeat, as before 2026-12-03)")
	screenK := fs.Int("screen", 0, "RL arms: draw K new candidate programs per prompt and run the one a model of the run's results expects to improve most on the best (0: off)")
	screenPerSecond := fs.Bool("screen-per-second", false, "RL arms, with --screen: run the candidate of most expected improvement per second a model of the run's durations predicts")
	screenAfter := fs.Int("screen-after", 0, "RL arms, with --screen: screen a task's walks only once N new programs in a row have not beaten its best (0: from the start)")
	flatAfter := fs.Duration("flat-family-after", 0, "RL arms: once a task's best has stood still this long on the run's clock, say 5m, the scratch programs drawn from the prior (--scratch-prior) draw their model family with no preference among the families the table allows and the cost model expects to finish (0: off)")
	widen := fs.Int("widen", 0, "RL arms: after N episodes of a task without a new best, mix the prior into its improve walks, all of it after 3N (0: off)")
	mix := fs.String("mix", rl.MixHalf, "every arm: the share of improve prompts, half (SPEC.md §3) or adaptive (more edits, up to 90%, when lately edits rather than scratch programs set the new bests)")
	grid := fs.String("grid", recipe.GridStandard, "every arm's grid of hyperparameter values: standard or wide (more values, between and beyond)")
	merge := fs.String("merge", "", "print the table of earlier --json outputs (files, comma-separated: arms run side by side, or seeds run later; FILE@ARM[+ARM] takes only those arms of FILE) as one comparison, instead of running")
	atArg := fs.String("at", "", "virtual times within the budget, comma-separated, at which the table also gives each arm's best so far, beside the quarters (say 4m in a 20m run, to set beside 4-minute runs); with --merge too")
	var ef envFlags
	ef.register(fs)
	if err := fs.Parse(args); err != nil {
		return errUsage{err}
	}
	at, err := parseAt(*atArg)
	if err != nil {
		return usageErrorf("bench rl-vs-prompting: --at: %v", err)
	}
	if err := recipe.CheckGrid(*grid); err != nil {
		return usageErrorf("bench rl-vs-prompting: --grid: %v", err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *merge != "" {
		for name := range set {
			if name != "merge" && name != "json" && name != "at" {
				return usageErrorf("bench rl-vs-prompting: --%s does not apply to --merge, which only reads earlier results", name)
			}
		}
		if fs.NArg() > 0 {
			return usageErrorf("bench rl-vs-prompting: unexpected argument %q", fs.Arg(0))
		}
		return mergeResults(splitList(*merge), at, *asJSON, stdout)
	}
	if err := compare.CheckAt(at, *budget); err != nil {
		return usageErrorf("bench rl-vs-prompting: --at: %v", err)
	}
	adaptive, err := rl.ParseMix(*mix)
	if err != nil {
		return usageErrorf("bench rl-vs-prompting: --mix: %v", err)
	}
	arms := splitList(*armsArg)
	for _, a := range arms {
		if !slices.Contains(compare.Arms(), a) {
			return usageErrorf("--arms: unknown arm %q (want %v)", a, compare.Arms())
		}
	}
	// Each checker runs once; its error is both the test and the message.
	shapingErr := rl.Config{Utility: *utility, ImproveCredit: *credit, TimeCharge: *timeCharge, Elite: *elite, ChargeSlowerOnly: *slowerOnly}.CheckShaping()
	widenErr := rl.CheckWidenAfter(*widen)
	screenErr := recipe.CheckScreen(*screenK)
	perSecondErr := recipe.CheckScreenPerSecond(*screenK, *screenPerSecond)
	screenAfterErr := recipe.CheckScreenAfter(*screenK, *screenAfter)
	editFloorErr := recipe.CheckEditFloor(*editFloor)
	scratchPriorErr := recipe.CheckScratchPrior(*scratchPrior)
	switch {
	case fs.NArg() > 0:
		return usageErrorf("bench rl-vs-prompting: unexpected argument %q", fs.Arg(0))
	case len(splitList(*taskArg)) == 0:
		return usageErrorf("bench rl-vs-prompting: --task is required")
	case *lines < 0:
		return usageErrorf("bench rl-vs-prompting: --lines %d: must be 0 (off) or more", *lines)
	case rl.CheckLinesAfter(*linesAfter, *lines) != nil:
		return usageErrorf("bench rl-vs-prompting: --lines-after: %v", rl.CheckLinesAfter(*linesAfter, *lines))
	case *seeds < 1 || *firstSeed < 1 || *workers < 1 || *batch < 1 || *slots < 1 || *parallel < 1 || *buffer < 1 || *budget <= 0:
		return usageErrorf("bench rl-vs-prompting: --seeds, --first-seed, --workers, --batch, --slots, --parallel, --buffer and --budget must be positive")
	case shapingErr != nil:
		return errUsage{shapingErr}
	case screenErr != nil:
		return usageErrorf("bench rl-vs-prompting: --screen: %v", screenErr)
	case perSecondErr != nil:
		return usageErrorf("bench rl-vs-prompting: %v", perSecondErr)
	case screenAfterErr != nil:
		return usageErrorf("bench rl-vs-prompting: %v", screenAfterErr)
	case widenErr != nil:
		return usageErrorf("bench rl-vs-prompting: --widen: %v", widenErr)
	case editFloorErr != nil:
		return usageErrorf("bench rl-vs-prompting: --edit-floor: %v", editFloorErr)
	case scratchPriorErr != nil:
		return usageErrorf("bench rl-vs-prompting: --scratch-prior: %v", scratchPriorErr)
	case rl.CheckFlatFamilyAfter(*flatAfter) != nil:
		return usageErrorf("bench rl-vs-prompting: --flat-family-after: %v", rl.CheckFlatFamilyAfter(*flatAfter))
	case *flatAfter > 0 && *scratchPrior == 0:
		return usageErrorf("bench rl-vs-prompting: --flat-family-after changes the RL arms' scratch-prior walks: it needs --scratch-prior above 0")
	case slices.Contains(arms, compare.NoLearnFlat) && *flatAfter == 0:
		return usageErrorf("bench rl-vs-prompting: --arms %s needs --flat-family-after: the arm draws flat once a best has stood that long", compare.NoLearnFlat)
	}
	if !set["timeout"] {
		ef.timeout = programTimeout(*budget, ef.timeout) // as train sets it
	}
	_, prepared, err := loadTasks(splitList(*taskArg))
	if err != nil {
		return err
	}
	dirs := map[string]string{}
	for _, p := range prepared {
		dirs[p.Task.Name] = p.Task.PublicDir()
	}
	runner, err := ef.runner(ctx)
	if err != nil {
		return err
	}
	// Settings as a real train with --workers would give its programs, so
	// the store's executions serve train --cache too.
	settings := runner.Max
	settings.Threads = episode.ThreadsPerProgram(runtime.NumCPU(), *workers)
	store, err := episode.NewStore(*cacheDir)
	if err != nil {
		return errUsage{fmt.Errorf("--cache: %w", err)}
	}
	if len(arms) == 0 {
		arms = compare.DefaultArms()
	}
	fmt.Fprintf(stderr, "mlerl: comparing %s on %s, %s, %v virtual budget, %d workers, program limit %v; isolation %s\n",
		counted(len(arms), "arm"), counted(len(prepared), "task"), seedRange(*firstSeed, *seeds), *budget, *workers, ef.timeout, runner.Sandbox.Level())
	res, err := compare.Compare(ctx, compare.Config{
		Tasks: prepared, Arms: arms, Seeds: *seeds, FirstSeed: *firstSeed, Budget: *budget, Workers: *workers, Batch: *batch,
		Settings: settings, Run: gated(runner, dirs, store, *slots), Store: store, Progress: stderr,
		Learning: compare.Learning{Utility: *utility, ImproveCredit: *credit, TimeCharge: *timeCharge, ChargeSlowerOnly: *slowerOnly, Elite: *elite,
			DecisionCredit: *decisionCredit, EditFloor: *editFloor, ScratchPrior: *scratchPrior, WidenAfter: *widen, FlatFamilyAfter: *flatAfter, PriorOnRepeat: *priorOnRepeat, Screen: *screenK,
			ScreenPerSecond: *screenPerSecond, ScreenAfter: *screenAfter, InitPolicy: *initPolicy, Buffer: *buffer},
		RunsDir: *runsDir, Parallel: *parallel, At: at,
		Grid: *grid, Lines: *lines, LinesAfter: *linesAfter, AdaptiveMix: adaptive,
	})
	if res != nil {
		res.Binary = revision()
	}
	return writeComparison(res, err, *asJSON, stdout)
}

// writeComparison writes what Compare returned: the table, or JSON with
// asJSON. The runs that finished are written even when others did not (a
// failure, Ctrl-C an hour in): the result says it is incomplete, and the
// error, the exit status's, is still returned.
func writeComparison(res *compare.Result, err error, asJSON bool, stdout io.Writer) error {
	if res == nil || err != nil && !anyRun(res) {
		return err
	}
	if asJSON {
		if jerr := json.NewEncoder(stdout).Encode(res); jerr != nil {
			return errors.Join(err, jerr)
		}
	} else {
		res.Print(stdout)
	}
	if err != nil {
		return fmt.Errorf("%w (the runs that finished, and those stopped part way, are written to stdout)", err)
	}
	return nil
}

// anyRun says whether res holds at least one run, finished or stopped part
// way.
func anyRun(res *compare.Result) bool {
	for _, a := range res.Arms {
		if len(a.Runs)+len(a.Stopped) > 0 {
			return true
		}
	}
	return false
}

// parseAt reads --at: durations, comma-separated ("" is none).
func parseAt(s string) ([]time.Duration, error) {
	var at []time.Duration
	for _, p := range splitList(s) {
		d, err := time.ParseDuration(p)
		if err != nil {
			return nil, err
		}
		at = append(at, d)
	}
	return at, nil
}

// mergeResults reads the --json outputs in paths and writes them as one
// comparison: a table, or one JSON document with asJSON, its curve with the
// checkpoints at besides the quarters. A path may end in @ARM[+ARM] to take
// only those arms of its file: the no-learn arm of a file whose RL arm ran
// with other settings, to compare another RL arm with it.
func mergeResults(paths []string, at []time.Duration, asJSON bool, stdout io.Writer) error {
	var parts []*compare.Result
	for i, p := range paths {
		var keep []string
		if at := strings.LastIndex(p, "@"); at >= 0 {
			if _, err := os.Stat(p); err != nil { // not a file named with an @
				p, keep = p[:at], strings.Split(p[at+1:], "+")
				paths[i] = p
			}
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("--merge: %w", err)
		}
		var r compare.Result
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("--merge: %s is not the --json output of bench rl-vs-prompting: %w", p, err)
		}
		if len(r.Arms) == 0 || r.Budget <= 0 {
			return fmt.Errorf("--merge: %s is not the --json output of bench rl-vs-prompting: no arms or no budget in it", p)
		}
		if keep != nil {
			if err := keepArms(&r, keep); err != nil {
				return fmt.Errorf("--merge: %s: %w", p, err)
			}
		}
		parts = append(parts, &r)
	}
	res, err := compare.Merge(parts, paths)
	if err != nil {
		return err
	}
	if err := res.CheckpointsAt(at); err != nil {
		return fmt.Errorf("--merge: --at: %w", err)
	}
	return writeComparison(res, nil, asJSON, stdout)
}

// keepArms drops every arm of r but those named in keep, which must all be
// in r: a misspelt arm is an error, not a part that adds nothing. (Merge
// counts the programs really run from the runs it gets.)
func keepArms(r *compare.Result, keep []string) error {
	var kept []compare.Arm
	var have []string
	for _, a := range r.Arms {
		if !slices.Contains(have, a.Arm) {
			have = append(have, a.Arm)
		}
		if slices.Contains(keep, a.Arm) {
			kept = append(kept, a)
		}
	}
	for _, k := range keep {
		if !slices.Contains(have, k) {
			return fmt.Errorf("no arm %q in it (it has %s)", k, strings.Join(have, ", "))
		}
	}
	r.Arms = kept
	return nil
}

// gated runs jobs with runner on the tasks' folders, holding one of the
// store's slots while each runs: at most slots at once, between all the
// bench processes sharing the store's folder.
func gated(runner *episode.Runner, dirs map[string]string, store *episode.Store, slots int) func(context.Context, episode.Job) (episode.Execution, error) {
	return func(ctx context.Context, job episode.Job) (episode.Execution, error) {
		release, err := store.Slot(ctx, slots)
		if err != nil {
			return episode.Execution{}, err
		}
		defer release()
		return runner.Execute(ctx, dirs[job.Task], job)
	}
}

// counted writes n with its noun, singular for one ("1 arm", "4 arms").
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// seedRange names the seeds first..first+n-1: "seed 4" or "seeds 1-5".
func seedRange(first, n int) string {
	if n == 1 {
		return fmt.Sprintf("seed %d", first)
	}
	return fmt.Sprintf("seeds %d-%d", first, first+n-1)
}
