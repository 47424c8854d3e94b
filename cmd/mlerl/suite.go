package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/mlerl/mlerl/suite"
)

const suiteUsage = "usage: mlerl suite build [--set suite|unseen|tuning] [--out DIR] [--verify]"

// runSuite rebuilds the task suite from the Debian packages and, with
// --verify, checks the result byte for byte against the recorded checksums.
func runSuite(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "build" {
		fmt.Fprintln(stderr, suiteUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			return 0
		}
		return 2
	}
	fs := flag.NewFlagSet("suite build", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "folder to build the task folders into (default: a new temporary folder)")
	set := fs.String("set", "suite", "which tasks: suite (the embedded ten), unseen (held out from tuning; bench/unseen/) or tuning (tuned on beside the suite; bench/tuning/)")
	verify := fs.Bool("verify", false, "compare every file's SHA-256 with the recorded suite/SHA256SUMS; exit 1 on a difference")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		return exitStatus(stderr, usageErrorf("suite build: unexpected argument %q (%s)", fs.Arg(0), suiteUsage))
	}
	if *verify && *set != "suite" {
		return exitStatus(stderr, usageErrorf("suite build: --verify checks the suite's recorded checksums; it does not apply to --set %s", *set))
	}
	return exitStatus(stderr, suiteBuild(ctx, *set, *out, *verify, stdout, stderr))
}

func suiteBuild(ctx context.Context, set, out string, verify bool, stdout, stderr io.Writer) error {
	// Check the tools before making a folder, so a missing package leaves
	// nothing behind (and an unknown set is bad usage).
	if err := suite.CheckSetTools(ctx, set); err != nil {
		if suite.IsMissing(err) || !slices.Contains(suite.Sets(), set) {
			return errUsage{err}
		}
		return err
	}
	if out == "" {
		d, err := os.MkdirTemp("", "mlerl-suite-")
		if err != nil {
			return fmt.Errorf("suite build: %w", err)
		}
		out = d
	}
	if err := suite.BuildSet(ctx, set, out, stderr); err != nil {
		if suite.IsMissing(err) {
			return errUsage{err}
		}
		return err
	}
	fmt.Fprintf(stderr, "%s: built into %s\n", set, out)
	fmt.Fprintln(stdout, out)
	if !verify {
		return nil
	}
	diffs, err := suite.Verify(out)
	if err != nil {
		return fmt.Errorf("suite verify: %w", err)
	}
	for _, d := range diffs {
		fmt.Fprintf(stderr, "suite: %s\n", d)
	}
	if len(diffs) > 0 {
		return fmt.Errorf("suite verify: %d files differ from suite/SHA256SUMS", len(diffs))
	}
	fmt.Fprintln(stderr, "suite: every file matches suite/SHA256SUMS")
	return nil
}
