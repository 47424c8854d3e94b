package episode

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mlerl/mlerl/sandbox"
	"github.com/mlerl/mlerl/task"
)

// tiny loads the 4-row AUC fixture of testdata.
func tiny(t *testing.T) *Prepared {
	t.Helper()
	tk, err := task.Load(filepath.Join("testdata", "tiny-auc"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(tk)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// realPool is a Pool of real sandboxed slots serving p.
func realPool(t *testing.T, p *Prepared, slots int, max Settings) *Pool {
	t.Helper()
	sb, err := sandbox.New(context.Background(), sandbox.Config{})
	if err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	pool, err := NewPool(&Runner{Sandbox: sb, Max: max}, map[string]string{p.Task.Name: p.Task.PublicDir()}, slots)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// nonceProgram prints a fresh random nonce and writes a perfect submission:
// two real runs of it never print the same line, a reused one does.
const nonceProgram = `import os
print("nonce", os.urandom(8).hex())
open("submission.csv", "w").write("id,label\nb1,0.1\nb2,0.9\nb3,0.8\nb4,0.2\n")
`

func drain(t *testing.T, g *Graded, n int) map[string]Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got := map[string]Result{}
	for range n {
		r, err := g.Next(ctx)
		if err != nil {
			t.Fatalf("after %d of %d: %v", len(got), n, err)
		}
		got[r.Episode] = r
	}
	return got
}

// An identical job is executed once and recorded for each submission: the
// reused result carries the original's output and duration and says where
// it came from. Jobs submitted while the first still runs wait for it.
func TestCacheRunsIdenticalJobOnce(t *testing.T) {
	p := tiny(t)
	cache := NewCache(realPool(t, p, 2, Settings{Timeout: time.Minute}), mustStore(t, ""))
	g := NewGraded(cache, []*Prepared{p}, Reward{}, Settings{Instrument: "ast"})
	ctx := context.Background()
	for _, id := range []string{"a", "b"} { // b joins a while a runs
		if err := g.Submit(ctx, Job{ID: id, Task: p.Task.Name, Kind: Scratch, Code: nonceProgram}); err != nil {
			t.Fatal(err)
		}
	}
	first := drain(t, g, 2)
	if err := g.Submit(ctx, Job{ID: "c", Task: p.Task.Name, Kind: Improve, PolicyVersion: 3, Code: nonceProgram}); err != nil {
		t.Fatal(err)
	}
	got := drain(t, g, 1)
	for k, v := range first {
		got[k] = v
	}
	a := got["a"]
	if !a.Valid || a.Reused || a.Score == nil || *a.Score != 1 {
		t.Fatalf("first run: %+v", a)
	}
	for _, id := range []string{"b", "c"} {
		r := got[id]
		if !r.Reused || r.ReusedFrom != "a" || r.Output != a.Output || r.DurationS != a.DurationS || r.Reward != a.Reward || !r.Valid {
			t.Errorf("%s: reused %v from %q, output %q (want %q), duration %v (want %v)", id, r.Reused, r.ReusedFrom, r.Output, a.Output, r.DurationS, a.DurationS)
		}
	}
	if c := got["c"]; c.Kind != Improve || c.PolicyVersion != 3 {
		t.Errorf("a reused result keeps its own job's kind and version: %+v", c)
	}
	if st := cache.Stats(); st.Executed != 1 || st.Reused != 2 {
		t.Errorf("stats %+v, want 1 executed, 2 reused", st)
	}
	if !strings.Contains(a.Output, "nonce") {
		t.Errorf("output %q", a.Output)
	}
}

// The key covers the code, the task data and each setting: a change in any
// one runs the program again; the same job in another run with the same
// folder is served from disk.
func TestCacheKeyAndFolder(t *testing.T) {
	p := tiny(t)
	dir := t.TempDir()
	base := Job{Task: p.Task.Name, Kind: Scratch, Code: nonceProgram, Data: p.Data,
		Settings: Settings{Timeout: time.Minute, Instrument: "ast", Threads: 1}}
	variants := map[string]func(j *Job){
		"same":       func(*Job) {},
		"code":       func(j *Job) { j.Code += "\n# another program\n" },
		"data":       func(j *Job) { j.Data = strings.Repeat("0", 64) },
		"timeout":    func(j *Job) { j.Settings.Timeout = 2 * time.Minute },
		"memory":     func(j *Job) { j.Settings.MemoryBytes = 1 << 30 },
		"instrument": func(j *Job) { j.Settings.Instrument = "none" },
		"threads":    func(j *Job) { j.Settings.Threads = 2 },
	}
	for name, change := range variants {
		j := base
		change(&j)
		if same := j.Key() == base.Key(); same != (name == "same") {
			t.Errorf("%s: key unchanged = %v", name, same)
		}
	}

	// One run: a fresh cache on the shared folder, one job.
	run := func(id string) CacheStats {
		cache := NewCache(realPool(t, p, 1, Settings{}), mustStore(t, dir))
		g := NewGraded(cache, []*Prepared{p}, Reward{}, base.Settings)
		j := base
		j.ID = id
		if err := g.Submit(context.Background(), j); err != nil {
			t.Fatal(err)
		}
		if r := drain(t, g, 1)[id]; !r.Valid {
			t.Fatalf("%s: %+v", id, r)
		}
		return cache.Stats()
	}
	if st := run("r1"); st.Executed != 1 || st.Reused != 0 {
		t.Fatalf("first run: %+v", st)
	}
	if st := run("r2"); st.Executed != 0 || st.Reused != 1 || st.FromDisk != 1 {
		t.Errorf("second run with the folder: %+v, want the execution from disk", st)
	}
}

func mustStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := NewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A job whose execution fails to happen (here: an instrumentation mode the
// executor lacks, an infrastructure error) leaves nothing in the cache: the
// identical job that waited for it runs in its place, and a later retry runs
// too, instead of waiting for an execution that never comes.
func TestCacheForgetsFailedExecutions(t *testing.T) {
	p := tiny(t)
	cache := NewCache(realPool(t, p, 1, Settings{Timeout: time.Minute}), mustStore(t, ""))
	g := NewGraded(cache, []*Prepared{p}, Reward{}, Settings{Instrument: "lm"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, id := range []string{"a", "b"} {
		if err := g.Submit(ctx, Job{ID: id, Task: p.Task.Name, Code: nonceProgram}); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"episode a", "episode b"} {
		if _, err := g.Next(ctx); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "not configured") {
			t.Fatalf("Next: %v, want the infrastructure error of %s", err, want)
		}
	}
	if err := g.Submit(ctx, Job{ID: "c", Task: p.Task.Name, Code: nonceProgram}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Next(ctx); err == nil || !strings.Contains(err.Error(), "episode c") {
		t.Fatalf("retry: %v, want it run (and fail) again", err)
	}
	if st := cache.Stats(); st.Reused != 0 || st.Executed != 0 {
		t.Errorf("stats %+v: nothing executed, nothing to reuse", st)
	}
}

// When the job that identical ones wait for fails to execute and the first
// waiter cannot be submitted in its place (here: the pool's one slot was
// taken meanwhile), every waiter is reported failed, none is left waiting.
func TestCacheReportsWaitersItCannotRun(t *testing.T) {
	p := tiny(t)
	pool := realPool(t, p, 1, Settings{Timeout: time.Minute})
	cache := NewCache(pool, mustStore(t, ""))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	broken := Settings{Timeout: time.Minute, Instrument: "lm"} // no instrumenter: fails before running
	for _, id := range []string{"a", "b", "c"} {
		if err := cache.Submit(ctx, Job{ID: id, Task: p.Task.Name, Code: nonceProgram, Settings: broken}); err != nil {
			t.Fatal(err)
		}
	}
	for pool.Busy() > 0 { // a's failure is in; its slot is free
		if ctx.Err() != nil {
			t.Fatal("the failing episode never finished")
		}
		time.Sleep(10 * time.Millisecond)
	}
	slow := Job{ID: "slow", Task: p.Task.Name, Code: "import time\ntime.sleep(30)\n", Settings: Settings{Timeout: time.Minute, Instrument: "none"}}
	if err := cache.Submit(ctx, slow); err != nil {
		t.Fatal(err)
	}
	want := []string{"episode a", "episode b", "episode c"}
	for i, w := range want {
		ex, err := cache.Next(ctx)
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Fatalf("Next %d: %+v, %v: want the failure of %s", i+1, ex, err, w)
		}
		if i > 0 && (ex.Episode != w[len("episode "):] || !strings.Contains(err.Error(), "busy")) {
			t.Errorf("Next %d: episode %q, error %v: want the waiter and why it could not run", i+1, ex.Episode, err)
		}
	}
	if got := cache.Slots(); got != 1 {
		t.Errorf("slots %d after the waiters were reported, want the pool's 1", got)
	}
}

// A store with a folder keeps only the latest storeMemory executions in
// memory; older ones come back from the folder intact. Without a folder,
// memory is all there is, and it keeps everything.
func TestStoreMemoryBounded(t *testing.T) {
	for _, withDir := range []bool{true, false} {
		dir := ""
		if withDir {
			dir = t.TempDir()
		}
		s := mustStore(t, dir)
		n := storeMemory + 20
		for i := range n {
			ex := Execution{Episode: fmt.Sprint("e", i), Task: "t", Output: fmt.Sprint("output ", i), Submission: []byte(fmt.Sprint("id,label\n1,", i, "\n"))}
			if err := s.Put(fmt.Sprintf("%064d", i), ex); err != nil {
				t.Fatal(err)
			}
		}
		want := n
		if withDir {
			want = storeMemory
		}
		if got := s.InMemory(); got != want {
			t.Errorf("folder %v: %d executions in memory, want %d", withDir, got, want)
		}
		ex, ok, fromDisk := s.Get(fmt.Sprintf("%064d", 3))
		if !ok || fromDisk != withDir || ex.Output != "output 3" || string(ex.Submission) != "id,label\n1,3\n" {
			t.Errorf("folder %v: the oldest came back as ok=%v fromDisk=%v %q %q", withDir, ok, fromDisk, ex.Output, ex.Submission)
		}
	}
}

// folderCache is a cache on the folder dir in front of a one-slot pool, and
// the grading in front of it (AST instrumentation), as a run on dir has.
func folderCache(t *testing.T, p *Prepared, dir string) (*Cache, *Graded) {
	t.Helper()
	cache := NewCache(realPool(t, p, 1, Settings{Timeout: time.Minute}), mustStore(t, dir))
	return cache, NewGraded(cache, []*Prepared{p}, Reward{}, gradedSettings)
}

var gradedSettings = Settings{Instrument: "ast"}

// gradedKey is job's key once folderCache's grading has filled it in.
func gradedKey(p *Prepared, job Job) string {
	job.Data, job.Settings = p.Data, gradedSettings
	return job.Key()
}

// Two runs in separate processes on one cache folder (here: two caches, each
// with its own pool and store, the folder's lock being the kernel's): the
// job one is running is not run by the other, which waits and gets its
// execution from the folder.
func TestCacheWaitsForAnotherProcess(t *testing.T) {
	p := tiny(t)
	dir := t.TempDir()
	var gs [2]*Graded
	var caches [2]*Cache
	for i := range gs {
		caches[i], gs[i] = folderCache(t, p, dir)
	}
	ctx := context.Background()
	for i, g := range gs {
		if err := g.Submit(ctx, Job{ID: fmt.Sprint("run", i), Task: p.Task.Name, Kind: Scratch, Code: nonceProgram}); err != nil {
			t.Fatal(err)
		}
	}
	if got := caches[1].Slots(); got != 2 {
		t.Errorf("the waiting cache has %d slots, want its pool's 1 and the one waiting", got)
	}
	first := drain(t, gs[0], 1)["run0"]
	second := drain(t, gs[1], 1)["run1"]
	if first.Reused || !first.Valid {
		t.Fatalf("first: %+v", first)
	}
	if !second.Reused || second.ReusedFrom != "run0" || second.Output != first.Output || second.DurationS != first.DurationS {
		t.Errorf("second: reused %v from %q, output %q (want %q), duration %v (want %v)", second.Reused, second.ReusedFrom, second.Output, first.Output, second.DurationS, first.DurationS)
	}
	if a, b := caches[0].Stats(), caches[1].Stats(); a.Executed != 1 || b.Executed != 0 || b.Reused != 1 || b.FromDisk != 1 {
		t.Errorf("stats %+v and %+v: want one execution, in the first", a, b)
	}
	if locks, _ := filepath.Glob(filepath.Join(dir, "*", "*.lock")); len(locks) != 0 {
		t.Errorf("lock files left: %v", locks)
	}
}

// A process that held a job's lock and ended without an execution (it died,
// or its run was cancelled) leaves the job to the cache waiting for it,
// which runs it itself, on the first slot its pool frees (here another job
// holds the only one).
func TestCacheTakesOverFromAProcessThatEnded(t *testing.T) {
	p := tiny(t)
	dir := t.TempDir()
	cache, g := folderCache(t, p, dir)
	job := Job{ID: "j", Task: p.Task.Name, Kind: Scratch, Code: nonceProgram}
	other := mustStore(t, dir)
	release, ok, err := other.claim(gradedKey(p, job))
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	for _, j := range []Job{{ID: "busy", Task: p.Task.Name, Kind: Scratch, Code: sleepy(1)}, job} {
		if err := g.Submit(context.Background(), j); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := g.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("while the other process holds it: %v, want to keep waiting", err)
	}
	if got := cache.Slots(); got != 2 {
		t.Errorf("slots %d while waiting, want the pool's 1 and the one waiting", got)
	}
	release() // it ends with nothing in the folder
	got := drain(t, g, 2)
	if b := got["busy"]; !b.Valid {
		t.Errorf("the job holding the slot: %+v", b)
	}
	r := got["j"]
	if r.Reused || !r.Valid || !strings.Contains(r.Output, "nonce") {
		t.Errorf("taken over: %+v", r)
	}
	if st := cache.Stats(); st.Executed != 2 || st.Reused != 0 {
		t.Errorf("stats %+v, want both executed here", st)
	}
	if got := cache.Slots(); got != 1 {
		t.Errorf("slots %d after, want the pool's 1", got)
	}
}

// A cache that stops with a job unfinished lets go of its lock, so a run
// started after it on the folder (a server restarted in the same process)
// runs the job instead of waiting for it.
func TestCacheCloseReleasesItsLocks(t *testing.T) {
	p := tiny(t)
	dir := t.TempDir()
	cache, g := folderCache(t, p, dir)
	job := Job{ID: "j", Task: p.Task.Name, Kind: Scratch, Code: sleepy(5)}
	if err := g.Submit(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	other := mustStore(t, dir)
	if _, ok, err := other.claim(gradedKey(p, job)); ok || err != nil {
		t.Fatalf("while the cache runs it: claimed %v (%v), want held", ok, err)
	}
	cache.Close()
	release, ok, err := other.claim(gradedKey(p, job))
	if !ok || err != nil {
		t.Fatalf("after Close: claimed %v (%v), want free", ok, err)
	}
	release()
}
