// Package ablation runs the paper's duration ablation (its Figures 2 and 8):
// the same asynchronous learner, environment and budget, with and without the
// duration weight, over several seeds. The environment is a replay table on a
// virtual clock and the policy a tabular softmax over the table's plans, so the
// effect of the weight is seen in isolation from everything a language model
// would add.
//
// By default the table is replay.DefaultTable, recorded from real sandboxed
// runs of recipe plans on the suite task hpc-job-class: fast weak plans
// (linear models), tree ensembles, the default histogram boosting and fast
// real failures. What it shows (numbers in bench/RESULTS.md, "Duration
// ablation"):
//
//   - early in training, the paper's Figure 8: the naive arm stays on fast,
//     weaker programs, the duration-aware arm moves to slower, stronger ones;
//   - later the gap in score closes and can turn: this table has a plan that
//     is both fast and strong, which the naive arm finds once slow results
//     have come in, while the duration-aware arm keeps favouring the slowest
//     strong plan. The mean duration gap stays.
//
// Why: here a freed slot samples afresh from the current policy, so once the
// policy is steady a batch holds each plan in proportion to its probability,
// not to probability / duration; the fast-first bias is real only while slow
// jobs are still in flight under older policies, which is when the naive arm
// commits to fast plans and PPO's ratio then shrinks the stale slow samples'
// pull (TestFixedPolicyCompletionsFollowProbabilities checks the steady
// state). A tabular policy keeps some mass on every plan (entropy bonus, exact
// gradients) and recovers; the paper's language-model policy converged on a
// fast program (its Figure 2) and stayed there.
// After that point the weight Δt/mean(Δt) only adds a pull toward slow plans.
// Trajectory, in the result and the table, shows the whole course.
package ablation

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/rl/replay"
	"github.com/mlerl/mlerl/rl/tabular"
	"github.com/mlerl/mlerl/task"
)

// Config configures the ablation.
type Config struct {
	Table *replay.Table
	// TableName says which table it is (a built-in's name or a file), for the result.
	TableName string
	Task      string // task name the table's rows are for (any name works for a one-task table)
	Seeds     int
	Workers   int
	Budget    time.Duration // virtual
	Batch     int
	// MaxStaleness for the learner; negative keeps every sample (see rl.Config).
	MaxStaleness int
	// SampleCost and UpdateCost model the learner's compute on the virtual
	// clock (per action written, per update); see replay.Config.
	SampleCost, UpdateCost time.Duration
	Policy                 tabular.Config
	// Utility is what advantages are computed from (rl.Config.Utility). The
	// ablation's default is the paper's, the reward itself: the effect it
	// measures, fast plans winning under naive updates, is the paper's.
	Utility string
	// Learner overrides the learner's remaining defaults when set.
	Learner func(*rl.Config)
	// Points is the number of evenly spaced times, from the start (the
	// uniform policy) to the end of the budget, at which the policy's expected
	// behaviour is recorded in Trajectory; 0 records only the end.
	Points int
}

// DefaultConfig is the setting `mlerl bench duration-ablation` uses on the
// default, real table (replay.DefaultTable; Table and Task are the caller's).
// Its plans take 1-15 s, so 64 workers complete a batch of 64 every few
// virtual seconds and 10 virtual minutes give each arm 100-170 updates (about
// 6,000-10,000 episodes): long enough to leave the uniform start, the early
// phase the paper's Figure 8 describes. See the package comment for what
// longer budgets show.
func DefaultConfig() Config {
	return Config{
		Seeds: 3, Workers: 64, Budget: 10 * time.Minute, Batch: 64,
		MaxStaleness: -1, Policy: tabular.DefaultConfig(), Points: 11, Utility: rl.UtilityReward,
	}
}

// SyntheticConfig is the setting for the synthetic table (replay.Synthetic):
// its strong plans take 1-5 minutes, so the budget is 2 virtual hours.
func SyntheticConfig() Config {
	c := DefaultConfig()
	c.Task, c.Budget = "synthetic-churn", 2*time.Hour
	return c
}

