package queue

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mlerl/mlerl/episode"
)

// EnvConfig configures the trainer's side of the queue.
type EnvConfig struct {
	// Tasks maps each task's name to the folder of its public files, which
	// NewEnv publishes for the workers. The queue never sees answers: it
	// moves jobs and executions; the trainer grades (episode.Graded).
	Tasks map[string]string
	// SubmitGiveUp bounds how long Submit retries publishing a job while the
	// broker does not answer (default 30 s); then it fails, and so does the run.
	SubmitGiveUp time.Duration
	Log          *slog.Logger
}

// Stats are the broker-level counts of a run (this process's part of it).
type Stats struct {
	Published int `json:"jobs_published"`
	Results   int `json:"results_received"`
	Accepted  int `json:"accepted"`
	// Redelivered counts accepted results whose job JetStream delivered more
	// than once (a worker died or went silent past AckWait);
	// RedeliveredAttempts sums the extra deliveries.
	Redelivered         int `json:"redelivered"`
	RedeliveredAttempts int `json:"redelivered_attempts"`
	// Duplicates are further results for a job already completed.
	Duplicates int `json:"duplicates"`
	// Stale results answer a job id whose content has changed (ids reused
	// after a resume) or a task this run does not have.
	Stale int `json:"stale"`
	// Reused results arrived before their job was (re-)submitted after a
	// resume and answered it without running it again.
	Reused int `json:"reused"`
	// Exhausted jobs hit MaxDeliver: JetStream stopped redelivering them.
	Exhausted int `json:"exhausted"`
	// Republished jobs had a result that could not be used (its submission
	// object was missing or corrupt) and were queued again.
	Republished int `json:"republished"`
	Bad         int `json:"bad_messages"`
	WorkersSeen int `json:"workers_seen"`
	// StateLost counts reconnections to a server without the run's streams
	// (its store lost or replaced): the Env laid the broker out again,
	// re-published the task files and re-sent every job in flight (Resent).
	StateLost int `json:"broker_state_lost"`
	Resent    int `json:"jobs_resent"`
}

// Env is the queue as an executor (episode.Executor): Submit publishes a job,
// Next returns executions in arrival order. Its slots are those
// the live workers announce, so a fleet can grow and shrink during a run.
type Env struct {
	b     *Broker
	cfg   EnvConfig
	log   *slog.Logger
	data  map[string]string // task -> checksum of its public files
	start time.Time
	// session is random per Env, part of every job message id.
	session string
	rctx    context.Context // ends at Close: result handling and the watch
	cancel  context.CancelFunc
	watched chan struct{} // closed when watch returns
	subs    []*nats.Subscription

	mu       sync.Mutex
	cons     jetstream.ConsumeContext
	restores int                 // rebuilds after a lost server state
	pending  map[string]inflight // episode id -> the job in flight
	done     map[string]bool     // episode ids completed
	parked   map[string]parked   // results that came before their job (resume)
	ready    []episode.Execution
	wake     chan struct{}
	workers  map[string]seen
	stats    Stats
}

type inflight struct {
	digest string
	job    episode.Job
	tries  int // publications after the first (unusable results)
}

type parked struct {
	digest  string
	ex      episode.Execution
	attempt uint64
}

type seen struct {
	p    presence
	last time.Time
}

// NewEnv publishes the tasks' public files, starts reading results and
// listening for workers. Call Setup on b first.
func NewEnv(ctx context.Context, b *Broker, cfg EnvConfig) (*Env, error) {
	if len(cfg.Tasks) == 0 {
		return nil, errors.New("queue: env needs at least one task")
	}
	if cfg.SubmitGiveUp <= 0 {
		cfg.SubmitGiveUp = 30 * time.Second
	}
	e := &Env{
		b: b, cfg: cfg, log: logger(cfg.Log), data: map[string]string{},
		pending: map[string]inflight{}, done: map[string]bool{}, parked: map[string]parked{},
		wake: make(chan struct{}, 1), workers: map[string]seen{}, start: time.Now(),
		session: rand.Text()[:10],
	}
	for name, dir := range cfg.Tasks {
		sum, err := b.PublishData(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("queue: task %s: %w", name, err)
		}
		e.data[name] = sum
	}
	sub, err := b.nc.Subscribe(b.n.workersSubject, e.onPresence)
	if err != nil {
		return nil, fmt.Errorf("queue: subscribing to %s: %w", b.n.workersSubject, err)
	}
	e.subs = append(e.subs, sub)
	adv := "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + b.n.jobsStream + "." + workersConsumer
	if sub, err = b.nc.Subscribe(adv, e.onExhausted); err != nil {
		e.Close()
		return nil, fmt.Errorf("queue: subscribing to %s: %w", adv, err)
	}
	e.subs = append(e.subs, sub)
	e.rctx, e.cancel = context.WithCancel(context.Background())
	if err := e.consume(ctx); err != nil {
		e.Close()
		return nil, err
	}
	e.watched = make(chan struct{})
	go e.watch(e.rctx)
	return e, nil
}

