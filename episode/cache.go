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
// later runs too; without one the cache lasts as long as the process.
//
// Like every Executor it is driven from one goroutine (the learner's loop);
// the lock only guards Stats against concurrent readers.
type Cache struct {
	inner Executor
	store *Store

	mu      sync.Mutex
	running map[string][]Job  // key -> jobs waiting for the one running
	keyOf   map[string]string // id of a job running on inner -> its key
	ready   []Execution       // reused executions not yet handed out
	lost    []lostJob         // waiters that could not be run after their original failed
	waiting int               // jobs in running beyond the first of each key
	stats   CacheStats
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
	return &Cache{inner: inner, store: store, running: map[string][]Job{}, keyOf: map[string]string{}}
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
	c.running[key] = []Job{job}
	c.keyOf[job.ID] = key
	c.mu.Unlock()
	if err := c.inner.Submit(ctx, job); err != nil {
		c.mu.Lock()
		delete(c.running, key)
		delete(c.keyOf, job.ID)
		c.mu.Unlock()
		return err
	}
	return nil
}

// Next hands out a reused execution if one is ready, else the inner
// executor's next, which it keeps and also hands to the jobs that waited for it.
func (c *Cache) Next(ctx context.Context) (Execution, error) {
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
	c.mu.Unlock()
	ex, err := c.inner.Next(ctx)
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
	c.mu.Unlock()
	if err := c.store.persist(key, ex); err != nil {
		// A folder that cannot be written costs later runs a re-execution,
		// not this run its result: counted, and the run goes on.
		c.mu.Lock()
		c.stats.StoreErrors++
		c.stats.LastStoreError = err.Error()
		c.mu.Unlock()
	}
	return ex, nil
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
		c.mu.Unlock()
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
		c.mu.Unlock()
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
