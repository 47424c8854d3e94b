// Package compare is `mlerl bench rl-vs-prompting`: the honest comparison of
// the learner against the prompting baseline. Arms — RL with duration-aware
// updates, RL with naive updates, the same loop with no learning (--no-learn,
// the AIDE-like prompting baseline), and uniform random search over the
// grammar — run on the same tasks with the same budget, workers and seeds.
//
// Runs are on a virtual clock over a shared evaluation store
// (episode.Virtual): each distinct program really runs once, in the real
// sandbox with the real grader, and every run that writes it again gets its
// real outcome and measured duration. So arms and seeds cost little beyond
// the distinct programs they write, the comparison does not depend on how
// busy the machine was, and a store kept in a folder makes the next
// comparison cheaper still.
package compare

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/grade"
	"github.com/mlerl/mlerl/policy/recipe"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/rl/runfolder"
	"github.com/mlerl/mlerl/task"
)

// The arms, by name.
const (
	DurationAware = "rl-duration-aware"
	Naive         = "rl-naive"
	NoLearn       = "no-learn"
	// NoLearnFlat is the prompting baseline given the RL arms' flat-family
	// walks (Learning.FlatFamilyAfter; recipe.Policy.SetFlatFamilyShare at
	// the RL arms' scratch-prior share): beside no-learn and an RL arm it
	// tells what those walks gain as search from what learning adds.
	NoLearnFlat = "no-learn-flat"
	Random      = "random"
)

// Arms lists every arm in table order.
func Arms() []string { return []string{DurationAware, Naive, NoLearn, NoLearnFlat, Random} }

// DefaultArms are the arms a comparison runs when none are named: every
// arm but no-learn-flat, which needs Learning.FlatFamilyAfter.
func DefaultArms() []string { return []string{DurationAware, Naive, NoLearn, Random} }

// usesLearning says whether an arm's runs read Config.Learning: the RL
// arms, and no-learn-flat for when and how often its walks go flat.
func usesLearning(arm string) bool { return arm == DurationAware || arm == Naive || arm == NoLearnFlat }

// Config says what to compare.
type Config struct {
	Tasks []*episode.Prepared
	Arms  []string // default: all
	Seeds int      // seeds FirstSeed..FirstSeed+Seeds-1
	// FirstSeed is the first seed (0: 1). Seeds added in a later session,
	// without the store of the first ones, start after them (say 4 after
	// 1-3), and --merge joins the parts into one table.
	FirstSeed int
	Budget    time.Duration
	Workers   int // virtual workers
	Batch     int
	// Settings are every job's (time limit, memory, instrumentation, threads).
	Settings episode.Settings
	// Run executes one job for real; Store keeps executions for every run.
	Run   func(ctx context.Context, job episode.Job) (episode.Execution, error)
	Store *episode.Store
	// Learning is how the RL arms learn; the other arms' learners keep
	// rl.DefaultConfig's settings (their policies do not learn).
	Learning
	// Grid is the recipe arms' grid of hyperparameter values (every arm's
	// alike: it is the space searched, not a learning setting); empty: the
	// standard grid.
	Grid string
	// Lines is every arm's rl.Config.Lines (a search setting, like Grid);
	// 0: off.
	Lines int
	// LinesAfter is every arm's rl.Config.LinesAfter: with Lines, the share
	// only for a task whose best has stood still that long.
	LinesAfter time.Duration
	// AdaptiveMix is every arm's rl.Config.AdaptiveMix (a search setting,
	// like Lines).
	AdaptiveMix bool
	// Parallel is how many runs go at once (default 1).
	Parallel int
	// Progress receives one line per finished run and, every ProgressEvery
	// (default a minute), one line per run still going; nil discards.
	Progress      io.Writer
	ProgressEvery time.Duration
	// RunsDir, when set, keeps each run's episodes.jsonl and metrics.jsonl
	// (as train writes them) in RunsDir/TASK/ARM-seedN, to see where an
	// arm's best came from and how its policy moved.
	RunsDir string
	// At are virtual times within the budget at which the table's curve
	// gives each arm's best so far, besides the quarters (see CheckAt).
	At []time.Duration
}

// Run is one arm on one task with one seed.
type Run struct {
	Seed     uint64   `json:"seed"`
	Best     *float64 `json:"best_score"`
	Episodes int      `json:"episodes"`
	Distinct int      `json:"distinct_programs"`
	Failures int      `json:"failures"`
	Updates  int      `json:"updates"`
	// ImproveAsScratch are the improve prompts the policy answered with a
	// program from scratch (its parent had no new edit left, prior on
	// repeat): written as scratch episodes, so counted only here.
	ImproveAsScratch int `json:"improve_as_scratch,omitempty"`
	// LateScratch is the median score of the valid programs written from
	// scratch in the last quarter of the budget: what the policy itself
	// writes by then, apart from the search's luck (nil when none).
	LateScratch *float64 `json:"late_scratch_median"`
	Executed    int      `json:"executed"` // really run by this run (not in the store before)
	FromStore   int      `json:"from_store"`
	RealS       float64  `json:"real_s"` // wall-clock seconds the run took here
	// Steps are the changes of the run's best, in order: its best so far at
	// any point of the budget. The learner uses the budget only to stop, so
	// one long run also gives every shorter budget's comparison, and when
	// each arm got where it ended. Absent in results written before.
	Steps []Step `json:"best_steps,omitempty"`
	// First are the programs the run started at virtual time zero, one per
	// worker, with their measured durations. Every arm that starts from the
	// untrained prior draws the same ones for a seed, so across results run
	// apart they measure the machine: Merge compares them (speedCautions).
	// Absent in results written before.
	First []Timed `json:"first_programs,omitempty"`
	// StoppedS, when above 0, is the virtual second the run had reached
	// when the comparison was stopped (Ctrl-C, SIGTERM) before its budget:
	// its numbers are as of then, and Arm keeps it apart from the runs
	// that finished (Arm.Stopped), out of every mean.
	StoppedS float64 `json:"stopped_at_s,omitempty"`
}