// Arm is one side of the ablation, averaged over seeds (CONTRACT.md §3).
type Arm struct {
	FinalMeanScore     float64 `json:"final_mean_score"`
	FinalMeanDurationS float64 `json:"final_mean_duration_s"`
	BestScore          float64 `json:"best_score"`
	FinalValidFrac     float64 `json:"final_valid_frac"`
	Updates            float64 `json:"updates"`
	Episodes           float64 `json:"episodes"`
	Utilisation        float64 `json:"utilisation"`
	Dropped            float64 `json:"dropped"`
	// Trajectory is the per-seed trajectories' mean, point by point.
	Trajectory []Point `json:"trajectory,omitempty"`
	PerSeed    []Run   `json:"per_seed"`
}

// Point is the policy's expected behaviour from scratch (see Expect) at a
// time on the virtual clock.
type Point struct {
	TimeS         float64 `json:"time_s"`
	MeanScore     float64 `json:"mean_score"`
	MeanDurationS float64 `json:"mean_duration_s"`
	ValidFrac     float64 `json:"valid_frac"`
	Updates       float64 `json:"updates"`
}

// Run is one seed of one arm.
type Run struct {
	Seed               uint64  `json:"seed"`
	FinalMeanScore     float64 `json:"final_mean_score"`
	FinalMeanDurationS float64 `json:"final_mean_duration_s"`
	FinalValidFrac     float64 `json:"final_valid_frac"`
	BestScore          float64 `json:"best_score"`
	Updates            int     `json:"updates"`
	Episodes           int     `json:"episodes"`
	Utilisation        float64 `json:"utilisation"`
	Dropped            int     `json:"dropped"`
	// TopPlan is the final policy's most likely plan from scratch; TopNote
	// the table's note for it (the plan's short name), if any.
	TopPlan     string  `json:"top_plan"`
	TopNote     string  `json:"top_note,omitempty"`
	TopPlanProb float64 `json:"top_plan_prob"`
	Trajectory  []Point `json:"trajectory,omitempty"`
}

// Result is the ablation's JSON document.
type Result struct {
	Naive         Arm     `json:"naive"`
	DurationAware Arm     `json:"duration_aware"`
	Seeds         int     `json:"seeds"`
	Table         string  `json:"table,omitempty"`
	Task          string  `json:"task"`
	Workers       int     `json:"workers"`
	BudgetS       float64 `json:"budget_s"`
	Batch         int     `json:"batch"`
}

// Ablate runs both arms on seeds 1..Seeds. "Final" numbers are of the final
// policy, exactly: its distribution from scratch, weighted into the table's
// mean duration and mean valid score per plan — what the policy would now
// write, not what happened to complete last (completions over-represent fast
// plans, which is the very bias under study).
func Ablate(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Table == nil {
		return Result{}, fmt.Errorf("ablation: no table")
	}
	if cfg.Seeds < 1 || cfg.Workers < 1 || cfg.Batch < 1 || cfg.Budget <= 0 {
		return Result{}, fmt.Errorf("ablation: seeds %d, workers %d, batch %d and budget %v must be positive", cfg.Seeds, cfg.Workers, cfg.Batch, cfg.Budget)
	}
	res := Result{Seeds: cfg.Seeds, Table: cfg.TableName, Task: cfg.Task, Workers: cfg.Workers, BudgetS: cfg.Budget.Seconds(), Batch: cfg.Batch}
	for _, aware := range []bool{false, true} {
		var arm Arm
		for s := 1; s <= cfg.Seeds; s++ {
			r, err := one(ctx, cfg, uint64(s), aware)
			if err != nil {
				return Result{}, err
			}
			arm.PerSeed = append(arm.PerSeed, r)
			n := float64(cfg.Seeds)
			arm.FinalMeanScore += r.FinalMeanScore / n
			arm.FinalMeanDurationS += r.FinalMeanDurationS / n
			arm.FinalValidFrac += r.FinalValidFrac / n
			arm.BestScore += r.BestScore / n
			arm.Updates += float64(r.Updates) / n
			arm.Episodes += float64(r.Episodes) / n
			arm.Utilisation += r.Utilisation / n
			arm.Dropped += float64(r.Dropped) / n
			if arm.Trajectory == nil {
				arm.Trajectory = make([]Point, len(r.Trajectory))
			}
			for i, p := range r.Trajectory {
				a := &arm.Trajectory[i]
				a.TimeS = p.TimeS
				a.MeanScore += p.MeanScore / n
				a.MeanDurationS += p.MeanDurationS / n
				a.ValidFrac += p.ValidFrac / n
				a.Updates += p.Updates / n
			}
		}
		if aware {
			res.DurationAware = arm
		} else {
			res.Naive = arm
		}
	}
	return res, nil
}

