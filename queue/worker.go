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
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/mlerl/mlerl/episode"
)

// Executor runs one job's program in a data folder and returns the raw run;
// *episode.Runner is one.
type Executor interface {
	Execute(ctx context.Context, dataDir string, job episode.Job) (episode.Execution, error)
}

// Worker pulls jobs and runs them, Slots at a time. The trainer's local
// executor slots and `mlerl worker` processes are both Workers.
type Worker struct {
	Exec  Executor
	Slots int
	Data  DataSource
	// ID names the worker in results and logs (default host-pid-random).
	ID string
	// PresenceEvery is how often the worker announces its slots (default 2 s).
	PresenceEvery time.Duration
	// Repeat publishes every result this many extra times, under distinct
	// message ids so the broker cannot deduplicate them: fault injection for
	// tests of the trainer's deduplication. Zero in real use.
	Repeat int
	// Started, when set, is called as each job starts executing (tests, logs).
	Started func(episode string, attempt uint64)
	// StopGrace is how long a result that finished keeps being offered to
	// the broker once ctx ends (default 10 s): long enough for a broker that
	// is up, short enough that a stopped worker does not linger for one that
	// is not.
	StopGrace time.Duration
	Log       *slog.Logger

	busy atomic.Int64
	done atomic.Int64
}

// presence is what a worker announces on the workers subject.
type presence struct {
	ID      string `json:"id"`
	Slots   int    `json:"slots"` // 0: leaving
	Busy    int    `json:"busy"`
	EveryMS int64  `json:"every_ms"`
}

// Done is the number of results this worker has published.
func (w *Worker) Done() int64 { return w.done.Load() }

// Run serves jobs until ctx ends. Jobs running then are handed back (Nak) so
// another worker takes them at once instead of after AckWait.
func (w *Worker) Run(ctx context.Context, b *Broker) error {
	if w.Slots < 1 {
		return fmt.Errorf("queue: worker needs at least one slot, got %d", w.Slots)
	}
	if w.Exec == nil || w.Data == nil {
		return errors.New("queue: worker needs an executor and a data source")
	}
	if w.ID == "" {
		host, _ := os.Hostname()
		var r [3]byte
		_, _ = rand.Read(r[:])
		w.ID = host + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(r[:])
	}
	if w.PresenceEvery <= 0 {
		w.PresenceEvery = 2 * time.Second
	}
	log := logger(w.Log).With("worker", w.ID)

	// The trainer creates the job stream; a worker started first waits for it.
	var cons jetstream.Consumer
	err := retry(ctx, log, "binding to job stream "+b.n.jobsStream+" (is train running?)", 0, func(ctx context.Context) error {
		var err error
		cons, err = b.js.Consumer(ctx, b.n.jobsStream, workersConsumer)
		return err
	})
	if err != nil {
		return fmt.Errorf("queue: worker: %w", err)
	}
	ackWait := 30 * time.Second
	if ci := cons.CachedInfo(); ci != nil && ci.Config.AckWait > 0 {
		ackWait = ci.Config.AckWait
	}

	stopPresence := w.announce(ctx, b, log)
	defer stopPresence()

	var wg sync.WaitGroup
	for range w.Slots {
		wg.Go(func() { w.slot(ctx, b, cons, ackWait, log) })
	}
	wg.Wait()
	return nil
}

