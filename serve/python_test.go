package serve

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The Python client's tests against a real server: each trainer adapter is
// called as its trainer calls it, and Python's duration weights are checked
// against the server's (rl.DurationWeights).
func TestPythonClient(t *testing.T) {
	const python = "/usr/bin/python3" // Debian's, as the contract's programs use
	if _, err := os.Stat(python); err != nil {
		t.Skipf("no %s: %v", python, err)
	}
	h := start(t, t.TempDir(), "py-token", 20*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir, err := filepath.Abs(filepath.Join("..", "python"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, python, "-m", "unittest", "-v", "test_mlerl_client")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MLERL_URL="+h.http.URL, "MLERL_SERVE_TOKEN=py-token", "MLERL_TEST_TASK=tiny-auc",
		"PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	t.Logf("python tests:\n%s", out)
	if err != nil {
		t.Fatalf("python tests failed: %v", err)
	}
}