// consume starts reading results, replacing the reader it had.
func (e *Env) consume(ctx context.Context) error {
	cons, err := e.b.js.Consumer(ctx, e.b.n.resultsStream, trainerConsumer)
	if err != nil {
		return fmt.Errorf("queue: consumer %s: %w", trainerConsumer, err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) { e.onResult(e.rctx, m) })
	if err != nil {
		return fmt.Errorf("queue: reading results: %w", err)
	}
	e.mu.Lock()
	old := e.cons
	e.cons = cc
	e.mu.Unlock()
	if old != nil {
		old.Stop()
	}
	return nil
}

// watch looks at the broker after every reconnection. A server restarted on
// its own store still has the streams, consumers (with their unacked jobs)
// and stored results, and the clients simply resume; one that lost its
// store has none of them, and every job in flight would wait forever.
// Reconnections are read off the connection's counter once a second, which
// costs nothing; a rebuild that fails is tried again on the next tick.
func (e *Env) watch(ctx context.Context) {
	defer close(e.watched)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	seen, rebuild := e.b.nc.Stats().Reconnects, false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n := e.b.nc.Stats().Reconnects
		if (n == seen && !rebuild) || !e.b.nc.IsConnected() {
			continue
		}
		if !rebuild {
			lost, err := e.stateLost(ctx)
			if err != nil {
				e.log.Warn("checking the broker after a reconnection; trying again", "err", err)
				continue
			}
			seen, rebuild = n, lost
			if lost {
				e.mu.Lock()
				e.stats.StateLost++
				e.mu.Unlock()
			}
		}
		if rebuild {
			if err := e.rebuild(ctx); err != nil {
				e.log.Warn("rebuilding the broker's streams; trying again", "err", err)
				continue
			}
			rebuild = false
		}
	}
}

// stateLost says whether the server lacks the run's consumers.
func (e *Env) stateLost(ctx context.Context) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	lost := false
	for _, sc := range [][2]string{{e.b.n.jobsStream, workersConsumer}, {e.b.n.resultsStream, trainerConsumer}} {
		_, err := e.b.js.Consumer(ctx, sc[0], sc[1])
		switch {
		case errors.Is(err, jetstream.ErrStreamNotFound), errors.Is(err, jetstream.ErrConsumerNotFound):
			lost = true
		case err != nil:
			return false, fmt.Errorf("queue: consumer %s on %s: %w", sc[1], sc[0], err)
		}
	}
	return lost, nil
}

// rebuild lays the broker out again, re-publishes the task files, reads
// results anew and re-sends every job in flight: the ones the lost store
// held are gone, and results of them it held are too. A job that still
// finishes on the worker that had it sends a result the trainer takes or
// drops as a duplicate; either way the job completes once.
func (e *Env) rebuild(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	e.log.Warn("the NATS server came back without this run's streams; laying them out again and re-sending the jobs in flight")
	if err := e.b.Relayout(ctx); err != nil {
		return err
	}
	for name, dir := range e.cfg.Tasks {
		sum, err := e.b.PublishData(ctx, dir)
		if err != nil {
			return fmt.Errorf("queue: task %s: %w", name, err)
		}
		if sum != e.data[name] {
			// Workers verify the checksum the jobs carry and will refuse it.
			e.log.Error("task files changed during the run; its jobs cannot run", "task", name, "dir", dir)
		}
	}
	if err := e.consume(ctx); err != nil {
		return err
	}
	e.mu.Lock()
	e.restores++
	k := e.restores
	jobs := make([]inflight, 0, len(e.pending))
	for _, j := range e.pending {
		jobs = append(jobs, j)
	}
	e.mu.Unlock()
	for _, j := range jobs {
		// A suffix of its own: a publication of the job the new server has
		// not seen, whatever ids the old one remembered.
		if err := e.publish(ctx, j.job, j.digest, fmt.Sprintf("-lost%d", k)); err != nil {
			return err
		}
		e.mu.Lock()
		e.stats.Resent++
		e.mu.Unlock()
	}
	return nil
}