// Timed is a program (the hash of its plan) and how long it ran.
type Timed struct {
	Plan      string  `json:"plan_sha256"`
	DurationS float64 `json:"duration_s"`
}

// Step is a change of a run's best: from virtual second T on, its best
// score is Best.
type Step struct {
	T    float64 `json:"t_s"`
	Best float64 `json:"best"`
}

// bestAt is the best of steps by virtual second t (false: none yet).
func bestAt(steps []Step, t float64) (float64, bool) {
	best, ok := 0.0, false
	for _, s := range steps {
		if s.T > t {
			break
		}
		best, ok = s.Best, true
	}
	return best, ok
}

// reached is the virtual second at which steps first got to target or
// better (false: never).
func reached(steps []Step, target float64, lowerIsBetter bool) (float64, bool) {
	for _, s := range steps {
		if s.Best == target || (s.Best < target) == lowerIsBetter {
			return s.T, true
		}
	}
	return 0, false
}

// stepsOf is the run's best so far as it changed, from its episodes: the
// learner's rule (the valid episode of highest reward, the first to
// complete among equals) in the order they completed.
func stepsOf(recs []rl.EpisodeRecord) []Step {
	var done []rl.EpisodeRecord
	for _, e := range recs {
		if e.Valid && !e.Cancelled && e.Score != nil {
			done = append(done, e)
		}
	}
	sort.SliceStable(done, func(i, j int) bool { return done[i].DoneS < done[j].DoneS })
	var steps []Step
	var top float64
	for i, e := range done {
		if i == 0 || e.Reward > top {
			top = e.Reward
			steps = append(steps, Step{T: e.DoneS, Best: *e.Score})
		}
	}
	return steps
}

// Stat is a mean and its standard error over seeds.
type Stat struct {
	Mean float64 `json:"mean"`
	SE   float64 `json:"se"`
	N    int     `json:"n"`
}

// Arm is one arm's runs on one task and their summary.
type Arm struct {
	Task          string `json:"task"`
	Arm           string `json:"arm"`
	LowerIsBetter bool   `json:"lower_is_better"`
	Runs          []Run  `json:"runs"`
	Best          Stat   `json:"best_score"`
	Episodes      Stat   `json:"episodes"`
	Distinct      Stat   `json:"distinct_programs"`
	FailureRate   Stat   `json:"failure_rate"`
	LateScratch   Stat   `json:"late_scratch_median"`
	Updates       Stat   `json:"updates"`
	// BestAt is the best so far at each quarter of the budget (and at the
	// times asked for besides: Config.At, Result.CheckpointsAt), in order,
	// over the runs that recorded their steps and had a valid program by
	// then.
	BestAt []Checkpoint `json:"best_at,omitempty"`
	// Stopped are the runs the comparison was stopped in the middle of,
	// as far as they got: not in any summary above (their budget was
	// not spent), kept so an hour of a run is not lost with Ctrl-C. Their
	// episodes are in the runs folder too, and the same seeds run again on
	// the same store replay what they ran.
	Stopped []Run `json:"stopped,omitempty"`
}

// Checkpoint is an arm's best so far at virtual second T.
type Checkpoint struct {
	T    float64 `json:"t_s"`
	Best Stat    `json:"best"`
}

// Result is the whole comparison.
type Result struct {
	Mode    string        `json:"mode"`
	Budget  time.Duration `json:"budget_ns"`
	Workers int           `json:"workers"`
	Batch   int           `json:"batch"`
	Seeds   int           `json:"seeds"`
	// Learning is the RL arms' settings, defaults filled in (a results
	// file from before a setting existed has it off).
	Learning
	// Grid is every arm's grid of hyperparameter values; absent: the
	// standard one (results from before it was a choice).
	Grid string `json:"grid,omitempty"`
	// Lines is every arm's rl.Config.Lines; absent: 0 (off), as results
	// from before it.
	Lines int `json:"lines,omitempty"`
	// LinesAfter is every arm's rl.Config.LinesAfter; absent: 0 (with
	// lines, from the start), as results from before it.
	LinesAfter time.Duration `json:"lines_after_ns,omitempty"`
	// Mix is every arm's share of improve prompts, rl.MixAdaptive or
	// absent: the fixed half, as results from before it.
	Mix string `json:"mix,omitempty"`
	// Settings are every program's limits (time, memory, instrumentation,
	// threads): part of what a run's outcomes depend on. Absent (zero) in
	// results written before they were recorded.
	Settings episode.Settings `json:"settings"`
	// Binary is the commit of the mlerl that ran it (mlerl version; merged
	// results list each differing one).
	Binary string `json:"binary,omitempty"`
	// Incomplete says why some runs are missing (a run failed, or the
	// comparison was stopped); the runs that finished are all there.
	Incomplete string `json:"incomplete,omitempty"`
	// Cautions say why numbers merged from parts run apart may not compare
	// (Merge: the same programs ran at different speeds).
	Cautions []string `json:"cautions,omitempty"`
	Arms     []Arm    `json:"arms"`
	Executed int      `json:"executed"` // programs really run, over all runs
}

