package episode

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mlerl/mlerl/sandbox"
)

func TestThreadsPerProgram(t *testing.T) {
	for _, tc := range []struct{ cores, slots, want int }{
		{2, 2, 1}, {2, 1, 2}, {8, 3, 2}, {2, 8, 1}, {4, 0, 4},
	} {
		if got := ThreadsPerProgram(tc.cores, tc.slots); got != tc.want {
			t.Errorf("ThreadsPerProgram(%d, %d) = %d, want %d", tc.cores, tc.slots, got, tc.want)
		}
	}
}

// A runner's Threads reaches the sandboxed program's OpenMP and BLAS
// variables; without it the sandbox's default of 2 stands.
func TestRunnerThreadsReachProgram(t *testing.T) {
	sb, err := sandbox.New(context.Background(), sandbox.Config{})
	if err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	code := `import os; print("threads", os.environ["OMP_NUM_THREADS"], os.environ["OPENBLAS_NUM_THREADS"], os.environ["MKL_NUM_THREADS"])`
	for _, tc := range []struct {
		threads int
		want    string
	}{{1, "threads 1 1 1"}, {0, "threads 2 2 2"}, {3, "threads 3 3 3"}} {
		r := &Runner{Sandbox: sb, Max: Settings{Threads: tc.threads, Timeout: time.Minute}}
		ex, err := r.Execute(context.Background(), t.TempDir(), Job{ID: "e", Code: code})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(ex.Output, tc.want) {
			t.Errorf("Threads %d: output %q, want %q", tc.threads, ex.Output, tc.want)
		}
	}
}
