// Package ablation runs the paper's duration ablation (its Figures 2 and 8):
// the same asynchronous learner, environment and budget, with and without the
// duration weight, over several seeds. The environment is a replay table on a
// virtual clock and the policy a tabular softmax over the table's plans, so the
// effect of the weight is seen in isolation from everything a language model
// would add.
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
	Table   *replay.Table
	Task    string // task name the table's rows are for (any name works for a one-task table)
	Seeds   int
	Workers int
	Budget  time.Duration // virtual
	Batch   int
	// MaxStaleness for the learner; negative keeps every sample (see rl.Config).
	MaxStaleness int
	// SampleCost and UpdateCost model the learner's compute on the virtual
	// clock (per action written, per update); see replay.Config.
	SampleCost, UpdateCost time.Duration
	Policy                 tabular.Config
	// Learner overrides the learner's remaining defaults when set.
	Learner func(*rl.Config)
}

// DefaultConfig is the setting `mlerl bench duration-ablation` uses.
func DefaultConfig() Config {
	return Config{
		Task: "synthetic-churn", Seeds: 3, Workers: 64, Budget: 2 * time.Hour, Batch: 64,
		MaxStaleness: -1, Policy: tabular.DefaultConfig(),
	}
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
	PerSeed            []Run   `json:"per_seed"`
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
	// TopPlan is the final policy's most likely plan from scratch.
	TopPlan     string  `json:"top_plan"`
	TopPlanProb float64 `json:"top_plan_prob"`
}

// Result is the ablation's JSON document.
type Result struct {
	Naive         Arm     `json:"naive"`
	DurationAware Arm     `json:"duration_aware"`
	Seeds         int     `json:"seeds"`
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
	res := Result{Seeds: cfg.Seeds, Workers: cfg.Workers, BudgetS: cfg.Budget.Seconds(), Batch: cfg.Batch}
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
	if cfg.Learner != nil {
		cfg.Learner(&lc)
	}
	sum, err := rl.Run(ctx, lc, env, pol, []*task.Task{{Name: cfg.Task}}, rl.Discard{})
	if err != nil {
		return Run{}, fmt.Errorf("ablation seed %d (duration-aware %v): %w", seed, aware, err)
	}
	r := Run{Seed: seed, Updates: sum.Updates, Episodes: sum.Completed, Utilisation: env.Utilisation(), Dropped: sum.Dropped}
	if sum.BestScore != nil {
		r.BestScore = *sum.BestScore
	}
	r.FinalMeanScore, r.FinalMeanDurationS, r.FinalValidFrac, r.TopPlan, r.TopPlanProb = Expect(pol, cfg.Table, cfg.Task)
	return r, nil
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

// WriteTable prints the ablation for a person.
func WriteTable(w io.Writer, r Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "duration ablation: %d seeds, %d workers, batch %d, budget %v (virtual)\n",
		r.Seeds, r.Workers, r.Batch, time.Duration(r.BudgetS*float64(time.Second)))
	fmt.Fprintln(tw, "arm\tseed\tfinal mean score\tfinal mean duration (s)\tvalid\tbest score\tupdates\tepisodes\tutilisation\ttop plan (p)\t")
	for _, a := range []struct {
		name string
		arm  Arm
	}{{"naive", r.Naive}, {"duration-aware", r.DurationAware}} {
		for _, s := range a.arm.PerSeed {
			fmt.Fprintf(tw, "%s\t%d\t%.4f\t%.1f\t%.2f\t%.4f\t%d\t%d\t%.3f\t%s (%.2f)\t\n", a.name, s.Seed,
				s.FinalMeanScore, s.FinalMeanDurationS, s.FinalValidFrac, s.BestScore, s.Updates, s.Episodes, s.Utilisation, s.TopPlan, s.TopPlanProb)
		}
		fmt.Fprintf(tw, "%s\tmean\t%.4f\t%.1f\t%.2f\t%.4f\t%.0f\t%.0f\t%.3f\t\t\n", a.name,
			a.arm.FinalMeanScore, a.arm.FinalMeanDurationS, a.arm.FinalValidFrac, a.arm.BestScore, a.arm.Updates, a.arm.Episodes, a.arm.Utilisation)
	}
	tw.Flush()
}