// Compare runs every arm on every task with every seed.
func Compare(ctx context.Context, cfg Config) (*Result, error) {
	if err := CheckAt(cfg.At, cfg.Budget); err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	if cfg.Seeds < 1 || cfg.FirstSeed < 0 || cfg.Workers < 1 || cfg.Batch < 1 || cfg.Budget <= 0 || len(cfg.Tasks) == 0 {
		return nil, fmt.Errorf("compare: need tasks, seeds, workers, batch and a budget (got %d tasks, %d seeds from %d, %d workers, batch %d, %v)",
			len(cfg.Tasks), cfg.Seeds, cfg.FirstSeed, cfg.Workers, cfg.Batch, cfg.Budget)
	}
	arms := cfg.Arms
	if len(arms) == 0 {
		arms = DefaultArms()
	}
	if slices.Contains(arms, NoLearnFlat) && cfg.FlatFamilyAfter == 0 {
		return nil, fmt.Errorf("compare: arm %s draws flat once a best has stood the flat-family time, which is not set (want a flat family after above 0)", NoLearnFlat)
	}
	res := &Result{Mode: "virtual clock over a shared evaluation store: each distinct program ran once for real; runs replay its measured outcome and duration",
		Budget: cfg.Budget, Workers: cfg.Workers, Batch: cfg.Batch, Seeds: cfg.Seeds, Settings: cfg.Settings}
	res.Learning = cfg.Learning.resolved()
	if err := cfg.Learning.check(); err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	if err := recipe.CheckGrid(cmp.Or(cfg.Grid, recipe.GridStandard)); err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	if cfg.Grid != recipe.GridStandard {
		res.Grid = cfg.Grid // recorded only when not the standard grid, as results from before it
	}
	if cfg.Lines < 0 {
		return nil, fmt.Errorf("compare: lines %d: must be 0 (off) or more", cfg.Lines)
	}
	if err := rl.CheckLinesAfter(cfg.LinesAfter, cfg.Lines); err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	res.Lines, res.LinesAfter = cfg.Lines, cfg.LinesAfter
	if cfg.AdaptiveMix {
		res.Mix = rl.MixAdaptive
	}
	if cfg.InitPolicy != "" { // a folder that does not load fails now, not after the first arms ran
		probe, err := recipe.NewPolicy([]*task.Task{cfg.Tasks[0].Task}, 1)
		if err == nil {
			err = runfolder.LoadPolicy(cfg.InitPolicy, probe)
		}
		if err != nil {
			return nil, fmt.Errorf("compare: initial policy: %w", err)
		}
	}
	// Every (task, arm, seed) run, Parallel at a time: a run on the virtual
	// clock mostly waits for one real program at a time, so runs side by
	// side keep the machine's cores busy. Runs go seed by seed, the arms of
	// one seed next to each other, so with Parallel at least the number of
	// arms the arms being compared run at the same time on the same machine
	// load. The store is shared; a program two runs write at once may run
	// twice, and the store keeps one outcome.
	type slot struct {
		arm     *Arm
		seed    int
		run     Run
		err     error
		skipped bool // not started: an earlier run failed, or ctx ended
		watch   *watched
	}
	var armList []*Arm
	var all []*slot
	first := max(1, cfg.FirstSeed)
	for _, p := range cfg.Tasks {
		var these []*Arm
		for _, arm := range arms {
			a := &Arm{Task: p.Task.Name, Arm: arm, LowerIsBetter: p.Task.LowerIsBetter()}
			these = append(these, a)
			armList = append(armList, a)
		}
		for s := first; s < first+cfg.Seeds; s++ {
			for _, a := range these {
				all = append(all, &slot{arm: a, seed: s})
			}
		}
	}
	prepared := map[string]*episode.Prepared{}
	for _, p := range cfg.Tasks {
		prepared[p.Task.Name] = p
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	failed := false                 // after a failed run no new one starts: it would likely fail the same way
	running := map[*slot]struct{}{} // for the progress lines
	if cfg.Progress != nil {
		// Every write to Progress is under mu, and the ticker has stopped
		// when Compare returns: the caller's writer is never used after.
		stop, stopped := make(chan struct{}), make(chan struct{})
		defer func() { close(stop); <-stopped }()
		go func() {
			defer close(stopped)
			t := time.NewTicker(cmp.Or(cfg.ProgressEvery, time.Minute))
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
				}
				mu.Lock()
				var going []*slot
				for sl := range running {
					going = append(going, sl)
				}
				sort.Slice(going, func(i, j int) bool {
					a, b := going[i], going[j]
					return a.arm.Task+a.arm.Arm < b.arm.Task+b.arm.Arm || a.arm.Task+a.arm.Arm == b.arm.Task+b.arm.Arm && a.seed < b.seed
				})
				for _, sl := range going {
					fmt.Fprintf(cfg.Progress, "  … %s %s seed %d: %s\n", sl.arm.Task, sl.arm.Arm, sl.seed, sl.watch.String(cfg.Budget))
				}
				mu.Unlock()
			}
		}()
	}
	gate := make(chan struct{}, max(1, cfg.Parallel))
	for _, sl := range all {
		gate <- struct{}{}
		mu.Lock()
		stop := failed
		mu.Unlock()
		if stop || ctx.Err() != nil {
			<-gate
			sl.skipped = true
			continue
		}
		wg.Add(1)
		sl.watch = &watched{Memory: &rl.Memory{}}
		mu.Lock()
		running[sl] = struct{}{}
		mu.Unlock()
		go func() {
			defer func() { <-gate; wg.Done() }()
			sl.run, sl.err = runOne(ctx, cfg, prepared[sl.arm.Task], sl.arm.Arm, uint64(sl.seed), sl.watch)
			mu.Lock()
			delete(running, sl)
			mu.Unlock()
			if sl.err != nil {
				mu.Lock()
				failed = true
				mu.Unlock()
				return
			}
			if cfg.Progress == nil {
				return
			}
			r := sl.run
			best := "none"
			if r.Best != nil {
				best = fmt.Sprintf("%.4f", *r.Best)
			}
			mu.Lock()
			fmt.Fprintf(cfg.Progress, "%s %s seed %d: best %s, %d episodes, %d distinct, %d failed; %d run now (%.0fs)\n",
				sl.arm.Task, sl.arm.Arm, sl.seed, best, r.Episodes, r.Distinct, r.Failures, r.Executed, r.RealS)
			mu.Unlock()
		}()
	}
	wg.Wait()
	var errs []error
	finished, stopped := 0, 0
	for _, sl := range all {
		if sl.err != nil && sl.run.StoppedS > 0 {
			res.Executed += sl.run.Executed
			sl.arm.Stopped = append(sl.arm.Stopped, sl.run)
			stopped++
		}
		switch {
		case sl.skipped:
			continue
		case sl.err != nil:
			errs = append(errs, fmt.Errorf("compare: %s on %s, seed %d: %w", sl.arm.Arm, sl.arm.Task, sl.seed, sl.err))
			continue
		}
		res.Executed += sl.run.Executed
		sl.arm.Runs = append(sl.arm.Runs, sl.run)
		finished++
	}
	for _, a := range armList {
		a.summarise(cfg.Budget, cfg.At...)
		res.Arms = append(res.Arms, *a)
	}
	if len(errs) == 0 && ctx.Err() != nil {
		errs = append(errs, fmt.Errorf("compare: %w", ctx.Err()))
	}
	if len(errs) > 0 {
		err := errors.Join(errs...)
		res.Incomplete = fmt.Sprintf("%d of %d runs finished", finished, len(all))
		if stopped > 0 {
			res.Incomplete += fmt.Sprintf(", %d stopped part way (kept apart, out of the table)", stopped)
		}
		res.Incomplete += fmt.Sprintf(": %v", err)
		return res, err
	}
	return res, nil
}

