package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
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
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
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
	}
	return 0
}
