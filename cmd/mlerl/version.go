package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// runVersion is `mlerl version`: the commit the binary was built from, so a
// result file or a run folder can say which code made it.
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		return exitStatus(stderr, usageErrorf("version: unexpected argument %q", args[0]))
	}
	fmt.Fprintf(stdout, "mlerl %s (%s)\n", revision(), runtime.Version())
	return 0
}

// commit is set by `make build` (-ldflags -X main.commit=...): the Go
// toolchain's own stamp is often turned off (GOFLAGS=-buildvcs=false, or a
// checkout owned by another user, where stamping would fail the build).
var commit string

// revision names the commit this binary was built from: make's stamp, else
// the toolchain's (see revisionOf).
func revision() string {
	if commit != "" {
		return commit
	}
	bi, _ := debug.ReadBuildInfo()
	return revisionOf(bi)
}

// revisionOf is the build's commit, shortened to 12 digits, with
// "+modified" when the work tree had uncommitted changes: such a binary is
// not that commit. "unknown" when the build did not record one (go test,
// go build -buildvcs=false, or a build outside a git checkout).
func revisionOf(bi *debug.BuildInfo) string {
	if bi == nil {
		return "unknown"
	}
	rev, modified := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	rev = rev[:min(12, len(rev))]
	if modified {
		rev += "+modified"
	}
	return rev
}