// clocked is the graded virtual executor as the learner's Env: the learner
// sees Virtual's virtual clock through rl.LearnerClock.
type clocked struct {
	*episode.Graded
	v *episode.Virtual
}

func (c clocked) Sampled(n int) { c.v.Sampled(n) }
func (c clocked) Updated(n int) { c.v.Updated(n) }

// watched is a run's sink: everything in memory, and the last update's
// metrics for the progress lines, read from another goroutine.
type watched struct {
	*rl.Memory
	mu   sync.Mutex
	last *rl.Metrics
	// paces are (real, virtual) times of recent updates, for the time left;
	// now is the real clock (time.Now when nil); executed counts the
	// programs the run has really run so far (nil: none).
	paces    []pace
	now      func() time.Time
	executed func() int
}

type pace struct {
	real     time.Time
	virt     float64 // virtual seconds
	executed int     // programs really run by then
}

// paceWindow is how far back the time left is judged from. The whole run
// would not do: real programs run slower when other runs share the
// machine. Within it, only the stretches in which the run really ran a
// program count: a run's start replays the store at no cost, and a replay
// of ten virtual minutes in two real ones says nothing of the rest.
const paceWindow = 10 * time.Minute

func (w *watched) clock() time.Time {
	if w.now != nil {
		return w.now()
	}
	return time.Now()
}

func (w *watched) Metrics(x rl.Metrics) error {
	w.mu.Lock()
	w.last = &x
	now := w.clock()
	ran := 0
	if w.executed != nil {
		ran = w.executed()
	}
	w.paces = append(w.paces, pace{now, x.TimeS, ran})
	for len(w.paces) > 2 && now.Sub(w.paces[1].real) > paceWindow {
		w.paces = w.paces[1:] // keep one sample at or beyond the window
	}
	w.mu.Unlock()
	return w.Memory.Metrics(x)
}

// String says how far the run is: virtual time, episodes, best so far, and
// the real time left at the recent pace.
func (w *watched) String(budget time.Duration) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last == nil {
		return fmt.Sprintf("before its first update (of %v virtual)", budget)
	}
	best := "none"
	if w.last.BestScore != nil {
		best = fmt.Sprintf("%.4f", *w.last.BestScore)
	}
	line := fmt.Sprintf("%s of %v virtual, %d episodes, best %s", vtime(w.last.TimeS), budget, w.last.Episodes, best)
	if left, ok := w.left(budget); ok {
		line += fmt.Sprintf("; about %v left", left)
	}
	return line
}

// left estimates the real time until the run's virtual budget is spent,
// from the real time per virtual second of the last paceWindow of updates
// in which programs really ran (false while there is too little to judge
// from, a minute of them).
func (w *watched) left(budget time.Duration) (time.Duration, bool) {
	if len(w.paces) < 2 {
		return 0, false
	}
	var dv float64
	var dr time.Duration
	for i := 1; i < len(w.paces); i++ {
		if p, q := w.paces[i-1], w.paces[i]; q.executed > p.executed {
			dv, dr = dv+q.virt-p.virt, dr+q.real.Sub(p.real)
		}
	}
	if dv <= 0 || dr < time.Minute {
		return 0, false
	}
	last := w.paces[len(w.paces)-1]
	// Projected from the last update, less the real time spent since it.
	rest := budget.Seconds() - last.virt
	left := time.Duration(rest*float64(dr)/dv) - w.clock().Sub(last.real)
	return max(left, 0).Round(time.Minute), true
}

// learnerConfig is one run's learner settings: every arm's from cfg, and
// the RL arms' settings of how results are credited; the other arms'
// stay rl.DefaultConfig's (their policies do not learn, so they are unused,
// and the prompting baseline's buffer is set by its arm).
func learnerConfig(cfg Config, arm string, seed uint64) rl.Config {
	rc := rl.DefaultConfig()
	rc.RunID, rc.Batch, rc.Budget, rc.Seed, rc.Lines, rc.LinesAfter = arm, cfg.Batch, cfg.Budget, seed, cfg.Lines, cfg.LinesAfter
	rc.AdaptiveMix = cfg.AdaptiveMix
	if arm == DurationAware || arm == Naive {
		rc.DurationAware = arm == DurationAware
		cfg.Learning.learner(&rc)
	}
	if arm == NoLearnFlat {
		rc.FlatFamilyAfter = cfg.FlatFamilyAfter // its prompts say when a task has stalled
	}
	return rc
}

