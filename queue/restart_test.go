package queue

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// The restart tests run a real nats-server in its own process (this test
// binary re-executed, like the worker processes) so that it can be
// SIGKILLed mid-run and started again on the same file store and port, as
// an operator's external server would be.
const (
	serverEnv      = "MLERL_QUEUE_TEST_SERVER" // JetStream store dir
	serverListenEv = "MLERL_QUEUE_TEST_SERVER_LISTEN"
)

// serverMain runs a standalone NATS server with JetStream on file storage
// until it is signalled; it prints "ready" once clients may connect.
func serverMain() int {
	host, port, err := net.SplitHostPort(os.Getenv(serverListenEv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		return 1
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		fmt.Fprintln(os.Stderr, "server: port:", err)
		return 1
	}
	srv, err := server.NewServer(&server.Options{
		ServerName: "mlerl-test-external", JetStream: true, StoreDir: os.Getenv(serverEnv),
		Host: host, Port: p, NoSigs: true, NoLog: true,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		return 1
	}
	go srv.Start()
	if !srv.ReadyForConnections(time.Minute) {
		fmt.Fprintln(os.Stderr, "server: not ready after a minute")
		return 1
	}
	fmt.Println("ready")
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	<-ctx.Done()
	srv.Shutdown()
	srv.WaitForShutdown()
	return 0
}

// natsProc is an external NATS server process on a fixed store and address.
type natsProc struct {
	store, addr string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// startNATS starts a server on addr with its JetStream files under store,
// and stops whatever instance is running when the test ends.
func startNATS(t *testing.T, store, addr string) *natsProc {
	t.Helper()
	n := &natsProc{store: store, addr: addr}
	n.start(t)
	t.Cleanup(func() {
		n.mu.Lock()
		cmd, done := n.cmd, n.done
		n.mu.Unlock()
		if cmd == nil {
			return
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return n
}

func (n *natsProc) url() string { return "nats://" + n.addr }

// start runs the server and returns once it accepts connections.
func (n *natsProc) start(t *testing.T) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverEnv+"="+n.store, serverListenEv+"="+n.addr)
	cmd.Stderr = testWriter{t}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "ready" {
				close(ready)
			}
		}
		_ = cmd.Wait()
		close(done)
	}()
	select {
	case <-ready:
	case <-done:
		t.Fatalf("NATS server on %s exited before it was ready", n.addr)
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("NATS server on %s not ready after a minute", n.addr)
	}
	n.mu.Lock()
	n.cmd, n.done = cmd, done
	n.mu.Unlock()
}

// kill SIGKILLs the server: no shutdown, no flush beyond what the kernel has.
func (n *natsProc) kill(t *testing.T) {
	t.Helper()
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.cmd = nil
	n.mu.Unlock()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
}

// The external server SIGKILLed while jobs run and restarted on the same
// store and port. Worker A dies during the outage with two jobs in flight
// (a machine lost with the broker); worker B lives through it with jobs in
// flight too. The trainer and B reconnect on their own; A's jobs, still in
// the file store as delivered and unacked, are redelivered to B; B's own
// jobs finish where they run (its heartbeats resume before AckWait lapses),
// or, when the restarted server lost their acks' state, run again and the
// second result is dropped as a duplicate; jobs submitted during the outage
// are published once the server is back. Every job yields exactly one
// accepted result.
func TestBrokerRestartLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a NATS server and two worker processes for about half a minute")
	}
	srv := startNATS(t, t.TempDir(), freePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, e := externalEnv(ctx, t, srv.url())

	// A alone takes the first two jobs, B (started once A is busy) the next four.
	a := startProc(t, srv.url(), 2, 0)
	if err := e.WaitSlots(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	submit(t, e, job("r-0", program(10)), job("r-1", program(10)))
	a.waitStartedAll(t, "r-0 1", "r-1 1")
	bw := startProc(t, srv.url(), 2, 0)
	if err := e.WaitSlots(ctx, 4, nil); err != nil {
		t.Fatal(err)
	}
	const before, during = 6, 3
	for i := 2; i < before; i++ {
		submit(t, e, job(fmt.Sprintf("r-%d", i), program(3)))
	}
	bw.waitStarted(t, "r-2 1")

	killed := time.Now()
	srv.kill(t)
	a.kill(t)
	restarted, reconnect := outage(ctx, t, srv, b, e, before, during)

	const n = before + during
	got := collect(t, e, n)
	allBack := time.Since(killed)
	for id, r := range got {
		if !r.Valid || r.Score == nil || *r.Score != 1 {
			t.Errorf("%s: %+v", id, r)
		}
	}
	// A second result of a job redelivered while its first run went on
	// would come after the first was accepted: wait until the broker holds
	// no job and no result, so that late ones are counted before the checks.
	waitFor(t, func() bool { return drained(ctx, b) }, func() string { return fmt.Sprintf("%+v", e.Stats()) })
	var runs []string
	for len(bw.started) > 0 {
		runs = append(runs, <-bw.started)
	}
	s := e.Stats()
	t.Logf("%d jobs; server down %v; trainer reconnected %v after the restart (%d reconnects); all results %v after the kill; B ran %q; stats %+v",
		n, restarted.Sub(killed).Round(time.Millisecond), reconnect.Round(time.Millisecond), b.nc.Stats().Reconnects,
		allBack.Round(time.Millisecond), runs, s)
	if s.Accepted != n || e.Pending() != 0 || s.Published != n || s.Stale != 0 || s.Bad != 0 || s.Exhausted != 0 || s.StateLost != 0 {
		t.Errorf("stats %+v, pending %d: want %d accepted and published, nothing stale, bad or exhausted, the store kept", s, e.Pending(), n)
	}
	if s.Results != s.Accepted+s.Duplicates {
		t.Errorf("stats %+v: every result must be accepted or dropped as a duplicate", s)
	}
	// A's two jobs must come back to B, which had none of them before the
	// kill. Not by their attempt number: a SIGKILLed server can restart
	// without the delivery counts of its last moments (in one CI run r-1
	// came back as attempt 1, r-0 as attempt 2), so Redelivered, which
	// counts attempts above 1, may be short.
	ranOnB := func(id string) bool {
		return slices.ContainsFunc(runs, func(r string) bool { return strings.HasPrefix(r, id+" ") })
	}
	if !ranOnB("r-0") || !ranOnB("r-1") {
		t.Errorf("stats %+v, B ran %q: A's two jobs must be redelivered to B", s, runs)
	}
}

// externalEnv is the trainer's side of the queue on the external server at url.
func externalEnv(ctx context.Context, t *testing.T, url string) (*Broker, *Env) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	b, err := Dial(ctx, url, DialConfig{Name: "test-trainer", GiveUp: 30 * time.Second, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	if err := b.Setup(ctx, SetupConfig{AckWait: 2 * time.Second, Fresh: true}); err != nil {
		t.Fatal(err)
	}
	cfg := config(fixture(t))
	cfg.Log = log
	e, err := NewEnv(ctx, b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return b, e
}

// outage submits jobs before..before+during-1 while the (killed) server is
// down, restarts it, and returns when the trainer has reconnected and the
// submissions went through: when the server restarted, and how long the
// trainer took to reconnect.
func outage(ctx context.Context, t *testing.T, srv *natsProc, b *Broker, e *Env, before, during int) (time.Time, time.Duration) {
	t.Helper()
	// Submitted while the server is down: Submit's retries carry them over.
	var submitted sync.WaitGroup
	var submitErr error
	submitted.Go(func() {
		for i := range during {
			if err := e.Submit(ctx, job(fmt.Sprintf("r-%d", before+i), program(0))); err != nil {
				submitErr = err
				return
			}
		}
	})
	time.Sleep(1500 * time.Millisecond)
	srv.start(t)
	restarted := time.Now()
	for !b.nc.IsConnected() {
		if time.Since(restarted) > time.Minute {
			t.Fatal("trainer not reconnected a minute after the restart")
		}
		time.Sleep(10 * time.Millisecond)
	}
	reconnect := time.Since(restarted)
	submitted.Wait()
	if submitErr != nil {
		t.Fatalf("submitting during the outage: %v", submitErr)
	}
	return restarted, reconnect
}

// drained says whether the broker holds no job and no result, delivered or not.
func drained(ctx context.Context, b *Broker) bool {
	for _, sc := range [][2]string{{b.n.jobsStream, workersConsumer}, {b.n.resultsStream, trainerConsumer}} {
		c, err := b.js.Consumer(ctx, sc[0], sc[1])
		if err != nil {
			return false
		}
		ci, err := c.Info(ctx)
		if err != nil || ci.NumPending != 0 || ci.NumAckPending != 0 {
			return false
		}
	}
	return true
}

// The server SIGKILLed and replaced by one with an empty store on the same
// port (a disk lost, a container recreated): the streams, the jobs in them
// and the stored results are gone. The trainer notices on reconnecting, lays
// the broker out again, re-publishes the task files and re-sends the jobs
// in flight; the worker, still connected by address, serves them. Every job
// completes exactly once.
func TestBrokerStateLostIsRebuilt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a NATS server and a worker process for about 20 s")
	}
	p := fixture(t)
	srv := startNATS(t, t.TempDir(), freePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	b, err := Dial(ctx, srv.url(), DialConfig{Name: "test-trainer", GiveUp: 30 * time.Second, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	if err := b.Setup(ctx, SetupConfig{AckWait: 2 * time.Second, Fresh: true}); err != nil {
		t.Fatal(err)
	}
	cfg := config(p)
	cfg.Log = log
	e, err := NewEnv(ctx, b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	w := startProc(t, srv.url(), 2, 0)
	if err := e.WaitSlots(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	const n = 5
	for i := range n {
		submit(t, e, job(fmt.Sprintf("s-%d", i), program(3)))
	}
	w.waitStarted(t, "s-0 1")
	killed := time.Now()
	srv.kill(t)
	srv.store = t.TempDir()
	srv.start(t)
	restarted := time.Now()

	got := collect(t, e, n)
	allBack := time.Since(killed)
	for id, r := range got {
		if !r.Valid || r.Score == nil || *r.Score != 1 {
			t.Errorf("%s: %+v", id, r)
		}
	}
	waitFor(t, func() bool { return drained(ctx, b) }, func() string { return fmt.Sprintf("%+v", e.Stats()) })
	var runs []string
	for len(w.started) > 0 {
		runs = append(runs, <-w.started)
	}
	s := e.Stats()
	t.Logf("%d jobs; server down %v; all results %v after the kill; worker ran %q; stats %+v",
		n, restarted.Sub(killed).Round(time.Millisecond), allBack.Round(time.Millisecond), runs, s)
	if s.Accepted != n || e.Pending() != 0 || s.StateLost != 1 || s.Resent < 1 || s.Published != n+s.Resent || s.Stale != 0 || s.Bad != 0 {
		t.Errorf("stats %+v, pending %d: want %d accepted, the state loss seen once and the jobs in flight re-sent", s, e.Pending(), n)
	}
	if s.Results != s.Accepted+s.Duplicates {
		t.Errorf("stats %+v: every result must be accepted or dropped as a duplicate", s)
	}
}

// waitStartedAll waits for the worker to report it started every one of
// want, in whatever order its slots got to them.
func (p *proc) waitStartedAll(t *testing.T, want ...string) {
	t.Helper()
	left := map[string]bool{}
	for _, w := range want {
		left[w] = true
	}
	timeout := time.After(2 * time.Minute)
	for len(left) > 0 {
		select {
		case s := <-p.started:
			delete(left, s)
		case <-p.done:
			t.Fatalf("worker exited before starting %v", slices.Sorted(maps.Keys(left)))
		case <-timeout:
			t.Fatalf("worker never started %v", slices.Sorted(maps.Keys(left)))
		}
	}
}
