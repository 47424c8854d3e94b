package episode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

var testKey = strings.Repeat("ab", 32)

// slowRun counts its calls and returns, after a pause long enough for the
// other callers to arrive, an execution whose duration says which call made it.
func slowRun(calls *atomic.Int32) func() (Execution, error) {
	return func() (Execution, error) {
		n := calls.Add(1)
		time.Sleep(150 * time.Millisecond)
		return Execution{Episode: fmt.Sprint("run", n), Task: "t", DurationS: float64(n)}, nil
	}
}

type doResult struct {
	ex  Execution
	ran bool
	err error
}

// doAll calls Do on each store at once with run and returns what each got.
func doAll(stores []*Store, run func() (Execution, error)) []doResult {
	out := make([]doResult, len(stores))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, s := range stores {
		wg.Go(func() {
			<-start
			out[i].ex, out[i].ran, out[i].err = s.Do(context.Background(), testKey, run)
		})
	}
	close(start)
	wg.Wait()
	return out
}

// Runs sharing a store, in one process or in several on one folder, execute
// a program they all miss once: the others wait and get that execution, with
// its one measured duration. No lock file is left behind.
func TestStoreDoRunsOnce(t *testing.T) {
	cases := map[string]func(t *testing.T) []*Store{
		"one store, no folder": func(t *testing.T) []*Store {
			s := mustStore(t, "")
			return []*Store{s, s, s, s}
		},
		"one store, a folder": func(t *testing.T) []*Store {
			s := mustStore(t, t.TempDir())
			return []*Store{s, s, s, s}
		},
		"a store per process on one folder": func(t *testing.T) []*Store {
			dir := t.TempDir()
			return []*Store{mustStore(t, dir), mustStore(t, dir), mustStore(t, dir), mustStore(t, dir)}
		},
	}
	for name, stores := range cases {
		t.Run(name, func(t *testing.T) {
			ss := stores(t)
			var calls atomic.Int32
			got := doAll(ss, slowRun(&calls))
			if calls.Load() != 1 {
				t.Fatalf("run called %d times, want once", calls.Load())
			}
			ran := 0
			for i, r := range got {
				if r.err != nil || r.ex.Episode != "run1" || r.ex.DurationS != 1 {
					t.Errorf("caller %d: %+v, error %v: want run1's execution", i, r.ex, r.err)
				}
				if r.ran {
					ran++
				}
			}
			if ran != 1 {
				t.Errorf("%d callers say they ran it, want 1", ran)
			}
			if dir := ss[0].dir; dir != "" {
				locks, _ := filepath.Glob(filepath.Join(dir, "*", "*.lock"))
				if len(locks) != 0 {
					t.Errorf("lock files left: %v", locks)
				}
				if _, err := os.Stat(ss[0].path(testKey)); err != nil {
					t.Errorf("the execution is not in the folder: %v", err)
				}
			}
		})
	}
}

// A run that fails keeps nothing, and a caller that waited for it runs the
// program itself instead of inheriting the failure.
func TestStoreDoAfterAFailedRun(t *testing.T) {
	dir := t.TempDir()
	var calls atomic.Int32
	run := func() (Execution, error) {
		if calls.Add(1) == 1 {
			time.Sleep(150 * time.Millisecond)
			return Execution{}, errors.New("the sandbox did not start")
		}
		return Execution{Episode: "second", Task: "t", DurationS: 2}, nil
	}
	got := doAll([]*Store{mustStore(t, dir), mustStore(t, dir)}, run)
	if calls.Load() != 2 {
		t.Fatalf("run called %d times, want 2 (the failure, then the waiter's own)", calls.Load())
	}
	var failed, ok int
	for _, r := range got {
		switch {
		case r.err != nil && r.ran && strings.Contains(r.err.Error(), "did not start"):
			failed++
		case r.err == nil && r.ran && r.ex.Episode == "second":
			ok++
		default:
			t.Errorf("unexpected %+v", r)
		}
	}
	if failed != 1 || ok != 1 {
		t.Errorf("%d failed, %d ran after the failure; want 1 and 1", failed, ok)
	}
}

// A store waits while another process holds the key's lock, gives up when
// its context ends, and goes on once the holder is gone, even one that died
// holding it (its lock file left behind, its flock released by the kernel).
func TestStoreDoWaitsForAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	s := mustStore(t, dir)
	p := filepath.Join(dir, testKey[:2], testKey+".lock")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	held, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(held.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, _, err := s.Do(ctx, testKey, slowRun(&calls)); !errors.Is(err, context.DeadlineExceeded) || calls.Load() != 0 {
		t.Fatalf("with the lock held elsewhere: error %v after %d runs, want the deadline and no run", err, calls.Load())
	}
	held.Close() // the holder dies; its file stays
	ex, ran, err := s.Do(context.Background(), testKey, slowRun(&calls))
	if err != nil || !ran || ex.Episode != "run1" || calls.Load() != 1 {
		t.Fatalf("after the holder died: %+v ran=%v error %v, %d runs", ex, ran, err, calls.Load())
	}
	if ex, ran, err := mustStore(t, dir).Do(context.Background(), testKey, slowRun(&calls)); err != nil || ran || ex.Episode != "run1" {
		t.Errorf("a later process: %+v ran=%v error %v, want run1 from the folder", ex, ran, err)
	}
}