// announce publishes presence now and every PresenceEvery until stopped, then
// says goodbye so the trainer stops counting this worker's slots.
func (w *Worker) announce(ctx context.Context, b *Broker, log *slog.Logger) (stop func()) {
	send := func(slots int) {
		p, _ := json.Marshal(presence{ID: w.ID, Slots: slots, Busy: int(w.busy.Load()), EveryMS: w.PresenceEvery.Milliseconds()})
		if err := b.nc.Publish(b.n.workersSubject, p); err != nil {
			log.Debug("presence", "err", err)
		}
	}
	send(w.Slots)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(w.PresenceEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				send(0)
				_ = b.nc.Flush()
				return
			case <-t.C:
				send(w.Slots)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// slot is one executor: fetch a job, run it, publish the result, ack; again.
func (w *Worker) slot(ctx context.Context, b *Broker, cons jetstream.Consumer, ackWait time.Duration, log *slog.Logger) {
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		batch, err := cons.Fetch(1, jetstream.FetchContext(fctx))
		if err == nil {
			for m := range batch.Messages() {
				w.handle(ctx, b, m, ackWait, log)
			}
			err = batch.Error()
		}
		cancel()
		switch {
		case err == nil, errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), errors.Is(err, jetstream.ErrNoMessages):
			wait = 100 * time.Millisecond
		default:
			// Broker gone or consumer deleted: back off rather than spin.
			log.Warn("fetching a job", "err", err, "retry_in", wait)
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
			wait = min(2*wait, 5*time.Second)
		}
	}
}

func (w *Worker) handle(ctx context.Context, b *Broker, m jetstream.Msg, ackWait time.Duration, log *slog.Logger) {
	var jm jobMsg
	if err := json.Unmarshal(m.Data(), &jm); err != nil {
		log.Error("undecodable job, dropped", "err", err)
		_ = m.TermWithReason("undecodable")
		return
	}
	// The job message's stream sequence names this delivery in result ids:
	// unique across a resume (a re-submitted job is a new message), stable
	// across retried publishes of one result.
	var attempt, seq uint64 = 1, 0
	if md, err := m.Metadata(); err == nil {
		attempt, seq = md.NumDelivered, md.Sequence.Stream
	}
	log = log.With("episode", jm.Job.ID, "attempt", attempt)

	// Heartbeat for as long as the job is ours, through data download,
	// execution and result publishing: only a dead worker loses its job.
	defer heartbeat(ctx, m, ackWait, log)()

	if jm.Job.Data == "" {
		jm.Job.Data = jm.Data
	}
	dir, err := w.Data.Dir(ctx, jm.Job.Task, jm.Job.Data)
	if err != nil {
		log.Error("task data unavailable; job handed back", "task", jm.Job.Task, "err", err)
		_ = m.NakWithDelay(5 * time.Second)
		return
	}
	w.busy.Add(1)
	if w.Started != nil {
		w.Started(jm.Job.ID, attempt)
	}
	ex, err := w.Exec.Execute(ctx, dir, jm.Job)
	w.busy.Add(-1)
	if ctx.Err() != nil {
		// We are shutting down and cut the run short: not the program's doing.
		_ = m.Nak()
		return
	}
	if err != nil {
		// The machinery failed (sandbox, instrumenter): let another worker try.
		log.Error("execution failed; job handed back", "err", err)
		_ = m.NakWithDelay(10 * time.Second)
		return
	}

	w.deliver(ctx, b, m, jm, resultMsg{Exec: ex, Digest: jm.Digest, Worker: w.ID, Attempt: attempt, Submission: ex.Submission}, seq, log)
}

