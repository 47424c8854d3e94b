package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mlerl/mlerl/ui"
)

// runUI is `mlerl ui [--listen ADDR] DIR...`: the live web view of run
// folders (several are overlaid on one time axis).
func runUI(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ui", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("listen", ui.DefaultAddr, "address to serve on (loopback by default; 0.0.0.0:PORT exposes the runs to the network)")
	// Flags may come before or after the folders.
	var dirs []string
	for {
		if err := fs.Parse(args); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		dirs = append(dirs, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(dirs) == 0 {
		return exitStatus(stderr, usageErrorf("ui: give one or more run folders"))
	}
	for _, d := range dirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return exitStatus(stderr, usageErrorf("ui: %s is not a run folder", d))
		}
	}
	url, done, err := startUI(ctx, *addr, dirs...)
	if err != nil {
		return exitStatus(stderr, usageErrorf("%v", err))
	}
	fmt.Fprintf(stderr, "mlerl: ui of %d run folder(s) at %s (Ctrl-C stops it)\n", len(dirs), url)
	return exitStatus(stderr, <-done)
}

// startUI serves the live view of dirs on addr until ctx ends.
func startUI(ctx context.Context, addr string, dirs ...string) (string, <-chan error, error) {
	s := ui.New(dirs, ui.Options{LoadTask: loadTask})
	return s.Start(ctx, addr)
}