// Two virtual runs on one store that submit the same program at once see
// one execution and one duration, and count it once as executed.
func TestVirtualRunsShareOneExecution(t *testing.T) {
	store := mustStore(t, t.TempDir())
	var calls atomic.Int32
	run := func(ctx context.Context, job Job) (Execution, error) {
		ex, err := slowRun(&calls)()
		ex.Episode, ex.Task = job.ID, job.Task
		return ex, err
	}
	job := Job{ID: "e1", Task: "t", Kind: Scratch, Code: "print(1)"}
	var vs [2]*Virtual
	for i := range vs {
		v, err := NewVirtual(2, run, store)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Submit(context.Background(), job); err != nil {
			t.Fatal(err)
		}
		vs[i] = v
	}
	var durations []float64
	var stats VirtualStats
	for _, v := range vs {
		ex, err := v.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		durations = append(durations, ex.DurationS)
		st := v.Stats()
		stats.Executed += st.Executed
		stats.Stored += st.Stored
	}
	if calls.Load() != 1 || durations[0] != durations[1] {
		t.Errorf("%d real runs, durations %v: want one run and one duration", calls.Load(), durations)
	}
	if stats != (VirtualStats{Executed: 1, Stored: 1}) {
		t.Errorf("stats summed over the runs %+v, want 1 executed and 1 stored", stats)
	}
}

// Slots are shared by every process on the folder: two bench processes with
// 2 slots each run 2 programs at once between them, not 4; a process given
// fewer uses only the first; a slot freed — released, or its holder dead
// (its flock released by the kernel) — goes to the one waiting. Without a
// folder, the process's callers share them.
func TestStoreSlotsSharedAcrossProcesses(t *testing.T) {
	waitFails := func(s *Store, n int) error {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		release, err := s.Slot(ctx, n)
		if err == nil {
			release()
			return errors.New("got a slot")
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return nil
	}
	dir := t.TempDir()
	a, b := mustStore(t, dir), mustStore(t, dir)
	ra := mustSlot(t, a, 2)
	rb := mustSlot(t, b, 2)
	if err := waitFails(b, 2); err != nil {
		t.Errorf("a third program with 2 slots held: %v, want to wait", err)
	}
	rb()
	if err := waitFails(a, 1); err != nil {
		t.Errorf("a process with 1 slot while the first is held: %v, want to wait", err)
	}
	mustSlot(t, b, 2)() // the freed slot
	ra()

	// Another process holds both slots, then dies.
	var held []*os.File
	for i := range 2 {
		f, err := os.OpenFile(filepath.Join(dir, "slots", fmt.Sprintf("%d.lock", i)), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		held = append(held, f)
	}
	if err := waitFails(a, 2); err != nil {
		t.Errorf("both slots held by another process: %v, want to wait", err)
	}
	got := make(chan error, 1)
	go func() {
		release, err := a.Slot(context.Background(), 2)
		if err == nil {
			release()
		}
		got <- err
	}()
	held[1].Close() // the holder dies with slot 1
	if err := <-got; err != nil {
		t.Errorf("after the holder died: %v", err)
	}
	held[0].Close()

	mem := mustStore(t, "")
	r := mustSlot(t, mem, 1)
	if err := waitFails(mem, 1); err != nil {
		t.Errorf("no folder, the one slot held: %v, want to wait", err)
	}
	r()
	if err := waitFails(mem, 1); err == nil || err.Error() != "got a slot" {
		t.Errorf("no folder, the slot freed: %v, want it taken", err)
	}
	if _, err := mem.Slot(context.Background(), 0); err == nil {
		t.Error("0 slots accepted")
	}
}

// A slot freed goes to the process that was waiting for one, not back to the
// process that freed it and at once asks again for its next program (which
// polling alone would allow, so that one process held the machine).
func TestStoreSlotGoesToTheWaitingProcess(t *testing.T) {
	dir := t.TempDir()
	a, b := mustStore(t, dir), mustStore(t, dir)
	ra1 := mustSlot(t, a, 2)
	ra2 := mustSlot(t, a, 2)
	bGot := make(chan func(), 1)
	go func() {
		r, err := b.Slot(context.Background(), 2)
		if err != nil {
			t.Error(err)
			close(bGot)
			return
		}
		bGot <- r
	}()
	// Wait until b is at the head of the queue, looking for a slot.
	q, err := os.OpenFile(filepath.Join(dir, "slots", "queue.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if err := unix.Flock(int(q.Fd()), unix.LOCK_EX|unix.LOCK_NB); err == unix.EWOULDBLOCK {
			break
		} else if err == nil {
			unix.Flock(int(q.Fd()), unix.LOCK_UN)
		}
		if time.Now().After(deadline) {
			t.Fatal("b never took its turn in the queue for a slot")
		}
	}
	ra1()
	aGot := make(chan func(), 1)
	go func() { // a's next program, asked for at once
		r, err := a.Slot(context.Background(), 2)
		if err != nil {
			t.Error(err)
		}
		aGot <- r
	}()
	select {
	case rb := <-bGot:
		if rb == nil {
			t.FailNow()
		}
		select {
		case <-aGot:
			t.Error("a took a third slot of two")
		case <-time.After(100 * time.Millisecond):
		}
		rb()
	case <-aGot:
		t.Fatal("the process that freed the slot took it back before the one waiting")
	case <-time.After(10 * time.Second):
		t.Fatal("no one got the freed slot")
	}
	if r := <-aGot; r != nil { // b's slot, freed, goes to a's next program
		r()
	}
	ra2()
}

// mustSlot takes one of st's n slots at once, or fails the test.
func mustSlot(t *testing.T, st *Store, n int) (release func()) {
	t.Helper()
	release, err := st.Slot(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	return release
}