// heartbeat tells JetStream the job m is in progress every third of ackWait
// until the returned stop is called.
func heartbeat(ctx context.Context, m jetstream.Msg, ackWait time.Duration, log *slog.Logger) (stop func()) {
	hbCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(max(ackWait/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-hbCtx.Done():
				return
			case <-t.C:
				if err := m.InProgress(); err != nil {
					log.Debug("heartbeat", "err", err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// deliver publishes a finished job's result, then acks the job.
func (w *Worker) deliver(ctx context.Context, b *Broker, m jetstream.Msg, jm jobMsg, rm resultMsg, seq uint64, log *slog.Logger) {
	attempt := rm.Attempt
	// A result that finished is worth delivering even while shutting down,
	// but only for StopGrace after ctx ends, whether it ended before this
	// call or during its retries: a worker told to stop while the broker
	// refuses results must not go on retrying for the full ten minutes.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
	defer cancel()
	grace := w.StopGrace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	stopGrace := context.AfterFunc(ctx, func() { time.AfterFunc(grace, cancel) })
	defer stopGrace()
	// One name for this delivery's result, in the submission store and as the
	// message id: unique across resumes (seq), stable across retries. The
	// random part is for a server SIGKILLed just after delivering the job:
	// it can forget the delivery and hand the job out again with the same
	// count, possibly to this worker. The two runs' results must stay two
	// messages (the trainer counts the second as a duplicate) and two
	// submission objects (one must not overwrite the other under the first's
	// checksum).
	var nonce [4]byte
	_, _ = rand.Read(nonce[:])
	delivery := jm.Job.ID + "-" + jm.Digest[:12] + "-" + strconv.FormatUint(seq, 10) + "-" + w.ID + "-" + strconv.FormatUint(attempt, 10) + "-" + hex.EncodeToString(nonce[:])
	data, err := w.encode(pctx, b, &rm, delivery)
	if err != nil {
		log.Error("encoding result; job handed back", "err", err)
		_ = m.NakWithDelay(5 * time.Second)
		return
	}
	for i := 0; i <= w.Repeat; i++ {
		id := delivery
		if i > 0 {
			id += "-repeat" + strconv.Itoa(i)
		}
		err := retry(pctx, log, "publishing result of "+jm.Job.ID, 0, func(ctx context.Context) error {
			_, err := b.js.Publish(ctx, b.n.resultsSubject, data, jetstream.WithMsgID(id))
			return err
		})
		if err != nil {
			log.Error("result not delivered; the job will be redelivered", "err", err)
			return
		}
	}
	w.done.Add(1)
	// Acked only once the result is stored: dying in between runs the job
	// again, and the trainer keeps the first result. The wait for the
	// server's confirmation is short: a server restarted without this
	// delivery (its store lost, or its last moments before a SIGKILL) never
	// answers, and the slot must go back to fetching rather than wait out
	// pctx; at worst the job runs again and the trainer drops the duplicate.
	actx, cancelAck := context.WithTimeout(pctx, 10*time.Second)
	defer cancelAck()
	if err := m.DoubleAck(actx); err != nil {
		log.Warn("job ack unconfirmed; the broker may deliver it again", "err", err)
	}
}

// encode marshals rm, moving the submission to the submission store when the
// message would not fit the server's max_payload, and trimming the output as
// a last resort (a program can print anything).
func (w *Worker) encode(ctx context.Context, b *Broker, rm *resultMsg, name string) ([]byte, error) {
	limit := int(b.nc.MaxPayload()) - 16<<10 // room for headers
	data, err := json.Marshal(rm)
	if err != nil || len(data) <= limit {
		return data, err
	}
	if len(rm.Submission) > 0 {
		sum := sha256.Sum256(rm.Submission)
		store, err := b.js.ObjectStore(ctx, b.n.subsBucket)
		if err != nil {
			return nil, fmt.Errorf("object store %s: %w", b.n.subsBucket, err)
		}
		if _, err := store.PutBytes(ctx, name, rm.Submission); err != nil {
			return nil, fmt.Errorf("storing submission of %d bytes: %w", len(rm.Submission), err)
		}
		rm.SubmissionObject, rm.SubmissionSHA, rm.Submission = name, hex.EncodeToString(sum[:]), nil
		if data, err = json.Marshal(rm); err != nil || len(data) <= limit {
			return data, err
		}
	}
	for len(data) > limit && len(rm.Exec.Output) > 1024 {
		out := rm.Exec.Output
		keep := len(out) / 4
		rm.Exec.Output = out[:keep] + "\n[... output trimmed to fit the result message ...]\n" + out[len(out)-keep:]
		if data, err = json.Marshal(rm); err != nil {
			return nil, err
		}
	}
	return data, nil
}
