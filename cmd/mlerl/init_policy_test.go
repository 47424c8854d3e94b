package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/rl/runfolder"
)

// A run started with --init-policy samples from the other run's learnt
// policy: frozen (--no-learn) every episode is from that run's last version,
// not 0, and run.json names the folder absolutely, so a resume from anywhere
// keeps it.
func TestTrainInitPolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sandboxed episodes for ~20 s")
	}
	taskDir := "../../policy/recipe/testdata/tiny-churn"
	first := filepath.Join(t.TempDir(), "first")
	var stderr bytes.Buffer
	// The drain lets the first run's programs finish after its budget, so it
	// completes a batch and updates however loaded the machine is.
	if code := run(context.Background(), []string{"train", "--task", taskDir, "--out", first,
		"--budget", "10s", "--drain", "30s", "--workers", "2", "--batch", "2", "--timeout", "30s"}, io.Discard, &stderr); code != 0 {
		t.Fatalf("first train exit %d:\n%s", code, stderr.String())
	}
	var st struct {
		Checkpoint struct {
			PolicyVersion int `json:"policy_version"`
		} `json:"checkpoint"`
	}
	b, err := os.ReadFile(filepath.Join(first, runfolder.CheckDir, "state.json"))
	if err != nil || json.Unmarshal(b, &st) != nil || st.Checkpoint.PolicyVersion < 1 {
		t.Fatalf("first run's checkpoint: version %d, %v\n%s", st.Checkpoint.PolicyVersion, err, stderr.String())
	}

	second := filepath.Join(t.TempDir(), "second")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, first) // given relative, kept absolute
	if err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run(context.Background(), []string{"train", "--task", taskDir, "--out", second, "--init-policy", rel,
		"--no-learn", "--budget", "6s", "--workers", "2", "--batch", "2", "--timeout", "30s"}, io.Discard, &stderr); code != 0 {
		t.Fatalf("second train exit %d:\n%s", code, stderr.String())
	}
	eps, _, err := runfolder.ReadJSONL[episodeLine](filepath.Join(second, "episodes.jsonl"))
	if err != nil || len(eps) == 0 {
		t.Fatalf("episodes: %d, %v", len(eps), err)
	}
	for _, e := range eps {
		if e.PolicyVersion != st.Checkpoint.PolicyVersion {
			t.Fatalf("episode %s from policy version %d, want the first run's %d", e.Episode, e.PolicyVersion, st.Checkpoint.PolicyVersion)
		}
	}
	var rc runConfig
	if b, err := os.ReadFile(filepath.Join(second, runConfigFile)); err != nil || json.Unmarshal(b, &rc) != nil || rc.InitPolicy != first {
		t.Errorf("run.json init_policy %q, want %q (%v)", rc.InitPolicy, first, err)
	}
	// Kept explicitly, so a resume continues with the charge the run began
	// with (a run.json from before the default had none: 0, as it ran).
	if rc.TimeCharge != rl.DefaultTimeCharge {
		t.Errorf("run.json time_charge %v, want the default %v", rc.TimeCharge, rl.DefaultTimeCharge)
	}
	if rc.Buffer != rl.DefaultBuffer {
		t.Errorf("run.json buffer %d, want the default %d", rc.Buffer, rl.DefaultBuffer)
	}
}