func runOne(ctx context.Context, cfg Config, p *episode.Prepared, arm string, seed uint64, mem *watched) (Run, error) {
	start := time.Now()
	tasks := []*task.Task{p.Task}
	rc := learnerConfig(cfg, arm, seed)
	var pol rl.Policy
	var err error
	grid := cmp.Or(cfg.Grid, recipe.GridStandard)
	switch arm {
	case DurationAware, Naive:
		var rp *recipe.Policy
		if rp, err = recipe.NewPolicy(tasks, seed); err == nil {
			rp.SetTimeLimit(cfg.Settings.Timeout)
			err = errors.Join(rp.SetGrid(grid), cfg.Learning.policy(rp))
			if err == nil && cfg.InitPolicy != "" {
				err = runfolder.LoadPolicy(cfg.InitPolicy, rp)
				rp.ForgetResults() // the net is the starting point; the other run's results are not
			}
		}
		pol = rp
	case NoLearn, NoLearnFlat:
		rc.BufferSize = 1 // improve prompts improve the best so far, as train --no-learn does
		var rp *recipe.Policy
		if rp, err = recipe.NewPolicy(tasks, seed); err == nil {
			rp.SetTimeLimit(cfg.Settings.Timeout)
			err = rp.SetGrid(grid)
			if err == nil && arm == NoLearnFlat {
				err = rp.SetFlatFamilyShare(cfg.ScratchPrior)
			}
		}
		pol = rl.Frozen(rp)
	case Random:
		var u *recipe.Uniform
		if u, err = recipe.NewUniform(tasks, seed); err == nil {
			err = u.SetGrid(grid)
		}
		pol = u
	default:
		return Run{}, fmt.Errorf("unknown arm %q (want one of %v)", arm, Arms())
	}
	if err != nil {
		return Run{}, err
	}
	v, err := episode.NewVirtual(cfg.Workers, cfg.Run, cfg.Store)
	if err != nil {
		return Run{}, err
	}
	mem.mu.Lock()
	mem.executed = func() int { return v.Stats().Executed }
	mem.mu.Unlock()
	env := clocked{episode.NewGraded(v, []*episode.Prepared{p}, episode.Reward{}, cfg.Settings), v}
	sum, err := rl.Run(ctx, rc, env, pol, tasks, mem)
	if err != nil && ctx.Err() == nil {
		return Run{}, err
	}
	// Stopped part way (ctx ended), the run is kept as far as it got and
	// returned with the error. Its counts and best are read from the
	// episodes the learner wrote, a finished run's as a stopped one's: a
	// stopped learner has written them up to its last update (the rest a
	// resume would redo), a finished one all it completed.
	r := Run{Seed: seed, Updates: sum.Updates, ImproveAsScratch: sum.ImproveAsScratch, RealS: time.Since(start).Seconds()}
	if err != nil {
		r.StoppedS = max(v.Now().Seconds(), 1e-9) // above 0 even if stopped before the clock moved
	}
	var late []float64
	reused := 0
	for _, e := range mem.EpisodeRecs {
		// Episodes still running at the end are recorded cancelled: no
		// result, not a failure.
		if e.Cancelled {
			continue
		}
		r.Episodes++
		if e.Reused {
			reused++
		}
		if !e.Valid {
			r.Failures++
		}
		if e.Valid && e.Score != nil && e.Kind == episode.Scratch && e.DoneS >= 0.75*cfg.Budget.Seconds() {
			late = append(late, *e.Score)
		}
	}
	if len(late) > 0 {
		m := median(late)
		r.LateScratch = &m
	}
	r.Steps = stepsOf(mem.EpisodeRecs)
	if len(r.Steps) > 0 {
		b := r.Steps[len(r.Steps)-1].Best
		r.Best = &b
	}
	r.First = firstPrograms(mem.EpisodeRecs)
	// Virtual reuses every repeat of a program within the run, so each
	// episode not reused is a distinct program.
	r.Distinct = r.Episodes - reused
	st := v.Stats()
	r.Executed, r.FromStore = st.Executed, st.Stored
	if cfg.RunsDir != "" {
		dir := filepath.Join(cfg.RunsDir, p.Task.Name, fmt.Sprintf("%s-seed%d", arm, seed))
		if werr := errors.Join(writeJSONL(dir, "episodes.jsonl", mem.EpisodeRecs), writeJSONL(dir, "metrics.jsonl", mem.MetricLines)); werr != nil {
			return r, errors.Join(err, fmt.Errorf("keeping the run: %w", werr))
		}
	}
	return r, err
}

// firstPrograms are the programs of recs that started at virtual time zero
// (finished within the limit, not reused: a time-out measures the limit, a
// reuse another episode).
func firstPrograms(recs []rl.EpisodeRecord) []Timed {
	var first []Timed
	for _, e := range recs {
		// Completion minus duration is the start, up to float rounding.
		if e.Cancelled || e.Reused || e.TimedOut || e.Plan == "" || e.DoneS-e.DurationS > 1e-6 {
			continue
		}
		h := sha256.Sum256([]byte(e.Plan))
		first = append(first, Timed{Plan: hex.EncodeToString(h[:]), DurationS: e.DurationS})
	}
	return first
}

// writeJSONL writes recs into dir/name, one JSON document per line.
func writeJSONL[T any](dir, name string, recs []T) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644)
}

