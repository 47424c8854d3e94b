package queue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/task"
)

// fixture loads the tiny task of testdata (4 test rows, AUC).
func fixture(t testing.TB) *episode.Prepared {
	t.Helper()
	tk, err := task.Load(filepath.Join("testdata", "tiny-auc"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := episode.Prepare(tk)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// perfect is a submission that scores AUC 1 on the fixture.
const perfect = "id,label\nb1,0.1\nb2,0.9\nb3,0.8\nb4,0.2\n"

// fakeExec stands in for the sandbox: the program text says what to do.
// "sub:<csv>" writes that submission, "big:<n>" a submission of n bytes,
// "gate" waits for release; anything else writes nothing.
type fakeExec struct {
	release chan struct{}
	mu      sync.Mutex
	dirs    []string
}

func (f *fakeExec) Execute(ctx context.Context, dir string, job episode.Job) (episode.Execution, error) {
	f.mu.Lock()
	f.dirs = append(f.dirs, dir)
	f.mu.Unlock()
	ex := episode.Execution{Episode: job.ID, Task: job.Task, Kind: job.Kind, PolicyVersion: job.PolicyVersion,
		Stages: []string{"imported packages"}, Isolation: "fake", DurationS: 0.5, Output: "ran " + job.ID}
	code := job.Code
	if rest, ok := strings.CutPrefix(code, "sleep;"); ok {
		select {
		case <-time.After(4 * time.Second):
		case <-ctx.Done():
			return ex, ctx.Err()
		}
		code = rest
	}
	if rest, ok := strings.CutPrefix(code, "gate;"); ok {
		select {
		case <-f.release:
		case <-ctx.Done():
			return ex, ctx.Err()
		}
		code = rest
	}
	switch {
	case strings.HasPrefix(code, "sub:"):
		ex.Wrote, ex.Submission = true, []byte(strings.TrimPrefix(code, "sub:"))
	case strings.HasPrefix(code, "big:"):
		var n int
		fmt.Sscan(strings.TrimPrefix(code, "big:"), &n)
		// A valid submission padded with blank lines the grader skips is
		// not guaranteed; pad the id column instead, which makes it invalid
		// in a recognisable way: what matters is that the bytes arrive.
		ex.Wrote, ex.Submission = true, append([]byte(perfect), bytes.Repeat([]byte("x"), n)...)
	}
	return ex, nil
}

// inProcess is an embedded broker set up for a fresh run.
func inProcess(t testing.TB, listen string, setup SetupConfig) *Broker {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := Embed(ctx, EmbedConfig{StoreDir: t.TempDir(), Listen: listen})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	setup.Fresh = true
	if err := b.Setup(ctx, setup); err != nil {
		t.Fatal(err)
	}
	return b
}

func newEnv(t testing.TB, b *Broker, p *episode.Prepared) *Env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := NewEnv(ctx, b, config(p))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// config serves p's public files; its answers stay with the test, which
// grades what the queue returns (the trainer's job, never the queue's).
func config(p *episode.Prepared) EnvConfig {
	graders.Store(p.Task.Name, p)
	return EnvConfig{Tasks: map[string]string{p.Task.Name: p.Task.PublicDir()}}
}

// graders holds the tasks the tests' envs serve, by name, for collect.
var graders sync.Map

// startWorker runs w against b until the test ends or stop is called; stop
// reports whether Run returned (after its error, if any, fails the test).
func startWorker(t testing.TB, b *Broker, w *Worker) (stop func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, b) }()
	var once sync.Once
	var returned bool
	stop = func() bool {
		once.Do(func() {
			cancel()
			// A worker that does not stop is a failure with every goroutine's
			// stack in the log, not a package-wide timeout whose dump scrolls away.
			select {
			case err := <-done:
				returned = true
				if err != nil {
					t.Errorf("worker: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Errorf("worker still running 30 s after its context was cancelled:\n%s", goroutines())
			}
		})
		return returned
	}
	t.Cleanup(func() { stop() })
	return stop
}

// collect takes n results from e, failing after a generous bound.
func collect(t testing.TB, e *Env, n int) map[string]episode.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got := map[string]episode.Result{}
	for len(got) < n {
		ex, err := e.Next(ctx)
		if err != nil {
			t.Fatalf("after %d of %d results: %v\n%s", len(got), n, err, goroutines())
		}
		p, ok := graders.Load(ex.Task)
		if !ok {
			t.Fatalf("execution %s of unknown task %q", ex.Episode, ex.Task)
		}
		r := episode.Grade(p.(*episode.Prepared), ex, episode.DefaultReward())
		if _, dup := got[r.Episode]; dup {
			t.Fatalf("result for %s delivered twice", r.Episode)
		}
		got[r.Episode] = r
	}
	return got
}

func submit(t testing.TB, e *Env, jobs ...episode.Job) {
	t.Helper()
	for _, j := range jobs {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := e.Submit(ctx, j)
		cancel()
		if err != nil {
			t.Fatalf("submit %s: %v\n%s", j.ID, err, goroutines())
		}
	}
}

func job(id, code string) episode.Job {
	return episode.Job{ID: id, Task: "tiny-auc", Kind: episode.Scratch, Code: code}
}

// Jobs go out, raw runs come back, the trainer grades them: valid, invalid,
// missing and oversized submissions (the last through the object store).
func TestRoundTripGradesOnTrainer(t *testing.T) {
	p := fixture(t)
	b := inProcess(t, "", SetupConfig{})
	e := newEnv(t, b, p)
	fx := &fakeExec{}
	startWorker(t, b, &Worker{Exec: fx, Slots: 3, Data: LocalData{"tiny-auc": p.Task.PublicDir()}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.WaitSlots(ctx, 3, nil); err != nil {
		t.Fatalf("waiting for the worker's 3 slots: %v\n%s", err, goroutines())
	}
	if e.Slots() != 3 {
		t.Fatalf("Slots() = %d, want 3", e.Slots())
	}
	big := int(b.nc.MaxPayload()) * 2
	cases := []struct {
		id, code  string
		valid     bool
		score     float64
		errPrefix string
		reward    float64
	}{
		{"r-0", "sub:" + perfect, true, 1, "", 1},
		{"r-1", "sub:" + "id,label\nb1,0.9\nb2,0.1\nb3,0.2\nb4,0.8\n", true, 0, "", 0},
		{"r-2", "sub:id,label\nb1,0.5\n", false, 0, "invalid submission", -10 + 0.1},
		{"r-3", "print('no file')", false, 0, "no submission.csv written", -10 + 0.1},
		{"r-4", fmt.Sprintf("big:%d", big), false, 0, "invalid submission", -10 + 0.1},
	}
	for _, c := range cases {
		submit(t, e, job(c.id, c.code))
	}
	got := collect(t, e, len(cases))
	for _, c := range cases {
		r := got[c.id]
		if r.Valid != c.valid || !strings.HasPrefix(r.Error, c.errPrefix) || r.Reward != c.reward {
			t.Errorf("%s: valid %v error %q reward %v; want %v %q… %v", c.id, r.Valid, r.Error, r.Reward, c.valid, c.errPrefix, c.reward)
		}
		if c.valid && (r.Score == nil || *r.Score != c.score) {
			t.Errorf("%s: score %v, want %v", c.id, r.Score, c.score)
		}
		if r.Isolation != "fake" || r.Output != "ran "+c.id || r.DurationS != 0.5 {
			t.Errorf("%s: raw run fields lost in transit: %+v", c.id, r)
		}
	}
	if s := e.Stats(); s.Accepted != len(cases) || s.Duplicates != 0 || s.Redelivered != 0 || s.Published != len(cases) {
		t.Errorf("stats %+v", s)
	}
	// The oversized submission went through the store: it is there, whole.
	names, err := b.js.ObjectStore(context.Background(), b.n.subsBucket)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := names.List(context.Background())
	if err != nil || len(objs) != 1 || objs[0].Size != uint64(len(perfect)+big) {
		t.Errorf("submission store: %v objects (err %v), want one of %d bytes", len(objs), err, len(perfect)+big)
	}
	if e.Pending() != 0 {
		t.Errorf("%d jobs still pending", e.Pending())
	}
}

// A worker that publishes every result three times: each job is accepted
// once, the other two are counted as duplicates.
func TestDuplicateResultsRecordedOnce(t *testing.T) {
	p := fixture(t)
	b := inProcess(t, "", SetupConfig{})
	e := newEnv(t, b, p)
	w := &Worker{Exec: &fakeExec{}, Slots: 2, Data: LocalData{"tiny-auc": p.Task.PublicDir()}, Repeat: 2}
	startWorker(t, b, w)
	const n = 6
	for i := range n {
		submit(t, e, job(fmt.Sprintf("d-%d", i), "sub:"+perfect))
	}
	collect(t, e, n)
	waitFor(t, func() bool { return e.Stats().Duplicates == 2*n }, func() string { return fmt.Sprintf("%+v", e.Stats()) })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if r, err := e.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a duplicate reached the learner: %+v %v", r, err)
	}
	if s := e.Stats(); s.Accepted != n || s.Results != 3*n {
		t.Errorf("stats %+v, want %d accepted of %d results", s, n, 3*n)
	}
}

// goroutines is every goroutine's stack, for a failure that is a hang.
func goroutines() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// waitFor polls cond until it holds, failing after a generous bound; what is
// shown on failure.
func waitFor(t testing.TB, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not reached: %s\n%s", what(), goroutines())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A trainer crash and resume against the same broker: results of jobs that
// were running at the crash are kept; one whose id is re-submitted with the
// same content answers it without a rerun, one whose id now carries other
// content is discarded and the new job runs.
func TestResumeReusesMatchingResultsOnly(t *testing.T) {
	p := fixture(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := Embed(ctx, EmbedConfig{StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Setup(ctx, SetupConfig{Fresh: true}); err != nil {
		t.Fatal(err)
	}
	fx := &fakeExec{release: make(chan struct{})}
	w := &Worker{Exec: fx, Slots: 2, Data: LocalData{"tiny-auc": p.Task.PublicDir()}}
	started := make(chan string, 10)
	w.Started = func(id string, _ uint64) { started <- id }
	startWorker(t, b, w)

	e1, err := NewEnv(ctx, b, config(p))
	if err != nil {
		t.Fatal(err)
	}
	submit(t, e1, job("run-0", "gate;sub:"+perfect), job("run-1", "gate;sub:"+perfect))
	for i := range 2 {
		select {
		case <-started:
		case <-ctx.Done():
			t.Fatalf("%d of 2 jobs started: %v\n%s", i, ctx.Err(), goroutines())
		}
	}
	e1.Close() // the crash: both jobs are running, nobody reads results

	// The resumed trainer: same broker, not a fresh run.
	if err := b.Setup(ctx, SetupConfig{}); err != nil {
		t.Fatal(err)
	}
	e2, err := NewEnv(ctx, b, config(p))
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	close(fx.release)
	waitFor(t, func() bool { e2.mu.Lock(); defer e2.mu.Unlock(); return len(e2.parked) == 2 },
		func() string { return fmt.Sprintf("%+v", e2.Stats()) })

	submit(t, e2, job("run-0", "gate;sub:"+perfect)) // as in the checkpoint
	submit(t, e2, job("run-1", "sub:id,label\nb1,0.9\nb2,0.1\nb3,0.2\nb4,0.8\n"))
	got := collect(t, e2, 2)
	if s := got["run-0"].Score; s == nil || *s != 1 {
		t.Errorf("run-0: %+v", got["run-0"])
	}
	if s := got["run-1"].Score; s == nil || *s != 0 {
		t.Errorf("run-1 must be the new program's result (score 0), got %+v", got["run-1"])
	}
	if s := e2.Stats(); s.Reused != 1 || s.Stale != 1 || s.Accepted != 2 || s.Published != 1 {
		t.Errorf("stats %+v: want 1 reused, 1 stale, 2 accepted, 1 published", s)
	}
}

// A resumed trainer re-submits jobs under the ids and content they had: one
// queued but purged by Setup before any worker took it, one that ran and was
// answered before the crash. Both must run again; JetStream's duplicate
// window must not mistake either for a retried publish (of the job, or of
// its result by the same worker).
func TestResumeResubmitsSameJob(t *testing.T) {
	p := fixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := inProcess(t, "", SetupConfig{})
	e1, err := NewEnv(ctx, b, config(p))
	if err != nil {
		t.Fatal(err)
	}
	wctx, stopWorker := context.WithCancel(ctx)
	w := &Worker{Exec: &fakeExec{}, Slots: 1, ID: "train-local", Data: LocalData{"tiny-auc": p.Task.PublicDir()}}
	wdone := make(chan error, 1)
	go func() { wdone <- w.Run(wctx, b) }()
	submit(t, e1, job("same-0", "sub:"+perfect))
	collect(t, e1, 1)
	stopWorker()
	if err := <-wdone; err != nil {
		t.Fatal(err)
	}
	submit(t, e1, job("same-1", "sub:"+perfect)) // no worker: stays queued
	e1.Close()

	if err := b.Setup(ctx, SetupConfig{}); err != nil { // purges same-1
		t.Fatal(err)
	}
	e2, err := NewEnv(ctx, b, config(p))
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	startWorker(t, b, &Worker{Exec: &fakeExec{}, Slots: 1, ID: "train-local", Data: LocalData{"tiny-auc": p.Task.PublicDir()}})
	submit(t, e2, job("same-0", "sub:"+perfect), job("same-1", "sub:"+perfect))
	got := collect(t, e2, 2)
	for _, id := range []string{"same-0", "same-1"} {
		if s := got[id].Score; s == nil || *s != 1 {
			t.Errorf("%s after resume: %+v", id, got[id])
		}
	}
	if s := e2.Stats(); s.Published != 2 || s.Accepted != 2 || s.Reused != 0 {
		t.Errorf("stats %+v: want 2 published and accepted afresh", s)
	}
}

// A listening broker with a token refuses a worker without it at once (no
// retrying until the give-up time) and serves one with it.
func TestTokenRequired(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := Embed(ctx, EmbedConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:0", Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Setup(ctx, SetupConfig{Fresh: true}); err != nil {
		t.Fatal(err) // the trainer's own in-process connection carries the token
	}
	for _, tok := range []string{"", "wrong"} {
		start := time.Now()
		_, err := Dial(ctx, b.URL(), DialConfig{Token: tok, GiveUp: time.Minute})
		if !errors.Is(err, nats.ErrAuthorization) || !strings.Contains(err.Error(), "wrong or missing token") {
			t.Errorf("token %q: err %v, want an authorization error", tok, err)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("token %q: refused after %v; an authorization error must not be retried", tok, d)
		}
	}
	w, err := Dial(ctx, b.URL(), DialConfig{Token: "s3cret", GiveUp: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
}

// An unreachable server is retried with backoff, then a clear error: never a hang.
func TestDialUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "nats://" + l.Addr().String()
	l.Close() // nothing listens there now

	// Each failed attempt that is retried is logged with its number: count
	// the attempts from those records, not from the error's wording.
	retries := &retryLog{}
	_, err = Dial(context.Background(), url, DialConfig{GiveUp: 1500 * time.Millisecond, Log: slog.New(retries)})
	if err == nil || !strings.Contains(err.Error(), "unreachable after") || !strings.Contains(err.Error(), url) {
		t.Fatalf("err = %v", err)
	}
	got := retries.attempts()
	if len(got) < 1 {
		t.Errorf("no retry happened (%v)", err)
	}
	for i, a := range got {
		if a != int64(i+1) {
			t.Errorf("retried attempts %v, want 1, 2, ...", got)
			break
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(300 * time.Millisecond); cancel() }()
	_, err = Dial(ctx, url, DialConfig{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("with a cancelled ctx and no give-up: %v", err)
	}
}

// retryLog is a slog.Handler keeping the attempt number of each "retrying" record.
type retryLog struct {
	mu sync.Mutex
	n  []int64
}

func (h *retryLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *retryLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *retryLog) WithGroup(string) slog.Handler            { return h }
func (h *retryLog) Handle(_ context.Context, r slog.Record) error {
	if !strings.Contains(r.Message, "retrying") {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "attempt" {
			h.mu.Lock()
			h.n = append(h.n, a.Value.Int64())
			h.mu.Unlock()
		}
		return true
	})
	return nil
}

func (h *retryLog) attempts() []int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.n)
}

// Task files are published once under their checksum and fetched once per
// machine; the cache holds exactly the public files.
func TestTaskDataCachedByChecksum(t *testing.T) {
	p := fixture(t)
	b := inProcess(t, "", SetupConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sum, err := b.PublishData(ctx, p.Task.PublicDir())
	if err != nil {
		t.Fatal(err)
	}
	again, err := b.PublishData(ctx, p.Task.PublicDir())
	if err != nil || again != sum {
		t.Fatalf("second publish: %s %v, want %s", again, err, sum)
	}
	root := t.TempDir()
	c := NewCachedData(b, root)
	dir, err := c.Dir(ctx, "tiny-auc", sum)
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(root, sum) {
		t.Errorf("dir %s", dir)
	}
	for _, f := range []string{"train.csv", "test.csv", "sample_submission.csv"} {
		want, _ := os.ReadFile(filepath.Join(p.Task.PublicDir(), f))
		got, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "..", "private")); err == nil {
		t.Error("private files in the cache")
	}
	// A second worker process on the machine: served from disk, the store
	// is not asked (the object is gone and it still works).
	store, _ := b.js.ObjectStore(ctx, b.n.tasksBucket)
	if err := store.Delete(ctx, sum); err != nil {
		t.Fatal(err)
	}
	if d2, err := NewCachedData(b, root).Dir(ctx, "tiny-auc", sum); err != nil || d2 != dir {
		t.Errorf("cached lookup: %s %v", d2, err)
	}
	if _, err := NewCachedData(b, t.TempDir()).Dir(ctx, "tiny-auc", sum); err == nil {
		t.Error("an empty cache found data the store no longer has")
	}
	if _, err := c.Dir(ctx, "tiny-auc", "../../etc"); err == nil {
		t.Error("a bad checksum was accepted as a path")
	}
}

// A job that runs longer than AckWait is heartbeated (InProgress) and stays
// with its worker: it is delivered once and run once.
func TestLongJobHeartbeatPreventsRedelivery(t *testing.T) {
	p := fixture(t)
	b := inProcess(t, "", SetupConfig{AckWait: 1500 * time.Millisecond})
	e := newEnv(t, b, p)
	var runs atomic.Int32
	w := &Worker{Exec: &fakeExec{}, Slots: 2, Data: LocalData{"tiny-auc": p.Task.PublicDir()},
		Started: func(string, uint64) { runs.Add(1) }}
	startWorker(t, b, w)
	submit(t, e, job("hb-0", "sleep;sub:"+perfect)) // 4 s, over twice AckWait
	got := collect(t, e, 1)
	if r := got["hb-0"]; !r.Valid {
		t.Errorf("%+v", r)
	}
	if s := e.Stats(); runs.Load() != 1 || s.Redelivered != 0 || s.Results != 1 {
		t.Errorf("%d runs, stats %+v: the job was redelivered while its worker was alive", runs.Load(), s)
	}
}

// A worker told to stop while the broker refuses its finished result (here
// the results stream is gone) gives up after StopGrace instead of retrying
// for the ten minutes a live worker would.
func TestWorkerStopsWhileResultUndeliverable(t *testing.T) {
	p := fixture(t)
	b := inProcess(t, "", SetupConfig{})
	e := newEnv(t, b, p)
	fx := &fakeExec{release: make(chan struct{})}
	started := make(chan string, 1)
	w := &Worker{Exec: fx, Slots: 1, Data: LocalData{"tiny-auc": p.Task.PublicDir()}, StopGrace: 200 * time.Millisecond,
		Started: func(id string, _ uint64) { started <- id }}
	stop := startWorker(t, b, w)
	submit(t, e, job("stuck-0", "gate;sub:"+perfect))
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatalf("the job never started\n%s", goroutines())
	}
	dctx, dcancel := context.WithTimeout(context.Background(), time.Minute)
	defer dcancel()
	if err := b.js.DeleteStream(dctx, b.n.resultsStream); err != nil {
		t.Fatal(err)
	}
	close(fx.release) // the run finishes; its result has nowhere to go
	// Let the worker reach its publish retries: the stop must come during
	// them, where the old code kept retrying for ten minutes. (On a machine
	// so slow that it comes before them the test passes and proves less;
	// it cannot flake.) The stream is gone, so Done stays 0.
	time.Sleep(500 * time.Millisecond)
	if !stop() {
		t.Fatal("worker still retrying 30 s after it was told to stop (grace 200 ms)")
	}
	if w.Done() != 0 {
		t.Errorf("%d results published to a deleted stream", w.Done())
	}
}
