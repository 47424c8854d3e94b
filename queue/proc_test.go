package queue

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/instrument"
	"github.com/mlerl/mlerl/sandbox"
)

// The process tests re-execute this test binary as a worker: the real
// sandbox, the AST instrumenter, the task files through the object store
// and a NATS connection over loopback, in a process that can be SIGKILLed.
const (
	workerEnv       = "MLERL_QUEUE_TEST_WORKER" // NATS URL
	workerSlotsEnv  = "MLERL_QUEUE_TEST_SLOTS"
	workerRepeatEnv = "MLERL_QUEUE_TEST_REPEAT"
	workerCacheEnv  = "MLERL_QUEUE_TEST_CACHE"
)

func workerMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	slots, _ := strconv.Atoi(os.Getenv(workerSlotsEnv))
	repeat, _ := strconv.Atoi(os.Getenv(workerRepeatEnv))
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	sb, err := sandbox.New(ctx, sandbox.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	runner := &episode.Runner{Sandbox: sb, Instrumenter: instrument.NewAST(""),
		Max: episode.Settings{Timeout: time.Minute}}
	b, err := Dial(ctx, os.Getenv(workerEnv), DialConfig{GiveUp: time.Minute, Log: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	defer b.Close()
	var mu sync.Mutex
	w := &Worker{Exec: runner, Slots: max(slots, 1), Repeat: repeat, Data: NewCachedData(b, os.Getenv(workerCacheEnv)), Log: log,
		Started: func(id string, attempt uint64) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Printf("started %s %d\n", id, attempt)
		}}
	if err := w.Run(ctx, b); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	return 0
}

// proc is a worker process and the "started" lines it prints.
type proc struct {
	cmd     *exec.Cmd
	started chan string
	done    chan struct{}
}

func startProc(t testing.TB, url string, slots, repeat int) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnv+"="+url, workerSlotsEnv+"="+strconv.Itoa(slots),
		workerRepeatEnv+"="+strconv.Itoa(repeat), workerCacheEnv+"="+t.TempDir())
	cmd.Stderr = testWriter{t}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, started: make(chan string, 100), done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.started <- strings.TrimPrefix(sc.Text(), "started ")
		}
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *proc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
}

// waitStarted waits for the worker to report it started episode id.
func (p *proc) waitStarted(t *testing.T, want string) {
	t.Helper()
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case s := <-p.started:
			if s == want {
				return
			}
		case <-p.done:
			t.Fatalf("worker exited before starting %s", want)
		case <-timeout:
			t.Fatalf("worker never started %s", want)
		}
	}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Logf("child: %s", strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

var _ io.Writer = testWriter{}

// writes a perfect submission after sleeping s seconds
func program(sleep float64) string {
	return fmt.Sprintf(`import time
time.sleep(%g)
with open("data/test.csv") as f:
    ids = [line.split(",")[0] for line in f.read().split()[1:]]
score = {"b1": 0.1, "b2": 0.9, "b3": 0.8, "b4": 0.2}
with open("submission.csv", "w") as f:
    f.write("id,label\n" + "".join(i + "," + str(score[i]) + "\n" for i in ids))
`, sleep)
}

// A worker SIGKILLed in the middle of a job stops heartbeating; JetStream
// redelivers the job after AckWait to another worker, where it completes.
// Every job completes exactly once.
func TestWorkerKilledMidJobIsRedelivered(t *testing.T) {
	p := fixture(t)
	b := inProcess(t, "127.0.0.1:0", SetupConfig{AckWait: time.Second})
	e := newEnv(t, b, p)

	a := startProc(t, b.URL(), 1, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := e.WaitSlots(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	// Long enough that the kill lands while it runs: the kill follows the
	// worker's "started" line, and nothing else is waited for.
	submit(t, e, job("k-long", program(3)))
	a.waitStarted(t, "k-long 1")
	a.kill(t)

	c := startProc(t, b.URL(), 2, 0)
	for i := range 3 {
		submit(t, e, job(fmt.Sprintf("k-%d", i), program(0)))
	}
	got := collect(t, e, 4)
	for id, r := range got {
		if !r.Valid || r.Score == nil || *r.Score != 1 || r.Isolation == "" {
			t.Errorf("%s: %+v", id, r)
		}
	}
	c.waitStarted(t, "k-long 2") // the second delivery ran on the survivor
	s := e.Stats()
	if s.Accepted != 4 || s.Redelivered != 1 || s.RedeliveredAttempts != 1 || s.Duplicates != 0 || e.Pending() != 0 {
		t.Errorf("stats %+v, pending %d: want 4 accepted, 1 redelivered once, no duplicates", s, e.Pending())
	}
}

// A worker process that publishes each result twice: recorded once.
func TestWorkerProcessDuplicateResults(t *testing.T) {
	p := fixture(t)
	b := inProcess(t, "127.0.0.1:0", SetupConfig{})
	e := newEnv(t, b, p)
	startProc(t, b.URL(), 2, 1)
	const n = 4
	for i := range n {
		submit(t, e, job(fmt.Sprintf("dup-%d", i), program(0)))
	}
	got := collect(t, e, n)
	if len(got) != n {
		t.Fatalf("%d results", len(got))
	}
	waitFor(t, func() bool { return e.Stats().Duplicates == n }, func() string { return fmt.Sprintf("%+v", e.Stats()) })
	if s := e.Stats(); s.Accepted != n || s.Results != 2*n {
		t.Errorf("stats %+v", s)
	}
}

// A job carries the run's settings to a worker process whose own ceiling
// (one minute, as a worker started with a longer --timeout than the run's)
// is higher: the program is still stopped at the run's limit. A job asking
// for more than the worker allows gets the worker's ceiling instead.
func TestWorkerHonoursTheRunsLimits(t *testing.T) {
	p := fixture(t)
	b := inProcess(t, "127.0.0.1:0", SetupConfig{})
	e := newEnv(t, b, p)
	startProc(t, b.URL(), 2, 0)
	short := job("short", program(50))
	short.Settings = episode.Settings{Timeout: 2 * time.Second, Instrument: "ast", Threads: 1}
	long := job("long", program(0))
	long.Settings = episode.Settings{Timeout: time.Hour, Instrument: "none"}
	submit(t, e, short, long)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got := map[string]episode.Execution{}
	for len(got) < 2 {
		ex, err := e.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got[ex.Episode] = ex
	}
	s := got["short"]
	if !s.TimedOut || s.DurationS >= 30 || s.Settings.Timeout != 2*time.Second || s.Settings.Threads != 1 {
		t.Errorf("short: timed out %v after %.1fs under %+v; want the run's 2s limit", s.TimedOut, s.DurationS, s.Settings)
	}
	l := got["long"]
	if l.TimedOut || !l.Wrote || l.Settings.Timeout != time.Minute || l.Settings.Instrument != "none" || l.Instrumentation != "none" {
		t.Errorf("long: %+v; want the worker's 1m ceiling and no instrumentation", l)
	}
}
