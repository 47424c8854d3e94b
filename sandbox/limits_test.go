package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// survivors lists host processes whose command line holds tag.
func survivors(tag string) []int { return procsWith("cmdline", tag) }

// environHolders lists host processes whose environment holds tag. A run's
// environment reaches every process of the sandbox, the init shell included,
// from the moment bwrap starts it; a command line does not (it is bwrap's
// until the exec).
func environHolders(tag string) []int { return procsWith("environ", tag) }

// procsWith lists host processes other than this one whose /proc/PID/file
// holds tag.
func procsWith(file, tag string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), file))
		if err == nil && bytes.Contains(b, []byte(tag)) {
			out = append(out, pid)
		}
	}
	return out
}

func TestTimeoutKillsTree(t *testing.T) {
	cases := []struct {
		name string
		mode string
		// a program that exits on its own must not be reported as timed out
		wantTimeout bool
	}{
		{"never-ends", "", true},
		{"exits-leaving-daemons", "exit", false},
	}
	for _, sb := range tiers(t) {
		for _, c := range cases {
			t.Run(string(sb.Level())+"/"+c.name, func(t *testing.T) {
				tag := fmt.Sprintf("mlerl-survivor-%d", time.Now().UnixNano())
				res := mustRun(t, sb, Spec{Program: hostile(t, "timeout.py"),
					Env:    []string{"TAG=" + tag, "MODE=" + c.mode},
					Limits: Limits{Timeout: 3 * time.Second}})
				if !bytes.Contains(res.Output, []byte("children started")) {
					t.Fatalf("program did not start its children:\n%s", res.Output)
				}
				if res.TimedOut != c.wantTimeout {
					t.Errorf("timed out %v, want %v (exit %d)", res.TimedOut, c.wantTimeout, res.ExitCode)
				}
				if c.wantTimeout && (res.ExitCode != 137 || res.Signal != "SIGKILL") {
					t.Errorf("exit %d signal %q, want 137 SIGKILL", res.ExitCode, res.Signal)
				}
				if !c.wantTimeout && res.ExitCode != 0 {
					t.Errorf("exit %d, want 0", res.ExitCode)
				}
				// Run returns only after the tree is gone; allow the kernel a
				// moment to finish reaping, bounded.
				var left []int
				for range 50 {
					if left = survivors(tag); len(left) == 0 {
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
				if len(left) > 0 {
					for _, pid := range left {
						syscallKill(pid)
					}
					t.Errorf("processes survived the run: %v", left)
				}
			})
		}
	}
}

func TestCancelKillsRun(t *testing.T) {
	for _, sb := range tiers(t) {
		t.Run(string(sb.Level()), func(t *testing.T) {
			tag := fmt.Sprintf("mlerl-cancel-%d", time.Now().UnixNano())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errc := make(chan error, 1)
			go func() {
				_, err := sb.Run(ctx, Spec{Program: hostile(t, "timeout.py"), Env: []string{"TAG=" + tag},
					Limits: Limits{Timeout: time.Minute}})
				errc <- err
			}()
			// Cancel only once the program is running and has started both
			// of its tagged survivors (visible in the host's /proc): a cancel
			// that lands before Python starts would prove nothing.
			var err error
			deadline := time.Now().Add(45 * time.Second)
		wait:
			for {
				select {
				case err = <-errc:
					t.Fatalf("Run returned before cancellation: err %v", err)
				default:
				}
				if len(survivors(tag)) >= 2 {
					break wait
				}
				if time.Now().After(deadline) {
					cancel()
					<-errc
					t.Fatalf("the program's tagged children did not appear within 45 s")
				}
				time.Sleep(20 * time.Millisecond)
			}
			cancel()
			err = <-errc
			if err == nil || !strings.Contains(err.Error(), "cancel") {
				t.Errorf("Run after cancel: err %v, want a cancellation error", err)
			}
			time.Sleep(100 * time.Millisecond)
			if left := survivors(tag); len(left) > 0 {
				for _, pid := range left {
					syscallKill(pid)
				}
				t.Errorf("processes survived cancellation: %v", left)
			}
		})
	}
}

func TestMemoryLimit(t *testing.T) {
	for _, sb := range tiers(t) {
		t.Run(string(sb.Level()), func(t *testing.T) {
			res := mustRun(t, sb, Spec{Program: hostile(t, "memory.py"), Limits: Limits{MemoryBytes: 512 << 20}})
			if res.ExitCode == 0 {
				t.Fatalf("allocating 4 GiB under a 512 MiB limit succeeded:\n%s", tail(res.Output))
			}
			if !res.OOM {
				t.Errorf("OOM not reported; exit %d output:\n%s", res.ExitCode, tail(res.Output))
			}
			if bytes.Contains(res.Output, []byte("allocated 576 MiB")) {
				t.Errorf("allocated past the limit:\n%s", tail(res.Output))
			}
			if res.PeakMemoryBytes > 600<<20 {
				t.Errorf("peak memory %d above the 512 MiB limit", res.PeakMemoryBytes)
			}
		})
	}
}

// The reason for RLIMIT_DATA over RLIMIT_AS: numpy, OpenBLAS and xgboost
// threads reserve address space they never touch. A modest limit must still
// let a real training program with a thread pool run.
func TestMemoryLimitAllowsThreadedLibraries(t *testing.T) {
	if testing.Short() {
		t.Skip("imports sklearn and xgboost")
	}
	prog := `import numpy as np, xgboost as xgb
from sklearn.linear_model import LogisticRegression
X = np.random.RandomState(0).rand(2000, 20); y = (X[:, 0] > 0.5).astype(int)
LogisticRegression().fit(X, y)
xgb.XGBClassifier(n_estimators=20, n_jobs=4).fit(X, y)
print("trained")
`
	for _, sb := range tiers(t) {
		t.Run(string(sb.Level()), func(t *testing.T) {
			res := mustRun(t, sb, Spec{Program: []byte(prog), Limits: Limits{MemoryBytes: 1 << 30}})
			if res.ExitCode != 0 || !bytes.Contains(res.Output, []byte("trained")) {
				t.Errorf("exit %d under a 1 GiB limit:\n%s", res.ExitCode, tail(res.Output))
			}
		})
	}
}

func TestProcessLimit(t *testing.T) {
	re := regexp.MustCompile(`forked (\d+)`)
	for _, sb := range tiers(t) {
		t.Run(string(sb.Level()), func(t *testing.T) {
			res := mustRun(t, sb, Spec{Program: hostile(t, "forkbomb.py"), Limits: Limits{MaxProcs: 32, Timeout: 60 * time.Second}})
			m := re.FindSubmatch(res.Output)
			if m == nil {
				t.Fatalf("no fork count in output:\n%s", tail(res.Output))
			}
			n, _ := strconv.Atoi(string(m[1]))
			if n >= 32 || !bytes.Contains(res.Output, []byte("refused after")) {
				t.Errorf("forked %d processes under a limit of 32:\n%s", n, tail(res.Output))
			}
			if res.TimedOut {
				t.Error("the run waited for the sleeping children instead of ending with the program")
			}
		})
	}
}

func TestFileSizeLimit(t *testing.T) {
	const limit = 8 << 20
	for _, sb := range tiers(t) {
		t.Run(string(sb.Level()), func(t *testing.T) {
			res := mustRun(t, sb, Spec{Program: hostile(t, "filesize.py"), Collect: []string{"big.bin"},
				Limits: Limits{MaxFileBytes: limit}})
			if !bytes.Contains(res.Output, []byte("refused:")) {
				t.Errorf("64 MiB written under an 8 MiB limit:\n%s", tail(res.Output))
			}
			if b, ok := res.Files["big.bin"]; ok && len(b) > limit {
				t.Errorf("collected %d bytes, limit %d", len(b), limit)
			}
		})
	}
}

func TestOutputBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 1 GiB per tier")
	}
	for _, sb := range tiers(t) {
		t.Run(string(sb.Level()), func(t *testing.T) {
			res := mustRun(t, sb, Spec{Program: hostile(t, "output.py"), Limits: Limits{Timeout: 5 * time.Minute}})
			if res.ExitCode != 0 {
				t.Fatalf("exit %d:\n%s", res.ExitCode, tail(res.Output))
			}
			if len(res.Output) > 2*DefaultOutputBytes+200 {
				t.Errorf("output %d bytes, want at most head+tail", len(res.Output))
			}
			for _, want := range []string{"FIRST-LINE", "LAST-LINE", "bytes of output dropped"} {
				if !bytes.Contains(res.Output, []byte(want)) {
					t.Errorf("output lacks %q", want)
				}
			}
			if string(res.Markers) != "marker-after-flood\n" {
				t.Errorf("markers %q", res.Markers)
			}
		})
	}
}

