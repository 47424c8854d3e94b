package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/queue"
)

// runEnv is train's environment: the queue's executions, through the cache,
// graded by the trainer.
type runEnv struct {
	*episode.Graded
	q     *queueEnv
	cache *episode.Cache
}

func (r runEnv) Close() {
	r.cache.Close()
	r.q.Close()
}

// queueFlags say where train's job queue lives. They are not part of the run's
// settings (run.json): a resumed run may be served from another address.
type queueFlags struct {
	listen  string
	natsURL string
	ackWait time.Duration
}

func (q *queueFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&q.listen, "listen", "", "expose the run's job queue (embedded NATS) at `host:port` for workers on other machines (mlerl worker --nats); they need the token in DIR/nats-token, or $"+tokenEnv+" when set")
	fs.StringVar(&q.natsURL, "nats", "", "use the external NATS server (JetStream enabled) at this URL instead of embedding one")
	fs.DurationVar(&q.ackWait, "ack-wait", 30*time.Second, "a job whose worker stops heartbeating is redelivered after this long")
}

func (q *queueFlags) check(workers int) error {
	switch {
	case q.listen != "" && q.natsURL != "":
		return usageErrorf("train: --listen embeds a NATS server, --nats uses an external one: give one of them")
	case workers == 0 && q.listen == "" && q.natsURL == "":
		return usageErrorf("train: --workers 0 runs no local executors: give --listen or --nats so workers can join")
	case q.ackWait <= 0:
		return usageErrorf("train: --ack-wait must be positive")
	}
	return nil
}

// tokenEnv names the environment variable holding the job queue's token,
// read by train and worker alike. A token keeps anyone who can reach a
// --listen port from queueing programs for the workers to run.
const tokenEnv = "MLERL_NATS_TOKEN"

// runToken is the run's own queue token, made on first use and kept in the
// run folder (mode 0600) so that a resume accepts the same workers.
func runToken(dir string) (token, file string, err error) {
	file = filepath.Join(dir, "nats-token")
	if b, err := os.ReadFile(file); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), file, nil
	}
	token = rand.Text()
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("queue token: %w", err)
	}
	return token, file, nil
}

// queueEnv is the broker, the trainer's side of the queue and the local
// executor slots, which are plain workers of the same queue.
type queueEnv struct {
	*queue.Env
	broker     *queue.Broker
	stopLocal  context.CancelFunc
	localDone  sync.WaitGroup
	closeOnce  sync.Once
	localSlots int
}

// newQueue makes the executors of a run: every execution is a job on the run's
// queue (embedded in this process unless --nats names a server), served by
// rc.Workers local slots and by any `mlerl worker` that joins.
func (tr *trainRun) newQueue(ctx context.Context, runner *episode.Runner, tasks []*episode.Prepared) (*queueEnv, error) {
	rc, qf, stderr := tr.rc, tr.queue, tr.stderr
	if err := qf.check(rc.Workers); err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	b, join, err := tr.broker(ctx, log)
	if err != nil {
		return nil, err
	}
	setup, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := b.Setup(setup, queue.SetupConfig{AckWait: qf.ackWait, Fresh: !tr.resuming}); err != nil {
		b.Close()
		return nil, err
	}
	dirs := map[string]string{}
	for _, p := range tasks {
		dirs[p.Task.Name] = p.Task.PublicDir()
	}
	ecfg := queue.EnvConfig{Tasks: dirs, Log: log}
	if qf.natsURL != "" {
		// An external server may be restarted under the run (an upgrade, a
		// moved container) and take a while to recover its store; the
		// trainer reconnects and waits for it rather than failing the run
		// after the default half minute.
		ecfg.SubmitGiveUp = 5 * time.Minute
	}
	env, err := queue.NewEnv(setup, b, ecfg)
	if err != nil {
		b.Close()
		return nil, err
	}
	q := &queueEnv{Env: env, broker: b, localSlots: rc.Workers}
	if b.URL() != "" {
		fmt.Fprintf(stderr, "mlerl: job queue at %s; add executors with: %s\n", b.URL(), join)
	}
	lctx, stop := context.WithCancel(context.Background())
	q.stopLocal = stop
	if rc.Workers > 0 {
		w := &queue.Worker{Exec: runner, Slots: rc.Workers, Data: queue.LocalData(dirs), ID: "train-local", Log: log}
		q.localDone.Go(func() {
			if err := w.Run(lctx, b); err != nil {
				log.Error("local executors stopped", "err", err)
			}
		})
	}
	if err := tr.waitSlots(ctx, env, join); err != nil {
		q.Close()
		return nil, err
	}
	return q, nil
}

// broker connects to the run's job queue: the external server of --nats, or
// one embedded in this process (listening on --listen, with the run's token,
// for workers elsewhere). join is the command that adds a worker.
func (tr *trainRun) broker(ctx context.Context, log *slog.Logger) (b *queue.Broker, join string, err error) {
	qf := tr.queue
	token, tokenFile := os.Getenv(tokenEnv), ""
	if qf.natsURL != "" {
		b, err = queue.Dial(ctx, qf.natsURL, queue.DialConfig{Name: "mlerl-train", Token: token, GiveUp: 30 * time.Second, Log: log})
	} else {
		if qf.listen != "" && token == "" {
			if token, tokenFile, err = runToken(tr.dir); err != nil {
				return nil, "", err
			}
		}
		b, err = queue.Embed(ctx, queue.EmbedConfig{StoreDir: filepath.Join(tr.dir, "nats"), Listen: qf.listen, Token: token, Log: log})
	}
	if err != nil {
		return nil, "", err
	}
	join = "mlerl worker --nats " + b.URL()
	switch {
	case tokenFile != "":
		join = fmt.Sprintf("%s=$(cat %s) %s", tokenEnv, tokenFile, join)
	case token != "":
		join = fmt.Sprintf("%s=<as set here> %s", tokenEnv, join)
	}
	return b, join, nil
}

// waitSlots waits for the executors the run needs (its local slots, or a
// first remote worker), at most --wait-for-workers.
func (tr *trainRun) waitSlots(ctx context.Context, env *queue.Env, join string) error {
	need := max(tr.rc.Workers, 1)
	wctx, cancelWait := ctx, context.CancelFunc(func() {})
	if tr.waitForWorkers > 0 {
		wctx, cancelWait = context.WithTimeout(ctx, tr.waitForWorkers)
	}
	defer cancelWait()
	err := env.WaitSlots(wctx, need, func(have int) {
		fmt.Fprintf(tr.stderr, "mlerl: waiting for executors: %d of %d slots present (join with: %s)\n", have, need, join)
	})
	if err != nil && ctx.Err() == nil && wctx.Err() != nil {
		return fmt.Errorf("no executors joined within --wait-for-workers %v (%d slots needed); start workers with: %s", tr.waitForWorkers, need, join)
	}
	return err
}

// Close stops the local slots (their running episodes are handed back to the
// queue), the trainer's consumers and the broker.
func (q *queueEnv) Close() {
	q.closeOnce.Do(func() {
		q.stopLocal()
		q.localDone.Wait()
		q.Env.Close()
		q.broker.Close()
	})
}

// SummaryStats gives summary.json the broker's and the cache's counts: jobs
// JetStream redelivered after a worker died count as redelivered, next to
// the learner's re-dispatches after a resume. The counts cover this process.
func (r runEnv) SummaryStats() (int, map[string]any) {
	st := r.q.Stats()
	return st.Redelivered, map[string]any{"broker": st, "cache": r.cache.Stats()}
}
