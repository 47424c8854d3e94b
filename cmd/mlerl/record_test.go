package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlerl/mlerl/rl/replay"
)

// TestRecordReplay records a replay table from real sandboxed executions of
// recipe plans on a tiny fixture, then continues it with one more repeat, and
// checks the rows: keys are the plans' "# plan:" keys, notes their names, and
// the outcomes those of the real runs (the fixture's fast-linear ridge plan,
// which failed for real until 2026-12-06 because RidgeClassifier has no
// predict_proba, now submits its decision scores: AUC needs only their order).
func TestRecordReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six real programs in the sandbox")
	}
	out := filepath.Join(t.TempDir(), "tiny.jsonl")
	taskDir := "../../policy/recipe/testdata/tiny-churn"
	args := []string{"bench", "record-replay", "--task", taskDir, "--out", out, "--plans", "3", "--repeats", "1", "--timeout", "2m"}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout should be empty, got %q", stdout.String())
	}
	for _, want := range []string{"[1/3] default (repeat 1)", "[2/3] fast linear (logistic) (repeat 1)", "[3/3] fast linear (ridge) (repeat 1)", "recorded 3 executions"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr.String())
		}
	}
	// Continue: --repeats 2 runs each plan once more and skips what is there.
	stderr.Reset()
	args[len(args)-3] = "2"
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("continue: exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "recorded 3 executions") || !strings.Contains(stderr.String(), "skipped 3 already") {
		t.Errorf("continue:\n%s", stderr.String())
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), "// Replay table of task tiny-churn") || strings.Count(string(raw), "// Replay table") != 1 {
		t.Errorf("want one header at the top:\n%s", raw)
	}
	tb, err := replay.LoadTable(out)
	if err != nil {
		t.Fatal(err)
	}
	if tb.Task() != "tiny-churn" || len(tb.Keys()) != 3 {
		t.Fatalf("task %q, keys %v", tb.Task(), tb.Keys())
	}
	notes := []string{"default", "fast linear (logistic)", "fast linear (ridge)"}
	for i, k := range tb.Keys() {
		rows := tb.Rows(k)
		if len(rows) != 2 {
			t.Fatalf("%s: %d rows, want 2", k, len(rows))
		}
		if !strings.Contains(k, "model.family=") || strings.HasPrefix(k, "sha256:") {
			t.Errorf("key %q is not a recipe plan key", k)
		}
		for _, r := range rows {
			if r.Note != notes[i] || r.Task != "tiny-churn" || r.DurationS <= 0 || r.Isolation == "" || r.Instrumentation != "ast" {
				t.Errorf("%s: row %+v", notes[i], r)
			}
			if !r.Valid || r.Score == nil || *r.Score < 0.6 || r.Reward != *r.Score || len(r.Stages) < 5 {
				t.Errorf("%s should be valid with AUC > 0.6 and its stages: %+v", notes[i], r)
			}
		}
	}
	// A table of another task is refused.
	stderr.Reset()
	other := []string{"bench", "record-replay", "--task", "../../policy/recipe/testdata/tiny-digits", "--out", out, "--plans", "1"}
	if code := run(context.Background(), other, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "holds rows of task tiny-churn") {
		t.Errorf("other task: exit %d\n%s", code, stderr.String())
	}
}