func one(ctx context.Context, cfg Config, seed uint64, aware bool) (Run, error) {
	env, err := replay.New(cfg.Table, replay.Config{Workers: cfg.Workers, Seed: seed, SampleCost: cfg.SampleCost, UpdateCost: cfg.UpdateCost})
	if err != nil {
		return Run{}, err
	}
	pc := cfg.Policy
	pc.Seed = seed
	pol, err := tabular.New(cfg.Table.Keys(), pc)
	if err != nil {
		return Run{}, err
	}
	lc := rl.DefaultConfig()
	lc.RunID = fmt.Sprintf("ablation-s%d", seed)
	lc.Batch, lc.Budget, lc.DurationAware, lc.Seed, lc.MaxStaleness = cfg.Batch, cfg.Budget, aware, seed, cfg.MaxStaleness
	// The paper's two updates, nothing else: a charge on time, or edits
	// always of the best, would blur what the ablation isolates.
	lc.TimeCharge, lc.BufferSize = 0, rl.PaperBuffer
	if cfg.Utility != "" {
		lc.Utility = cfg.Utility
	}
	if cfg.Learner != nil {
		cfg.Learner(&lc)
	}
	tr := &tracker{pol: pol, table: cfg.Table, task: cfg.Task}
	for k := 0; k < cfg.Points-1; k++ {
		tr.at = append(tr.at, time.Duration(int64(lc.Budget)*int64(k)/int64(cfg.Points-1)))
	}
	tr.upTo(0, 0) // the untrained (uniform) policy
	sum, err := rl.Run(ctx, lc, env, pol, []*task.Task{{Name: cfg.Task}}, tr)
	if err != nil {
		return Run{}, fmt.Errorf("ablation seed %d (duration-aware %v): %w", seed, aware, err)
	}
	tr.upTo(lc.Budget, sum.Updates) // points the run's last update did not reach
	r := Run{Seed: seed, Updates: sum.Updates, Episodes: sum.Completed, Utilisation: env.Utilisation(), Dropped: sum.Dropped}
	if sum.BestScore != nil {
		r.BestScore = *sum.BestScore
	}
	r.FinalMeanScore, r.FinalMeanDurationS, r.FinalValidFrac, r.TopPlan, r.TopPlanProb = Expect(pol, cfg.Table, cfg.Task)
	if rows := cfg.Table.Rows(r.TopPlan); len(rows) > 0 {
		r.TopNote = rows[0].Note
	}
	r.Trajectory = append(tr.points, Point{TimeS: lc.Budget.Seconds(), MeanScore: r.FinalMeanScore,
		MeanDurationS: r.FinalMeanDurationS, ValidFrac: r.FinalValidFrac, Updates: float64(sum.Updates)})
	return r, nil
}

// tracker is the Sink of an ablation run: it records the policy's expected
// behaviour when the clock passes each of the times in at (the learner calls
// Metrics right after each update, with the policy already updated).
type tracker struct {
	rl.Discard
	pol    *tabular.Policy
	table  *replay.Table
	task   string
	at     []time.Duration
	points []Point
}

func (tr *tracker) Metrics(m rl.Metrics) error {
	tr.upTo(time.Duration(m.TimeS*float64(time.Second)), m.Update)
	return nil
}