func TestNoneNeedsAllowNone(t *testing.T) {
	if _, err := New(context.Background(), Config{Want: LevelNone, Root: newRoot(t)}); err == nil {
		t.Fatal("level none without AllowNone accepted")
	}
	sb, err := New(context.Background(), Config{Want: LevelNone, AllowNone: true, Root: newRoot(t)})
	if err != nil {
		t.Fatal(err)
	}
	res := mustRun(t, sb, Spec{Program: []byte("print('plain')")})
	if res.Isolation != LevelNone || strings.TrimSpace(string(res.Output)) != "plain" {
		t.Errorf("isolation %q output %q", res.Isolation, res.Output)
	}
	if _, err := New(context.Background(), Config{Want: "chroot"}); err == nil {
		t.Error("unknown level accepted")
	}
}

func TestBestLevelPicked(t *testing.T) {
	sb, err := New(context.Background(), Config{Root: newRoot(t)})
	if err != nil {
		t.Skipf("no tier here: %v", err)
	}
	if sb.Level() == LevelNone {
		t.Errorf("picked none without AllowNone")
	}
	if _, err := exec.LookPath("bwrap"); err == nil && sb.Level() != LevelBwrap {
		t.Errorf("bwrap installed and working, picked %s", sb.Level())
	}
}