// median of xs (not empty); xs is sorted in place.
func median(xs []float64) float64 {
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// summarise computes the arm's statistics from its runs; budget places the
// checkpoints of BestAt at its quarters, and at adds more (virtual times
// within it: the 4-minute mark of a 20-minute run, to set beside 4-minute
// runs).
func (a *Arm) summarise(budget time.Duration, at ...time.Duration) {
	var best, eps, dist, fail, late, upd []float64
	for _, r := range a.Runs {
		upd = append(upd, float64(r.Updates))
		if r.LateScratch != nil {
			late = append(late, *r.LateScratch)
		}
		if r.Best != nil {
			best = append(best, *r.Best)
		}
		eps = append(eps, float64(r.Episodes))
		dist = append(dist, float64(r.Distinct))
		if r.Episodes > 0 {
			fail = append(fail, float64(r.Failures)/float64(r.Episodes))
		}
	}
	a.Best, a.Episodes, a.Distinct, a.FailureRate, a.LateScratch = stat(best), stat(eps), stat(dist), stat(fail), stat(late)
	a.Updates = stat(upd)
	a.BestAt = nil
	if !slices.ContainsFunc(a.Runs, func(r Run) bool { return len(r.Steps) > 0 }) {
		return // results written before steps were kept
	}
	var times []float64
	for q := 1; q <= 4; q++ {
		times = append(times, budget.Seconds()*float64(q)/4)
	}
	for _, d := range at {
		times = append(times, d.Seconds())
	}
	slices.Sort(times)
	for _, t := range slices.Compact(times) {
		var bests []float64
		for _, r := range a.Runs {
			if b, ok := bestAt(r.Steps, t); ok {
				bests = append(bests, b)
			}
		}
		a.BestAt = append(a.BestAt, Checkpoint{T: t, Best: stat(bests)})
	}
}

// CheckAt says whether at are times within budget that CheckpointsAt can
// add (nil), or which is not.
func CheckAt(at []time.Duration, budget time.Duration) error {
	for _, d := range at {
		if d <= 0 || d > budget {
			return fmt.Errorf("checkpoint %s is not within the budget of %s", d, budget)
		}
	}
	return nil
}

// CheckpointsAt recomputes every arm's BestAt with the quarters of the
// budget and the times at (see CheckAt), so the table's curve has a column
// for each.
func (r *Result) CheckpointsAt(at []time.Duration) error {
	if err := CheckAt(at, r.Budget); err != nil {
		return err
	}
	for i := range r.Arms {
		if len(r.Arms[i].BestAt) > 0 { // results with steps recorded
			r.Arms[i].summarise(r.Budget, at...)
		}
	}
	return nil
}

// stat is the mean of xs and its standard error. Equal values give exactly
// their value and an SE of exactly zero: summing and dividing leaves a
// round-off SE of about 1e-17 instead, and a table that divides a
// difference by it prints a ratio of two round-off errors.
func stat(xs []float64) Stat {
	s := Stat{N: len(xs)}
	if len(xs) == 0 {
		return s
	}
	if !slices.ContainsFunc(xs, func(x float64) bool { return x != xs[0] }) {
		s.Mean = xs[0]
		return s
	}
	for _, x := range xs {
		s.Mean += x
	}
	s.Mean /= float64(len(xs))
	if len(xs) > 1 {
		var v float64
		for _, x := range xs {
			v += (x - s.Mean) * (x - s.Mean)
		}
		s.SE = math.Sqrt(v/float64(len(xs)-1)) / math.Sqrt(float64(len(xs)))
	}
	return s
}

// seedNote lists each arm's seeds when the arms do not all have the same
// ones, as after a merge of parts with different --seeds ("" otherwise).
func seedNote(arms []Arm) string {
	seeds := make([]string, len(arms))
	same := true
	for i, a := range arms {
		var s []uint64
		for _, r := range a.Runs {
			s = append(s, r.Seed)
		}
		seeds[i] = joinSeeds(s)
		same = same && seeds[i] == seeds[0]
	}
	if same {
		return ""
	}
	var parts []string
	for i, a := range arms {
		parts = append(parts, a.Arm+" "+seeds[i])
	}
	return strings.Join(parts, "; ")
}

// seedCount says how many seeds the table holds, and which when they are
// not 1..N (seeds added later with --first-seed, alone or merged).
func seedCount(r *Result) string {
	var all []uint64
	for _, a := range r.Arms {
		for _, run := range a.Runs {
			if !slices.Contains(all, run.Seed) {
				all = append(all, run.Seed)
			}
		}
	}
	slices.Sort(all)
	label := fmt.Sprintf("%d seeds", r.Seeds)
	if r.Seeds == 1 {
		label = "1 seed"
	}
	for i, s := range all {
		if s != uint64(i+1) {
			return label + " (" + joinSeeds(all) + ")"
		}
	}
	return label
}

// joinSeeds lists seeds as "1,2,3".
func joinSeeds(seeds []uint64) string {
	names := make([]string, len(seeds))
	for i, s := range seeds {
		names[i] = fmt.Sprint(s)
	}
	return strings.Join(names, ",")
}

// floorNote names a non-zero edit floor in the header ("" for none, so
// tables of results from before it read as they did).
func floorNote(f float64) string {
	if f == 0 {
		return ""
	}
	return fmt.Sprintf(", edit floor %g", f)
}

// scratchPriorNote says what share of the RL arms' scratch programs the
// prior draws (recipe.Policy.SetScratchPrior).
func scratchPriorNote(f float64) string {
	if f == 0 {
		return ""
	}
	return fmt.Sprintf(", %g of scratch programs drawn from the prior", f)
}

// widenNote says when the RL arms' improve walks widen (rl.Config.WidenAfter).
func widenNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", edits widen toward the prior after %d episodes without a new best", n)
}

// flatNote says when the RL arms' scratch-prior walks draw the model
// family flat (rl.Config.FlatFamilyAfter).
func flatNote(after time.Duration) string {
	if after == 0 {
		return ""
	}
	return fmt.Sprintf(", their model family drawn flat once a best has stood %v", after)
}

// repeatNote says when the RL arms' walks that only repeat turn to the
// prior (recipe.Policy.SetPriorOnRepeat).
func repeatNote(on bool) string {
	if !on {
		return ""
	}
	return ", walks that only repeat plans turn to the prior"
}

// slowerNote says when the time charge spares fast programs
// (rl.Config.ChargeSlowerOnly).
func slowerNote(on bool) string {
	if on {
		return " (slower programs only)"
	}
	return ""
}

