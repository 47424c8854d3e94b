package recipe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runResult is what running one rendered program gave.
type runResult struct {
	Duration time.Duration
	ExitCode int
	TimedOut bool
	Output   string // combined stdout and stderr
	Valid    bool
	Score    float64
	Error    string // grading error or the program's last error line
}

// runProgram runs code the way the sandbox will: cwd a fresh directory holding
// data/ (the task's public folder), Debian's python3, a time limit.
func runProgram(t testing.TB, p *Profile, code string, limit time.Duration) runResult {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(p.Task.PublicDir(), filepath.Join(dir, "data")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "solution.py"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "solution.py")
	cmd.Dir = dir
	// RECIPE_THREADS (default 2) lets a measurement run programs at one
	// thread each, as train does with two slots on two cores.
	threads := os.Getenv("RECIPE_THREADS")
	if threads == "" {
		threads = "2"
	}
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS="+threads, "OPENBLAS_NUM_THREADS="+threads, "PYTHONHASHSEED=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	res := runResult{Duration: time.Since(start), Output: out.String()}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		res.TimedOut, res.ExitCode, res.Error = true, -1, "timed out"
		return res
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
		res.Error = lastLine(res.Output)
		return res
	case err != nil:
		t.Fatalf("running %s: %v", python, err)
	}
	sub := filepath.Join(dir, "submission.csv")
	if _, err := os.Stat(sub); err != nil {
		res.Error = "no submission.csv"
		return res
	}
	answers, err := p.Task.Answers()
	if err != nil {
		t.Fatalf("answers of %s: %v", p.Name, err)
	}
	g := answers.GradeFile(sub)
	res.Valid, res.Error = g.Valid, g.Error
	if g.Score != nil {
		res.Score = *g.Score
	}
	return res
}

// lastLine is the Python exception line of a failed run ("ValueError: ..."),
// else the last line: native libraries (xgboost) print backtraces after it.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if exceptionLine.MatchString(lines[i]) {
			return strings.TrimSpace(lines[i])
		}
	}
	return strings.TrimSpace(lines[len(lines)-1])
}

var exceptionLine = regexp.MustCompile(`^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)\b:?`)

func (r runResult) String() string {
	if r.Valid {
		return fmt.Sprintf("score %.5f in %.1fs", r.Score, r.Duration.Seconds())
	}
	return fmt.Sprintf("invalid after %.1fs: %s", r.Duration.Seconds(), r.Error)
}
