package recipe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mlerl/mlerl/task"
)

// priorRun is one line of TestPriorFailures' log.
type priorRun struct {
	Task      string  `json:"task"`
	Index     int     `json:"index"`
	Plan      string  `json:"plan"`
	Valid     bool    `json:"valid"`
	TimedOut  bool    `json:"timed_out"`
	DurationS float64 `json:"duration_s"`
	Score     float64 `json:"score"`
	Error     string  `json:"error,omitempty"`
}

// TestPriorFailures measures how often the untrained policy's own samples
// fail: per task folder in RECIPE_PRIOR_TASKS (comma-separated), it samples
// RECIPE_PRIOR_N (default 20) scratch programs from a fresh policy (seed
// RECIPE_PRIOR_SEED, default 1) and runs each once with RECIPE_PRIOR_TIMEOUT
// (default 60s) and RECIPE_THREADS threads, RECIPE_PRIOR_PARALLEL (default 2)
// at a time, appending one JSON line per program to RECIPE_PRIOR_OUT. It
// fails nothing: the rate is a measurement (bench/prior-failures.md).
func TestPriorFailures(t *testing.T) {
	dirs := os.Getenv("RECIPE_PRIOR_TASKS")
	if testing.Short() || dirs == "" {
		t.Skip("measurement: set RECIPE_PRIOR_TASKS to task folders")
	}
	n := envInt("RECIPE_PRIOR_N", 20)
	parallel := envInt("RECIPE_PRIOR_PARALLEL", 2)
	limit := 60 * time.Second
	if v, err := time.ParseDuration(os.Getenv("RECIPE_PRIOR_TIMEOUT")); err == nil {
		limit = v
	}
	out, err := os.OpenFile(os.Getenv("RECIPE_PRIOR_OUT"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	for _, dir := range strings.Split(dirs, ",") {
		tk, err := task.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		runs := samplePrior(t, tk, n, uint64(envInt("RECIPE_PRIOR_SEED", 1)), limit, parallel)
		bad := 0
		for _, r := range runs {
			line, _ := json.Marshal(r)
			out.Write(append(line, '\n'))
			if !r.Valid {
				bad++
			}
		}
		t.Logf("%s: %d/%d invalid", filepath.Base(dir), bad, len(runs))
	}
}

// samplePrior samples n programs for tk from a fresh policy and runs them.
func samplePrior(t *testing.T, tk *task.Task, n int, seed uint64, limit time.Duration, parallel int) []priorRun {
	pol, err := NewPolicy([]*task.Task{tk}, seed)
	if err != nil {
		t.Fatal(err)
	}
	pol.SetTimeLimit(limit) // as train and bench tell it their --timeout
	prof, err := NewProfile(tk)
	if err != nil {
		t.Fatal(err)
	}
	acts := sampleScratch(t, pol, tk, n)
	runs := make([]priorRun, len(acts))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, a := range acts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			key, _, _ := strings.Cut(strings.TrimPrefix(a.Code, "# plan: "), "\n")
			r := runProgram(t, prof, a.Code, limit)
			runs[i] = priorRun{Task: tk.Name, Index: i, Plan: key, Valid: r.Valid, TimedOut: r.TimedOut,
				DurationS: r.Duration.Seconds(), Score: r.Score, Error: r.Error}
		}()
	}
	wg.Wait()
	return runs
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}