// screenNote says when the RL arms screen candidates (recipe.Policy.SetScreen).
func screenNote(k int, perSecond bool, after int) string {
	when := ""
	if after > 0 {
		when = fmt.Sprintf(" once %d new programs in a row have not beaten the best", after)
	}
	switch {
	case k == 0:
		return ""
	case perSecond:
		return fmt.Sprintf(", each walk the model of results' pick of %d candidates per predicted second%s", k, when)
	}
	return fmt.Sprintf(", each walk the model of results' pick of %d candidates%s", k, when)
}

// initNote names the run the RL arms started from, if any.
func initNote(dir string) string {
	if dir == "" {
		return ""
	}
	return ", starting from the policy of " + dir
}

// rowFormat is one line of Print's table, its header included. Widths are
// in runes (fmt pads by runes), so a "±" keeps the columns aligned.
const rowFormat = "  %-18s %-20s %-14s %-14s %-8s %-12s %-20s %s\n"

// Print writes the table: per task, each arm's mean ± standard error, and
// each RL arm's gap to no-learn in standard errors of the difference.
func (r *Result) Print(w io.Writer) {
	extra := "" // what the header says when known
	if r.Settings.Timeout > 0 {
		extra = fmt.Sprintf(", program limit %v", r.Settings.Timeout)
	}
	if r.Binary != "" {
		extra += ", binary " + r.Binary
	}
	if r.Grid != "" {
		extra += ", " + r.Grid + " grid"
	}
	if r.Lines > 0 {
		extra += fmt.Sprintf(", improve parents from %d more lines", r.Lines)
		if r.LinesAfter > 0 {
			extra += fmt.Sprintf(" once a best stands %v", r.LinesAfter)
		}
	}
	if r.Mix != "" {
		extra += ", improve share " + r.Mix
	}
	if slices.ContainsFunc(r.Arms, func(a Arm) bool { return a.Arm == NoLearnFlat }) {
		extra += fmt.Sprintf(", %s: the prompting baseline with %g of its scratch programs' model family drawn flat once a best has stood %v", NoLearnFlat, r.ScratchPrior, r.FlatFamilyAfter)
	}
	if r.Incomplete != "" {
		fmt.Fprintf(w, "INCOMPLETE: %s\n", r.Incomplete)
	}
	for _, c := range r.Cautions {
		fmt.Fprintf(w, "CAUTION: %s\n", c)
	}
	fmt.Fprintf(w, "mode: %s\nbudget %v (virtual), %d workers, batch %d%s, %s; RL arms: utility %s, improve credit %s, time charge %g%s, elite %g, decision credit %v, buffer %d%s%s; %d programs really run\n\n",
		r.Mode, r.Budget, r.Workers, r.Batch, extra, seedCount(r), r.Utility, r.ImproveCredit, r.TimeCharge, slowerNote(r.ChargeSlowerOnly), r.Elite, r.DecisionCredit, r.Buffer, floorNote(r.EditFloor)+scratchPriorNote(r.ScratchPrior)+widenNote(r.WidenAfter)+flatNote(r.FlatFamilyAfter)+repeatNote(r.PriorOnRepeat)+screenNote(r.Screen, r.ScreenPerSecond, r.ScreenAfter), initNote(r.InitPolicy), r.Executed)
	byTask := map[string][]Arm{}
	var order []string
	for _, a := range r.Arms {
		if _, ok := byTask[a.Task]; !ok {
			order = append(order, a.Task)
		}
		byTask[a.Task] = append(byTask[a.Task], a)
	}
	sort.Strings(order)
	for _, t := range order {
		arms := byTask[t]
		fmt.Fprintf(w, "%s (%s)\n", t, grade.Direction(arms[0].LowerIsBetter))
		fmt.Fprintf(w, rowFormat, "arm", "best score", "episodes", "distinct", "failed", "updates", "late scratch median", "vs no-learn")
		var base *Arm
		for i := range arms {
			if arms[i].Arm == NoLearn {
				base = &arms[i]
			}
		}
		for _, a := range arms {
			if len(a.Runs) == 0 { // all stopped part way (listed below)
				fmt.Fprintf(w, "  %-18s no run finished\n", a.Arm)
				continue
			}
			vs := ""
			if base != nil && a.Arm != NoLearn {
				vs = gap(a.Best, base.Best, a.LowerIsBetter)
			}
			late := "-" // no run wrote a valid program from scratch late
			if a.LateScratch.N > 0 {
				late = fmt.Sprintf("%.4f ± %.4f", a.LateScratch.Mean, a.LateScratch.SE)
			}
			fmt.Fprintf(w, rowFormat, a.Arm,
				fmt.Sprintf("%.4f ± %.4f", a.Best.Mean, a.Best.SE),
				fmt.Sprintf("%.0f ± %.0f", a.Episodes.Mean, a.Episodes.SE),
				fmt.Sprintf("%.0f ± %.0f", a.Distinct.Mean, a.Distinct.SE),
				fmt.Sprintf("%.1f%%", 100*a.FailureRate.Mean),
				fmt.Sprintf("%.1f ± %.1f", a.Updates.Mean, a.Updates.SE), late, vs)
		}
		printSpent(w, arms)
		if note := seedNote(arms); note != "" {
			fmt.Fprintf(w, "  seeds differ between arms (merged results; the gaps compare all of each arm's runs): %s\n", note)
		}
		printCurve(w, arms, base)
		printStopped(w, arms, r.Budget)
		fmt.Fprintln(w)
	}
}

// printSpent says, per seed, how often an arm's improve prompt found its
// parent's edits spent and was answered from scratch: those episodes count
// as scratch ones above, so without this line a run that gave up improving
// looks like one that chose not to.
func printSpent(w io.Writer, arms []Arm) {
	for _, a := range arms {
		spent := false
		cells := make([]string, len(a.Runs))
		for i, r := range a.Runs {
			cells[i] = fmt.Sprintf("%d", r.ImproveAsScratch)
			spent = spent || r.ImproveAsScratch > 0
		}
		if spent {
			fmt.Fprintf(w, "  %s: improve prompts answered from scratch (the parent's edits spent), per seed: %s\n", a.Arm, strings.Join(cells, " / "))
		}
	}
}

