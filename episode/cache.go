package episode

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Cache is an Executor in front of another that never runs the same work
// twice. Rendered programs are deterministic, so a job whose Key (code, task
// data, settings) was executed before gets that execution back at once,
// marked Reused, with the original's measured duration so duration weights
// stay honest; a job identical to one still running waits for it instead of
// running beside it. With a folder, executions are kept on disk and serve
// later runs too, and runs in other processes on the same folder: a job
// identical to one another process is running waits for that execution (the
// folder's lock on its key) instead of running beside it. Without a folder
// the cache lasts as long as the process.
//
// Like every Executor it is driven from one goroutine (the learner's loop);
// the lock only guards Stats against concurrent readers.
type Cache struct {
	inner Executor
	store *Store

	mu        sync.Mutex
	running   map[string][]Job  // key -> jobs waiting for the one running
	keyOf     map[string]string // id of a job running on inner -> its key
	claims    map[string]func() // key -> release of the folder's lock, for keys run here
	elsewhere map[string]bool   // keys another process is running; their jobs wait in running
	deferred  []Job             // jobs of keys taken over from another process, not yet on inner
	ready     []Execution       // reused executions not yet handed out
	lost      []lostJob         // waiters that could not be run after their original failed
	waiting   int               // jobs in running that hold no slot of inner
	stats     CacheStats
}

// CacheStats count what the cache did in this process.
type CacheStats struct {
	// Executed jobs ran on the executor behind the cache.
	Executed int `json:"executed"`
	// Reused jobs were answered with an earlier execution (from this run,
	// from the folder, or by waiting for an identical job still running).
	Reused int `json:"reused"`
	// FromDisk of the reused came from the cache folder.
	FromDisk int `json:"from_disk"`
	// StoreErrors count executions the folder could not keep.
	StoreErrors    int    `json:"store_errors,omitempty"`
	LastStoreError string `json:"last_store_error,omitempty"`
}

// lostJob is a job that waited for an identical one whose execution failed
// and could not be submitted in its place: Next reports it as failed.
type lostJob struct {
	job Job
	err error
}

// NewCache puts a cache keeping its executions in store in front of inner.
func NewCache(inner Executor, store *Store) *Cache {
	return &Cache{inner: inner, store: store, running: map[string][]Job{}, keyOf: map[string]string{},
		claims: map[string]func(){}, elsewhere: map[string]bool{}}
}

// Slots are the inner executor's, plus the jobs the cache answers itself:
// those hold no real slot, so the learner may fill the real ones beside them.
func (c *Cache) Slots() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inner.Slots() + c.waiting + len(c.ready) + len(c.lost)
}

// Now is the inner executor's clock.
func (c *Cache) Now() time.Duration { return c.inner.Now() }

