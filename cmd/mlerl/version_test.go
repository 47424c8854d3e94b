package main

import (
	"context"
	"runtime/debug"
	"strings"
	"testing"
)

// The revision comes from the build's VCS stamp, marked when the tree had
// changes, and is "unknown" rather than empty or made up without one.
func TestRevisionOf(t *testing.T) {
	stamp := func(kv ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{GoVersion: "go1.26"}
		for i := 0; i < len(kv); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return bi
	}
	for _, tc := range []struct {
		bi   *debug.BuildInfo
		want string
	}{
		{nil, "unknown"},
		{stamp(), "unknown"},
		{stamp("vcs.revision", "0bd015a1234567890abcdef", "vcs.modified", "false"), "0bd015a12345"},
		{stamp("vcs.revision", "0bd015a1234567890abcdef", "vcs.modified", "true"), "0bd015a12345+modified"},
		{stamp("vcs.revision", "abc"), "abc"},
	} {
		if got := revisionOf(tc.bi); got != tc.want {
			t.Errorf("revisionOf(%v) = %q, want %q", tc.bi, got, tc.want)
		}
	}
	var stdout, stderr strings.Builder
	if code := run(context.Background(), []string{"version"}, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "mlerl ") {
		t.Errorf("version: exit %d, %q %q", code, stdout.String(), stderr.String())
	}
	if code := run(context.Background(), []string{"version", "x"}, &stdout, &stderr); code != 2 {
		t.Errorf("version x: exit %d, want 2", code)
	}
}