// printStopped lists the runs stopped part way, which no number above
// includes, and how to finish them cheaply.
func printStopped(w io.Writer, arms []Arm, budget time.Duration) {
	for _, a := range arms {
		for _, r := range a.Stopped {
			best := "none"
			if r.Best != nil {
				best = fmt.Sprintf("%.4f", *r.Best)
			}
			fmt.Fprintf(w, "  stopped: %s seed %d at %s of %v virtual, best %s, %d episodes (not in the table; the same seed again on the same --cache replays them)\n",
				a.Arm, r.Seed, vtime(r.StoppedS), budget, best, r.Episodes)
		}
	}
}

// gap is a's mean best against base's, signed so that positive is better,
// and in standard errors of the difference when there is one ("" when
// either has no run with a best).
func gap(a, base Stat, lowerIsBetter bool) string {
	d, se, ok := diff(a, base, lowerIsBetter)
	if !ok {
		return ""
	}
	s := fmt.Sprintf("%+.4f", d)
	if se > 0 {
		s += " (" + inSE(d/se) + ")"
	}
	return s
}

// inSE formats a difference in standard errors: one decimal, but two where
// one decimal cannot say which side of one SE it lies (0.95 to 1.05 either
// way), because "more than one SE" is issue 10's bar and "+1.0" read as
// passing it when the difference was +0.95.
func inSE(z float64) string {
	if a := math.Abs(z); a >= 0.95 && a < 1.05 {
		return fmt.Sprintf("%+.2f SE", z)
	}
	return fmt.Sprintf("%+.1f SE", z)
}

// diff is a's mean best less base's, signed so that positive is better, and
// its standard error (ok false when either has no run with a best).
func diff(a, base Stat, lowerIsBetter bool) (d, se float64, ok bool) {
	if a.N == 0 || base.N == 0 {
		return 0, 0, false
	}
	d = a.Mean - base.Mean
	if lowerIsBetter {
		d = -d
	}
	return d, math.Hypot(a.SE, base.SE), true
}

// vtime is virtual second t as a duration to the second.
func vtime(t float64) string {
	return time.Duration(t * float64(time.Second)).Round(time.Second).String()
}

// curveLine writes one line of printCurve's table: the arm, then a column
// per checkpoint, the last one unpadded.
func curveLine(w io.Writer, cells []string) {
	line := fmt.Sprintf("  %-18s", cells[0])
	for i, c := range cells[1:] {
		if i < len(cells)-2 {
			c = fmt.Sprintf("%-34s", c)
		}
		line += " " + c
	}
	fmt.Fprintln(w, line)
}

// printCurve writes, when the runs recorded their steps, each arm's best so
// far at each checkpoint of BestAt (with RL's gap to no-learn there, and
// [n=k] when only k runs had a valid program by then), when each run found
// its final best, and when each first got to the level every no-learn run
// reached: a long run read as the shorter budgets it contains, and who got
// there first where both end level.
func printCurve(w io.Writer, arms []Arm, base *Arm) {
	i := slices.IndexFunc(arms, func(a Arm) bool { return len(a.BestAt) > 0 })
	if i < 0 {
		return
	}
	n := len(arms[i].BestAt) // every arm's, when all recorded steps
	cells := []string{"best so far at"}
	for _, c := range arms[i].BestAt {
		cells = append(cells, vtime(c.T))
	}
	curveLine(w, cells)
	for _, a := range arms {
		if len(a.BestAt) != n {
			continue
		}
		cells := []string{a.Arm}
		for i, c := range a.BestAt {
			cell := "-"
			if c.Best.N > 0 {
				cell = fmt.Sprintf("%.4f ± %.4f", c.Best.Mean, c.Best.SE)
			}
			if base != nil && a.Arm != NoLearn && len(base.BestAt) == n {
				if d, se, ok := diff(c.Best, base.BestAt[i].Best, a.LowerIsBetter); ok && se > 0 {
					cell += " (" + inSE(d/se) + ")"
				}
			}
			if c.Best.N < len(a.Runs) { // some runs had no valid program yet
				cell += fmt.Sprintf(" [n=%d]", c.Best.N)
			}
			cells = append(cells, cell)
		}
		curveLine(w, cells)
	}
	perSeed(w, "  final best first reached at, per seed:", arms, func(a Arm, r Run) string {
		return vtime(r.Steps[len(r.Steps)-1].T)
	})
	// The level every no-learn run reached: its worst final best.
	target, have := 0.0, false
	if base != nil {
		for _, r := range base.Runs {
			if r.Best != nil && (!have || (*r.Best > target) == base.LowerIsBetter) {
				target, have = *r.Best, true
			}
		}
	}
	if !have {
		return
	}
	head := fmt.Sprintf("  first at %.4f (no-learn's worst final best, which every no-learn run reached), per seed:", target)
	perSeed(w, head, arms, func(a Arm, r Run) string {
		if t, ok := reached(r.Steps, target, a.LowerIsBetter); ok {
			return vtime(t)
		}
		return "never"
	})
}

// perSeed writes head, then a line per arm with at of each of its runs that
// recorded steps.
func perSeed(w io.Writer, head string, arms []Arm, at func(Arm, Run) string) {
	fmt.Fprintln(w, head)
	for _, a := range arms {
		var cells []string
		for _, r := range a.Runs {
			if len(r.Steps) > 0 {
				cells = append(cells, at(a, r))
			}
		}
		if len(cells) > 0 {
			fmt.Fprintf(w, "    %-18s %s\n", a.Arm, strings.Join(cells, ", "))
		}
	}
}
