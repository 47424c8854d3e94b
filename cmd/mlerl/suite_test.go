package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Bad --set and --threads values are bad usage (exit 2) with a one-line
// error, before anything is built or run.
func TestSuiteSetAndExecThreadsUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"suite", "build", "--set", "nope"}, `unknown task set "nope"`},
		{[]string{"suite", "build", "--set", "unseen", "--verify"}, "--verify checks the suite's recorded checksums"},
		{[]string{"exec", "--task", "telco-churn", "--code", "x.py", "--threads", "-1"}, "--threads must not be negative"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), tc.args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", tc.args, code, errb.String())
		}
		if !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: stderr %q does not say %q", tc.args, errb.String(), tc.want)
		}
	}
}