// WaitSlots blocks until workers announcing at least n slots are live; it
// restarts the Env's clock, so waiting costs no budget. note is called once
// when the wait has lasted a few seconds (local slots announce themselves
// well within that), then once a minute: a run waiting all night for its
// first worker prints one line an hour times sixty, not one every second.
func (e *Env) WaitSlots(ctx context.Context, n int, note func(have int)) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	const first, every = 3 * time.Second, time.Minute
	last := time.Now().Add(first - every) // the first note after `first`
	for {
		have := e.liveSlots()
		if have >= n {
			e.mu.Lock()
			e.start = time.Now()
			e.mu.Unlock()
			return nil
		}
		if note != nil && time.Since(last) >= every {
			note(have)
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("queue: waiting for %d worker slots (have %d): %w", n, have, ctx.Err())
		case <-t.C:
		}
	}
}

// Slots is the number of slots live workers announce, at least 1: with no
// worker at all one job waits in the queue for the first to join, instead
// of the learner concluding there is nothing to do.
func (e *Env) Slots() int { return max(1, e.liveSlots()) }

func (e *Env) liveSlots() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	now := time.Now()
	for id, s := range e.workers {
		if now.Sub(s.last) > 3*time.Duration(max(s.p.EveryMS, 1))*time.Millisecond {
			delete(e.workers, id) // silent for three announcements: gone
			continue
		}
		n += s.p.Slots
	}
	return n
}

// Busy is the number of episodes the live workers say they are running.
func (e *Env) Busy() int {
	e.liveSlots() // prune
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, s := range e.workers {
		n += s.p.Busy
	}
	return n
}

// Now is the wall-clock time since the Env started (or last finished waiting for workers).
func (e *Env) Now() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return time.Since(e.start)
}

// Pending is the number of submitted jobs without an accepted result.
func (e *Env) Pending() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.pending)
}

// Stats returns the broker-level counts so far.
func (e *Env) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stats
}

// Submit queues job. A result already received for the same job (a resume
// finding results of jobs that were in flight at the crash) answers it at once.
func (e *Env) Submit(ctx context.Context, job episode.Job) error {
	sum, ok := e.data[job.Task]
	switch {
	case !ok:
		return fmt.Errorf("queue: job %s: unknown task %q", job.ID, job.Task)
	case job.Data == "":
		job.Data = sum
	case job.Data != sum:
		return fmt.Errorf("queue: job %s: task %s data %.12s is not the published %.12s", job.ID, job.Task, job.Data, sum)
	}
	d := digest(job)
	e.mu.Lock()
	if p, ok := e.parked[job.ID]; ok {
		delete(e.parked, job.ID)
		if p.digest == d {
			e.accept(job.ID, p.ex, p.attempt)
			e.stats.Reused++
			e.mu.Unlock()
			return nil
		}
		e.stats.Stale++
	}
	delete(e.done, job.ID)
	e.pending[job.ID] = inflight{digest: d, job: job}
	e.mu.Unlock()
	if err := e.publish(ctx, job, d, ""); err != nil {
		e.mu.Lock()
		delete(e.pending, job.ID)
		e.mu.Unlock()
		return err
	}
	return nil
}

func (e *Env) publish(ctx context.Context, job episode.Job, d, suffix string) error {
	data, err := json.Marshal(jobMsg{Job: job, Digest: d, Data: job.Data})
	if err != nil {
		return fmt.Errorf("queue: encoding job %s: %w", job.ID, err)
	}
	// The message id makes a retried publish idempotent within the stream's
	// duplicate window: a publish whose ack was lost is not queued twice.
	// The session part keeps a resumed trainer's re-submission of the same
	// job from being taken for such a retry: Setup purged the stream, but
	// JetStream still remembers the ids.
	err = retry(ctx, e.log, "publishing job "+job.ID, e.cfg.SubmitGiveUp, func(ctx context.Context) error {
		_, err := e.b.js.Publish(ctx, e.b.n.jobsSubject, data, jetstream.WithMsgID(job.ID+"-"+d+"-"+e.session+suffix))
		return err
	})
	if err != nil {
		return fmt.Errorf("queue: %w", err)
	}
	e.mu.Lock()
	e.stats.Published++
	e.mu.Unlock()
	return nil
}

// Next returns the next accepted execution, in arrival order.
func (e *Env) Next(ctx context.Context) (episode.Execution, error) {
	for {
		e.mu.Lock()
		if len(e.ready) > 0 {
			r := e.ready[0]
			e.ready[0] = episode.Execution{}
			e.ready = e.ready[1:]
			e.mu.Unlock()
			return r, nil
		}
		e.mu.Unlock()
		select {
		case <-e.wake:
		case <-ctx.Done():
			return episode.Execution{}, ctx.Err()
		}
	}
}

