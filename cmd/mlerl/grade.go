package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/mlerl/mlerl/grade"
	"github.com/mlerl/mlerl/task"
)

func runGrade(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("grade", flag.ContinueOnError)
	fs.SetOutput(stderr)
	taskArg := fs.String("task", "", "suite name or task folder")
	sub := fs.String("submission", "", "submission CSV to grade")
	asJSON := fs.Bool("json", false, "print one JSON document on stdout")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *sub == "" {
		return exitStatus(stderr, usageErrorf("grade: --submission is required"))
	}
	t, err := loadTask(*taskArg)
	if err != nil {
		return exitStatus(stderr, err)
	}
	ans, err := t.Answers()
	if err != nil {
		return exitStatus(stderr, errUsage{err})
	}
	res := ans.GradeFile(*sub)
	rank, err := leaderboardRank(t, res)
	if err != nil {
		return exitStatus(stderr, errUsage{err})
	}
	if *asJSON {
		out := struct {
			grade.Result
			Rank *grade.Rank `json:"rank,omitempty"`
		}{res, rank}
		if err := json.NewEncoder(stdout).Encode(out); err != nil {
			return exitStatus(stderr, err)
		}
	}
	if !res.Valid {
		// An invalid submission is bad input: one line naming what is wrong.
		fmt.Fprintf(stderr, "mlerl: %s: invalid submission: %s\n", *sub, res.Error)
		return 2
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "%s %s = %.6g\n", t.Name, t.Metric, *res.Score)
		if rank != nil {
			medal := "no medal"
			if rank.Medal != nil {
				medal = *rank.Medal + " medal"
			}
			fmt.Fprintf(stderr, "%s: %s, above median: %v (gold %.6g, silver %.6g, bronze %.6g, median %.6g)\n",
				t.Name, medal, rank.AboveMedian, rank.GoldThreshold, rank.SilverThreshold, rank.BronzeThreshold, rank.MedianThreshold)
		}
	}
	return 0
}

// leaderboardRank places a grade on the task's leaderboard.csv, if it has one
// (imported MLE-bench tasks do), by MLE-bench's medal rules.
func leaderboardRank(t *task.Task, res grade.Result) (*grade.Rank, error) {
	lb, err := t.Leaderboard()
	if lb == nil || err != nil {
		return nil, err
	}
	r := lb.Rank(res.Score)
	return &r, nil
}