func TestBadSpec(t *testing.T) {
	sb := tiers(t)[0]
	for _, name := range []string{"/etc/passwd", "../x", "a/../../x", "", "."} {
		if _, err := sb.Run(context.Background(), Spec{Program: []byte("pass"), Collect: []string{name}}); err == nil {
			t.Errorf("collect %q accepted", name)
		}
	}
	if _, err := sb.Run(context.Background(), Spec{Program: []byte("pass"), DataDir: "/nonexistent/public"}); err == nil {
		t.Error("missing data dir accepted")
	}
}

func syscallKill(pid int) { unix.Kill(pid, unix.SIGKILL) }

// Peak memory is the largest RSS of any process of the run, measured by the
// kernel for whoever reaps the program (not reported by the program), in
// every tier. Allocations touch every page ("x" * n), so they are resident.
func TestPeakMemory(t *testing.T) {
	const big = 300 << 20
	cases := []struct {
		name     string
		prog     string
		min, max int64
	}{
		{"trivial", "print('hi')", 1 << 20, 200 << 20},
		{"300MiB", "b = b'x' * (300 << 20)\nprint(len(b))", big, 1 << 30},
		// A child the program waits for: its RSS reaches the reaper through
		// the program's own rusage of its children.
		{"300MiB-in-child", "import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'b = b\"x\" * (300 << 20)'], check=True)\nprint('ok')", big, 1 << 30},
		// An orphan: the program exits while its child still holds the
		// memory; whoever adopts orphans (pid 1 under bwrap, the subreaper
		// supervisor elsewhere) must account for it.
		{"300MiB-in-orphan", "import os, sys, time\nr, w = os.pipe()\nif os.fork() == 0:\n    b = b'x' * (300 << 20)\n    os.write(w, b'.')\n    time.sleep(0.3)\n    os._exit(0)\nos.read(r, 1)\nprint('ok')", big, 1 << 30},
	}
	for _, sb := range tiers(t) {
		for _, c := range cases {
			t.Run(string(sb.Level())+"/"+c.name, func(t *testing.T) {
				res := mustRun(t, sb, Spec{Program: []byte(c.prog), Limits: Limits{Timeout: time.Minute}})
				if res.ExitCode != 0 {
					t.Fatalf("exit %d:\n%s", res.ExitCode, tail(res.Output))
				}
				if res.PeakMemoryBytes < c.min || res.PeakMemoryBytes > c.max {
					t.Errorf("peak memory %d MiB, want within [%d, %d] MiB", res.PeakMemoryBytes>>20, c.min>>20, c.max>>20)
				}
			})
		}
	}
}