// Stats returns the counts so far.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Submit answers job from the cache, joins an identical running job, or runs it.
func (c *Cache) Submit(ctx context.Context, job Job) error {
	key := job.Key()
	ex, ok, fromDisk := c.store.Get(key)
	c.mu.Lock()
	switch {
	case ok:
		c.ready = append(c.ready, reuse(ex, job))
		c.stats.Reused++
		if fromDisk {
			c.stats.FromDisk++
		}
		c.mu.Unlock()
		return nil
	case len(c.running[key]) > 0:
		c.running[key] = append(c.running[key], job)
		c.waiting++
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	// The folder's lock, outside c.mu (it is file work); Submit and Next
	// are driven from one goroutine, so nothing above changes meanwhile.
	release, mine, err := c.store.claim(key)
	if mine {
		// Another process may have finished it since Get looked.
		if ex, ok, _ := c.store.Get(key); ok {
			release()
			c.mu.Lock()
			c.ready = append(c.ready, reuse(ex, job))
			c.stats.Reused++
			c.stats.FromDisk++
			c.mu.Unlock()
			return nil
		}
	}
	c.mu.Lock()
	if err != nil {
		// The folder's lock is a saving, not a condition: run it anyway.
		release, mine = func() {}, true
		c.stats.StoreErrors++
		c.stats.LastStoreError = err.Error()
	}
	c.running[key] = []Job{job}
	if !mine { // another process is running it: wait for its execution
		c.elsewhere[key] = true
		c.waiting++
		c.mu.Unlock()
		return nil
	}
	c.claims[key] = release
	c.keyOf[job.ID] = key
	c.mu.Unlock()
	if err := c.inner.Submit(ctx, job); err != nil {
		c.mu.Lock()
		delete(c.running, key)
		delete(c.keyOf, job.ID)
		delete(c.claims, key)
		c.mu.Unlock()
		release()
		return err
	}
	return nil
}

// Next hands out a reused execution if one is ready, else the inner
// executor's next, which it keeps and also hands to the jobs that waited for it.
// While jobs wait for another process, it looks at the folder every lockPoll.
func (c *Cache) Next(ctx context.Context) (Execution, error) {
	for {
		c.mu.Lock()
		if len(c.lost) > 0 {
			l := c.lost[0]
			c.lost = c.lost[1:]
			c.mu.Unlock()
			return Execution{Episode: l.job.ID, Task: l.job.Task}, l.err
		}
		if len(c.ready) > 0 {
			ex := c.ready[0]
			c.ready = c.ready[1:]
			c.mu.Unlock()
			return ex, nil
		}
		poll := len(c.elsewhere) > 0 || len(c.deferred) > 0
		c.mu.Unlock()
		wait, cancel := ctx, context.CancelFunc(func() {})
		if poll {
			c.lookElsewhere()
			c.submitDeferred(ctx)
			wait, cancel = context.WithTimeout(ctx, lockPoll)
		}
		ex, err := c.inner.Next(wait)
		cancel()
		if err != nil && poll && ctx.Err() == nil && wait.Err() != nil {
			continue // time to look at the folder again
		}
		// The slot this completion frees goes to a job taken over first:
		// the learner, which counts that job as running, has not been told
		// of the slot yet.
		c.submitDeferred(ctx)
		return c.completed(ctx, ex, err)
	}
}

// completed keeps the inner executor's execution ex and hands it to the
// jobs that waited for it.
func (c *Cache) completed(ctx context.Context, ex Execution, err error) (Execution, error) {
	if err != nil {
		c.failed(ctx, ex.Episode)
		return ex, err
	}
	c.mu.Lock()
	c.stats.Executed++
	key, ok := c.keyOf[ex.Episode]
	if !ok {
		c.mu.Unlock()
		return ex, nil // not submitted through the cache (a resume's redelivery)
	}
	delete(c.keyOf, ex.Episode)
	// In memory before the key stops running, so an identical job
	// submitted now is answered from it; on disk after the lock, so a slow
	// folder holds up no Submit, Slots or Stats.
	c.store.remember(key, ex)
	for _, j := range c.running[key][1:] {
		c.ready = append(c.ready, reuse(ex, j))
		c.stats.Reused++
		c.waiting--
	}
	delete(c.running, key)
	release := c.claims[key]
	delete(c.claims, key)
	c.mu.Unlock()
	if err := c.store.persist(key, ex); err != nil {
		// A folder that cannot be written costs later runs a re-execution,
		// not this run its result: counted, and the run goes on.
		c.mu.Lock()
		c.stats.StoreErrors++
		c.stats.LastStoreError = err.Error()
		c.mu.Unlock()
	}
	if release != nil {
		release() // after the entry is on disk: a process waiting for it reads it
	}
	return ex, nil
}

// lookElsewhere looks at the keys another process is running: one whose
// execution is now in the folder is handed to the jobs waiting for it; one
// whose lock was let go without an execution (that process failed to run it,
// or ended) is taken over, to run here (submitDeferred).
func (c *Cache) lookElsewhere() {
	c.mu.Lock()
	keys := make([]string, 0, len(c.elsewhere))
	for key := range c.elsewhere {
		keys = append(keys, key)
	}
	c.mu.Unlock()
	for _, key := range keys {
		release, ok, err := c.store.claim(key)
		if err != nil || !ok {
			continue
		}
		ex, found := c.store.load(key)
		c.mu.Lock()
		delete(c.elsewhere, key)
		jobs := c.running[key]
		if found {
			c.store.remember(key, ex)
			delete(c.running, key)
			for _, j := range jobs {
				c.ready = append(c.ready, reuse(ex, j))
				c.stats.Reused++
				c.stats.FromDisk++
			}
			c.waiting -= len(jobs)
		} else {
			c.claims[key] = release
			c.deferred = append(c.deferred, jobs[0])
		}
		c.mu.Unlock()
		if found {
			release()
		}
	}
}

// submitDeferred puts the jobs taken over on the inner executor, as far as
// it accepts them (a Pool's slot frees when one of its jobs is done).
func (c *Cache) submitDeferred(ctx context.Context) {
	for {
		c.mu.Lock()
		if len(c.deferred) == 0 {
			c.mu.Unlock()
			return
		}
		j := c.deferred[0]
		c.mu.Unlock()
		key := j.Key()
		err := c.inner.Submit(ctx, j)
		if err != nil && c.Busy() > 0 {
			return // a slot frees when one of those is done
		}
		c.mu.Lock()
		c.deferred = c.deferred[1:]
		if err == nil {
			c.keyOf[j.ID] = key
			c.waiting--
			c.mu.Unlock()
			continue
		}
		// Nothing runs that could free a slot: it cannot run now.
		release := c.claims[key]
		delete(c.claims, key)
		for _, w := range c.running[key] {
			c.lost = append(c.lost, lostJob{w, fmt.Errorf("episode %s: another process gave up the identical program, and running it here failed: %w", w.ID, err)})
		}
		c.waiting -= len(c.running[key])
		delete(c.running, key)
		c.mu.Unlock()
		release()
	}
}

// failed forgets a job whose execution failed to happen at all (the
// sandbox did not start): nothing is kept for its key, and the first job that
// waited for it runs in its place, so an identical retry is not left waiting
// for an execution that will never come; if that cannot be submitted either,
// every waiter is reported failed by Next.
func (c *Cache) failed(ctx context.Context, id string) {
	c.mu.Lock()
	key, ok := c.keyOf[id]
	if !ok {
		c.mu.Unlock()
		return
	}
	delete(c.keyOf, id)
	waiters := c.running[key][1:]
	delete(c.running, key)
	if len(waiters) == 0 {
		release := c.claims[key]
		delete(c.claims, key)
		c.mu.Unlock()
		if release != nil {
			release()
		}
		return
	}
	next := waiters[0]
	c.running[key], c.keyOf[next.ID] = waiters, key
	c.waiting--
	c.mu.Unlock()
	if err := c.inner.Submit(ctx, next); err != nil {
		// None of them can run now: each is reported failed by Next, so no
		// caller waits for an execution that will never come.
		c.mu.Lock()
		delete(c.running, key)
		delete(c.keyOf, next.ID)
		c.waiting -= len(waiters) - 1
		for _, j := range waiters {
			c.lost = append(c.lost, lostJob{j, fmt.Errorf("episode %s: the identical episode it waited for failed to execute, and running it again failed: %w", j.ID, err)})
		}
		release := c.claims[key]
		delete(c.claims, key)
		c.mu.Unlock()
		if release != nil {
			release()
		}
	}
}

// Close lets go of the folder's locks on the jobs this cache was running,
// for a run that stops with jobs unfinished: another run on the folder then
// takes them over instead of waiting for executions that will not come. (A
// process that ends lets go of them anyway; a server restarted in the same
// process, or a second run in it, needs Close.) It leaves the inner executor
// alone.
func (c *Cache) Close() {
	c.mu.Lock()
	claims := c.claims
	c.claims = map[string]func(){}
	c.mu.Unlock()
	for _, release := range claims {
		release()
	}
}

// Busy is the inner executor's, when it knows it.
func (c *Cache) Busy() int {
	if b, ok := c.inner.(interface{ Busy() int }); ok {
		return b.Busy()
	}
	return 0
}

// reuse is ex as the execution of job.
func reuse(ex Execution, job Job) Execution {
	from := ex.Episode
	if ex.Reused {
		from = ex.ReusedFrom
	}
	ex.Episode, ex.Task, ex.Kind, ex.PolicyVersion = job.ID, job.Task, job.Kind, job.PolicyVersion
	ex.Reused, ex.ReusedFrom = true, from
	return ex
}
