package episode

import (
	"container/heap"
	"context"
	"fmt"
	"sync"
	"time"
)

// Virtual is an Executor on a virtual clock, for comparing policies over
// many seeds at little cost. Every job really runs (through Run) unless its
// Store already has it — the store is shared by all the runs of a benchmark
// and may be a cache folder — but completes on the virtual clock at its
// submit time plus its measured duration, on Slots virtual workers. A run on
// Virtual sees exactly the outcomes and durations a real run would, and the
// comparison between runs does not depend on how busy the machine was.
//
// Within one run it behaves as train's Cache does: a job identical to one
// this run already executed completes at once, reused; one identical to a
// job still running completes with it. Runs beside it on the same store (in
// this process or, on a folder, in others) never execute a program side by
// side: the later one waits for the first's execution (Store.Do), so every
// run sees the one duration the store keeps and replays exactly.
type Virtual struct {
	slots int
	run   func(ctx context.Context, job Job) (Execution, error)
	store *Store

	now     time.Duration
	seq     int
	pending []*vjob          // submitted, outcome or finish time not known yet
	mine    map[string]*vjob // key -> the job of this run that executes it
	done    vheap            // known finish times
	wg      sync.WaitGroup   // real executions in progress
	mu      sync.Mutex       // guards stats, which executions update
	stats   VirtualStats
}

// VirtualStats count where a virtual run's outcomes came from.
type VirtualStats struct {
	Executed int `json:"executed"` // really run now
	Stored   int `json:"stored"`   // taken from the shared store (run earlier by any run)
	Reused   int `json:"reused"`   // identical to a job earlier in this run: instant
}

type vjob struct {
	job    Job
	key    string
	start  time.Duration
	finish time.Duration
	seq    int
	first  *vjob // for a reused job: the job of this run that executes its key
	ex     Execution
	err    error
}

type vheap []*vjob

func (h vheap) Len() int { return len(h) }
func (h vheap) Less(i, j int) bool {
	if h[i].finish != h[j].finish {
		return h[i].finish < h[j].finish
	}
	return h[i].seq < h[j].seq
}
func (h vheap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *vheap) Push(x any)   { *h = append(*h, x.(*vjob)) }
func (h *vheap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// NewVirtual makes a virtual executor of slots workers; run executes a job
// for real (Runner.Execute on the task's folder), store is shared across runs.
func NewVirtual(slots int, run func(ctx context.Context, job Job) (Execution, error), store *Store) (*Virtual, error) {
	if slots < 1 {
		return nil, fmt.Errorf("virtual executor: need at least one slot, got %d", slots)
	}
	return &Virtual{slots: slots, run: run, store: store, mine: map[string]*vjob{}}, nil
}

// Slots is the number of virtual workers.
func (v *Virtual) Slots() int { return v.slots }

// Now is the virtual clock.
func (v *Virtual) Now() time.Duration { return v.now }

// Stats returns the counts so far.
func (v *Virtual) Stats() VirtualStats {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.stats
}

// Submit starts job at the virtual now; a job the store lacks starts running
// for real in the background, so a burst of submissions runs side by side.
func (v *Virtual) Submit(ctx context.Context, job Job) error {
	j := &vjob{job: job, key: job.Key(), start: v.now, seq: v.seq}
	v.seq++
	if first, ok := v.mine[j.key]; ok {
		j.first = first
		v.count(func(st *VirtualStats) { st.Reused++ })
	} else {
		v.mine[j.key] = j
		if ex, ok, _ := v.store.Get(j.key); ok {
			j.ex = ex
			v.count(func(st *VirtualStats) { st.Stored++ })
		} else {
			v.count(func(st *VirtualStats) { st.Executed++ })
			v.wg.Go(func() {
				// Through the store, so a run beside this one (in this
				// process or another on the same folder) that misses the
				// same program waits for this execution instead of running
				// it again with a duration of its own.
				var ran bool
				j.ex, ran, j.err = v.store.Do(ctx, j.key, func() (Execution, error) { return v.run(ctx, job) })
				if !ran && j.err == nil {
					v.count(func(st *VirtualStats) { st.Executed--; st.Stored++ })
				}
			})
		}
	}
	v.pending = append(v.pending, j)
	return nil
}

// count changes the stats under the lock.
func (v *Virtual) count(f func(*VirtualStats)) {
	v.mu.Lock()
	f(&v.stats)
	v.mu.Unlock()
}

// Next waits for the real executions in progress, then moves the clock to
// the earliest virtual completion and returns it.
func (v *Virtual) Next(ctx context.Context) (Execution, error) {
	if err := ctx.Err(); err != nil {
		return Execution{}, err
	}
	v.wg.Wait()
	for _, j := range v.pending {
		if j.first == nil {
			if j.err != nil {
				return Execution{}, fmt.Errorf("virtual executor: job %s: %w", j.job.ID, j.err)
			}
			j.finish = j.start + time.Duration(j.ex.DurationS*float64(time.Second))
		}
	}
	for _, j := range v.pending {
		if j.first != nil {
			// Done when the execution it reuses is, and not before it was asked for.
			j.finish = max(j.start, j.first.finish)
			j.ex = reuse(j.first.ex, j.job)
		}
		heap.Push(&v.done, j)
	}
	v.pending = v.pending[:0]
	if v.done.Len() == 0 {
		return Execution{}, fmt.Errorf("virtual executor: Next with nothing submitted")
	}
	j := heap.Pop(&v.done).(*vjob)
	v.now = max(v.now, j.finish)
	ex := j.ex
	ex.Episode, ex.Task, ex.Kind, ex.PolicyVersion = j.job.ID, j.job.Task, j.job.Kind, j.job.PolicyVersion
	return ex, nil
}

// Sampled and Updated make Virtual an rl.LearnerClock: the learner's own
// compute is not charged (it is milliseconds for the recipe policy).
func (v *Virtual) Sampled(int) {}

// Updated: see Sampled.
func (v *Virtual) Updated(int) {}