// accept files ex as the one execution of its job; e.mu is held.
func (e *Env) accept(id string, ex episode.Execution, attempt uint64) {
	delete(e.pending, id)
	e.done[id] = true
	e.stats.Accepted++
	if attempt > 1 {
		e.stats.Redelivered++
		e.stats.RedeliveredAttempts += int(attempt - 1)
	}
	e.ready = append(e.ready, ex)
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// onResult handles one result message. JetStream calls it on one goroutine.
func (e *Env) onResult(ctx context.Context, m jetstream.Msg) {
	defer func() { _ = m.Ack() }() // every decision below is final once in memory
	var rm resultMsg
	if err := json.Unmarshal(m.Data(), &rm); err != nil {
		e.mu.Lock()
		e.stats.Bad++
		e.mu.Unlock()
		e.log.Error("undecodable result, dropped", "err", err)
		return
	}
	id := rm.Exec.Episode
	e.mu.Lock()
	e.stats.Results++
	want, pending := e.pending[id]
	switch {
	case pending && want.digest != rm.Digest:
		e.stats.Stale++
		e.mu.Unlock()
		e.log.Info("result for an older job under the same id, ignored", "episode", id)
		return
	case !pending && e.done[id]:
		e.stats.Duplicates++
		e.mu.Unlock()
		e.log.Info("second result for a completed job, ignored", "episode", id, "worker", rm.Worker, "attempt", rm.Attempt)
		return
	}
	e.mu.Unlock()

	if _, ok := e.data[rm.Exec.Task]; !ok {
		e.mu.Lock()
		e.stats.Stale++
		e.mu.Unlock()
		return
	}
	sub, err := e.submission(ctx, rm)
	if err != nil {
		e.log.Error("result unusable; job queued again", "episode", id, "err", err)
		e.mu.Lock()
		j, still := e.pending[id]
		if still && j.digest == rm.Digest {
			j.tries++
			e.pending[id] = j
			e.stats.Republished++
		}
		e.mu.Unlock()
		if still && j.digest == rm.Digest {
			if err := e.publish(ctx, j.job, j.digest, fmt.Sprintf("-r%d", j.tries)); err != nil {
				e.log.Error("requeueing failed; the job stays in flight until the budget ends", "episode", id, "err", err)
			}
		}
		return
	}
	rm.Exec.Submission = sub

	e.mu.Lock()
	defer e.mu.Unlock()
	want, pending = e.pending[id]
	switch {
	case pending && want.digest == rm.Digest:
		e.accept(id, rm.Exec, rm.Attempt)
	case pending:
		e.stats.Stale++
	case e.done[id]:
		e.stats.Duplicates++
	default:
		// No such job here (yet): a result that outlived a crash of the
		// trainer. Kept for the re-submission of the same job.
		e.parked[id] = parked{digest: rm.Digest, ex: rm.Exec, attempt: rm.Attempt}
	}
}

// submission returns the result's submission bytes, from the store if it
// travelled there.
func (e *Env) submission(ctx context.Context, rm resultMsg) ([]byte, error) {
	if rm.SubmissionObject == "" {
		return rm.Submission, nil
	}
	var b []byte
	err := retry(ctx, e.log, "reading submission "+rm.SubmissionObject, time.Minute, func(ctx context.Context) error {
		store, err := e.b.js.ObjectStore(ctx, e.b.n.subsBucket)
		if err != nil {
			return err
		}
		b, err = store.GetBytes(ctx, rm.SubmissionObject)
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			return nil // permanent: reported below
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, fmt.Errorf("submission %s not in %s", rm.SubmissionObject, e.b.n.subsBucket)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != rm.SubmissionSHA {
		return nil, fmt.Errorf("submission %s: checksum %s, want %s", rm.SubmissionObject, got[:12], rm.SubmissionSHA)
	}
	return b, nil
}

func (e *Env) onPresence(m *nats.Msg) {
	var p presence
	if err := json.Unmarshal(m.Data, &p); err != nil || p.ID == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if p.Slots == 0 {
		delete(e.workers, p.ID)
		return
	}
	if _, ok := e.workers[p.ID]; !ok {
		e.stats.WorkersSeen++
		e.log.Info("worker joined", "worker", p.ID, "slots", p.Slots)
	}
	e.workers[p.ID] = seen{p: p, last: time.Now()}
}

func (e *Env) onExhausted(m *nats.Msg) {
	e.mu.Lock()
	e.stats.Exhausted++
	e.mu.Unlock()
	e.log.Error("a job reached its delivery limit and will not be redelivered", "advisory", string(m.Data))
}

// Close stops reading results and listening for workers. The broker stays open.
func (e *Env) Close() {
	if e.cancel != nil {
		e.cancel()
	}
	if e.watched != nil {
		<-e.watched // no rebuild starts a reader after this
	}
	e.mu.Lock()
	cc := e.cons
	e.cons = nil
	e.mu.Unlock()
	if cc != nil {
		cc.Stop()
	}
	for _, s := range e.subs {
		_ = s.Unsubscribe()
	}
}