// upTo records a point for every pending time ≤ now, with the current policy.
func (tr *tracker) upTo(now time.Duration, updates int) {
	for len(tr.points) < len(tr.at) && tr.at[len(tr.points)] <= now {
		p := Point{TimeS: tr.at[len(tr.points)].Seconds(), Updates: float64(updates)}
		p.MeanScore, p.MeanDurationS, p.ValidFrac, _, _ = Expect(tr.pol, tr.table, tr.task)
		tr.points = append(tr.points, p)
	}
}

// Expect is the final policy's expected behaviour from scratch on task: mean
// score over the valid programs it writes, mean duration, valid fraction, and
// its most likely plan.
func Expect(pol *tabular.Policy, table *replay.Table, taskName string) (score, durationS, validFrac float64, top string, topP float64) {
	probs := pol.Probs(tabular.State(rl.Prompt{Kind: episode.Scratch, Task: &task.Task{Name: taskName}}))
	for i, plan := range pol.Plans() {
		d, s, v := table.Mean(plan)
		durationS += probs[i] * d
		validFrac += probs[i] * v
		score += probs[i] * v * s
		if probs[i] > topP {
			top, topP = plan, probs[i]
		}
	}
	if validFrac > 0 {
		score /= validFrac
	}
	return score, durationS, validFrac, top, topP
}

// WriteTable prints the ablation for a person: per seed and mean of each
// arm, then the arms' mean trajectories side by side.
func WriteTable(w io.Writer, r Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	table := r.Task
	if r.Table != "" && r.Table != r.Task {
		table = r.Table + " (task " + r.Task + ")"
	}
	fmt.Fprintf(w, "duration ablation on %s: %d seeds, %d workers, batch %d, budget %v (virtual)\n",
		table, r.Seeds, r.Workers, r.Batch, time.Duration(r.BudgetS*float64(time.Second)))
	fmt.Fprintln(tw, "arm\tseed\tfinal mean score\tfinal mean duration (s)\tvalid\tbest score\tupdates\tepisodes\tutilisation\ttop plan (p)\t")
	arms := []struct {
		name string
		arm  Arm
	}{{"naive", r.Naive}, {"duration-aware", r.DurationAware}}
	for _, a := range arms {
		for _, s := range a.arm.PerSeed {
			top := s.TopNote
			if top == "" {
				top = s.TopPlan
			}
			fmt.Fprintf(tw, "%s\t%d\t%.4f\t%.1f\t%.2f\t%.4f\t%d\t%d\t%.3f\t%s (%.2f)\t\n", a.name, s.Seed,
				s.FinalMeanScore, s.FinalMeanDurationS, s.FinalValidFrac, s.BestScore, s.Updates, s.Episodes, s.Utilisation, top, s.TopPlanProb)
		}
		fmt.Fprintf(tw, "%s\tmean\t%.4f\t%.1f\t%.2f\t%.4f\t%.0f\t%.0f\t%.3f\t\t\n", a.name,
			a.arm.FinalMeanScore, a.arm.FinalMeanDurationS, a.arm.FinalValidFrac, a.arm.BestScore, a.arm.Updates, a.arm.Episodes, a.arm.Utilisation)
	}
	tw.Flush()
	n, d := r.Naive.Trajectory, r.DurationAware.Trajectory
	if len(n) < 2 || len(n) != len(d) {
		return
	}
	fmt.Fprintln(w, "mean over seeds of the policy's expected program from scratch, during training:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "time\tnaive score\tnaive duration (s)\tnaive updates\taware score\taware duration (s)\taware updates\t")
	for i := range n {
		fmt.Fprintf(tw, "%v\t%.4f\t%.1f\t%.0f\t%.4f\t%.1f\t%.0f\t\n", time.Duration(n[i].TimeS*float64(time.Second)).Round(time.Second),
			n[i].MeanScore, n[i].MeanDurationS, n[i].Updates, d[i].MeanScore, d[i].MeanDurationS, d[i].Updates)
	}
	tw.Flush()
}