// A run's peak memory is the program's, not the peak RSS the process that
// started it once had (the kernel hands a vforked child its parent's peak;
// bwrap is started so). Here this process first touches 300 MiB and frees it.
func TestPeakMemoryExcludesStartersPast(t *testing.T) {
	if raceEnabled {
		// Freed memory stays resident under the race detector: this
		// process would keep the 300 MiB and inflate every later run.
		t.Skip("not under -race")
	}
	sb := tiers(t)[0]
	if sb.Level() != LevelBwrap {
		t.Skip("the bwrap tier is the one started directly from this process")
	}
	big := make([]byte, 300<<20)
	for i := 0; i < len(big); i += 4096 {
		big[i] = 1
	}
	big = nil
	debug.FreeOSMemory()
	res := mustRun(t, sb, Spec{Program: []byte("print('hi')"), Limits: Limits{Timeout: 30 * time.Second}})
	if res.PeakMemoryBytes > 250<<20 {
		t.Errorf("peak memory %d MiB for a trivial program after this process held 300 MiB", res.PeakMemoryBytes>>20)
	}
}

// A run cancelled at any point of its start-up leaves nothing behind. bwrap's
// --die-with-parent is set by the sandbox's pid 1 only once bwrap has built
// the mounts: killing bwrap before that orphaned the namespace, whose
// program then ran on outside every limit (measured: 52 of 300 bwraps killed
// in their first 3 ms left one). The cancels here are spread over the first
// 40 ms, where bwrap builds the sandbox and Python starts.
func TestCancelDuringStartLeavesNothing(t *testing.T) {
	n := 40
	if testing.Short() {
		n = 15
	}
	for _, sb := range tiers(t) {
		t.Run(string(sb.Level()), func(t *testing.T) {
			tag := fmt.Sprintf("MLERL_EARLY=%d", time.Now().UnixNano())
			for i := range n {
				ctx, cancel := context.WithCancel(context.Background())
				delay := time.Duration(i) * 40 * time.Millisecond / time.Duration(n)
				timer := time.AfterFunc(delay, cancel)
				res, err := sb.Run(ctx, Spec{Program: []byte("import time\ntime.sleep(60)\n"), Env: []string{tag},
					Limits: Limits{Timeout: time.Minute}})
				timer.Stop()
				cancel()
				if err == nil {
					t.Fatalf("cancel after %v: Run returned no error (exit %d):\n%s", delay, res.ExitCode, res.Output)
				}
			}
			var left []int
			for range 50 {
				if left = environHolders(tag); len(left) == 0 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if len(left) > 0 {
				for _, pid := range left {
					syscallKill(pid)
				}
				t.Errorf("%d processes outlived runs cancelled during start-up: %v", len(left), left)
			}
		})
	}
}
