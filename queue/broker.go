// Package queue carries episode executions over NATS JetStream (DESIGN.md,
// "Distribution"). Every execution is a message on a work-queue stream of
// jobs; workers — goroutines inside `train` or `mlerl worker` processes on
// other machines, one code path for both — pull jobs, run them in their own
// sandbox and publish the raw run on a work-queue stream of results. The
// trainer (Env) grades each run against the private answers, which never
// leave it, and hands the result to the learner.
//
// Layout on the broker, for a prefix P (default "mlerl"):
//
//	stream P-jobs      subject P.jobs     work queue; durable pull consumer "workers"
//	stream P-results   subject P.results  work queue; durable pull consumer "trainer"
//	object store P-tasks                  each task's public files, one tar named by its SHA-256
//	object store P-subs                   submissions too large to travel inside a result
//	subject P.workers                     core NATS: workers announce their slots every few seconds
//
// Delivery is at least once. A job whose worker dies stops being heartbeated
// (InProgress) and is redelivered after AckWait; a worker that dies after
// publishing its result but before acking the job makes the job run twice.
// The trainer therefore accepts exactly one result per submitted job, matched
// by episode id and a digest of the job's content (see Env).
//
// An external server (train --nats) may restart mid-run. Clients reconnect
// on their own. Restarted on its file store, it still holds the queued and
// unacked jobs and the unread results: live workers carry on heartbeating
// their jobs, a worker that died meanwhile has its jobs redelivered after
// AckWait, and a delivery the server forgot in its last moments runs twice
// (the trainer drops the second result). Restarted without its store, it
// holds nothing of the run: the Env notices on reconnecting, lays the broker
// out again and re-sends every job in flight (Env.watch).
package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultPrefix names the streams, subjects and buckets of a run.
const DefaultPrefix = "mlerl"

// names are the broker objects of one prefix.
type names struct {
	jobsStream, resultsStream   string
	jobsSubject, resultsSubject string
	workersSubject              string
	tasksBucket, subsBucket     string
}

var prefixRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func namesFor(prefix string) (names, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if !prefixRE.MatchString(prefix) {
		return names{}, fmt.Errorf("queue: prefix %q: use letters, digits, '-' and '_'", prefix)
	}
	return names{
		jobsStream: prefix + "-jobs", resultsStream: prefix + "-results",
		jobsSubject: prefix + ".jobs", resultsSubject: prefix + ".results",
		workersSubject: prefix + ".workers",
		tasksBucket:    prefix + "-tasks", subsBucket: prefix + "-subs",
	}, nil
}

const (
	workersConsumer = "workers"
	trainerConsumer = "trainer"
)

// Broker is a connection to a NATS server with JetStream, and the embedded
// server when this process runs it.
type Broker struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	srv    *server.Server // nil when the server is external
	n      names
	url    string // what workers dial; "" when the embedded server does not listen
	log    *slog.Logger
	prefix string

	mu    sync.Mutex
	setup *SetupConfig // as Setup last laid the broker out, defaults applied
}

// EmbedConfig configures a NATS server inside this process.
type EmbedConfig struct {
	// StoreDir holds JetStream's file store (e.g. the run folder's nats/), so
	// queued jobs and unread results survive a crash of the process.
	StoreDir string
	// Listen is host:port for other processes to connect to; "" accepts only
	// the in-process connection. Port 0 picks a free port.
	Listen string
	// Token, when set, is required of every connection from outside the
	// process: whoever can publish jobs decides what code the workers run.
	Token  string
	Prefix string
	Log    *slog.Logger
}

// Embed starts a NATS server with JetStream in this process and connects to
// it in-process (no TCP for the trainer's own traffic).
func Embed(ctx context.Context, cfg EmbedConfig) (*Broker, error) {
	n, err := namesFor(cfg.Prefix)
	if err != nil {
		return nil, err
	}
	opts := &server.Options{
		ServerName: "mlerl", JetStream: true, StoreDir: cfg.StoreDir,
		NoSigs: true, NoLog: true, DontListen: cfg.Listen == "",
	}
	if cfg.Listen != "" {
		host, port, err := net.SplitHostPort(cfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("queue: listen address %q: %w", cfg.Listen, err)
		}
		p, err := strconv.Atoi(port)
		if err != nil || p < 0 || p > 65535 {
			return nil, fmt.Errorf("queue: listen address %q: bad port", cfg.Listen)
		}
		if p == 0 {
			p = server.RANDOM_PORT // nats-server reads 0 as its default 4222
		}
		opts.Host, opts.Port = host, p
		opts.Authorization = cfg.Token
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("queue: embedded NATS server: %w", err)
	}
	go srv.Start()
	// Readiness includes recovering the file store, which grows with the
	// queue; bounded by ctx as well as by a generous limit.
	ready := make(chan bool, 1)
	go func() { ready <- srv.ReadyForConnections(time.Minute) }()
	select {
	case ok := <-ready:
		if !ok {
			srv.Shutdown()
			return nil, fmt.Errorf("queue: embedded NATS server (store %s, listen %q) not ready after a minute", cfg.StoreDir, cfg.Listen)
		}
	case <-ctx.Done():
		srv.Shutdown()
		return nil, fmt.Errorf("queue: starting embedded NATS server: %w", ctx.Err())
	}
	nc, err := nats.Connect(srv.ClientURL(), nats.InProcessServer(srv), nats.Name("mlerl-train"), nats.MaxReconnects(-1), nats.Token(opts.Authorization))
	if err != nil {
		srv.Shutdown()
		return nil, fmt.Errorf("queue: in-process connection: %w", err)
	}
	b, err := newBroker(nc, n, cfg.Log)
	if err != nil {
		nc.Close()
		srv.Shutdown()
		return nil, err
	}
	b.srv, b.prefix = srv, cfg.Prefix
	if cfg.Listen != "" {
		if addr, ok := srv.Addr().(*net.TCPAddr); ok {
			b.url = fmt.Sprintf("nats://%s", net.JoinHostPort(advertised(opts.Host, addr), strconv.Itoa(addr.Port)))
		}
	}
	return b, nil
}

// advertised is the host workers should dial: the listen host, or this
// machine's name when listening on every interface.
func advertised(host string, addr *net.TCPAddr) string {
	if host == "" || host == "0.0.0.0" || host == "::" {
		if name, err := os.Hostname(); err == nil && name != "" {
			return name
		}
		return "127.0.0.1"
	}
	return addr.IP.String()
}

// DialConfig configures a connection to an external NATS server.
type DialConfig struct {
	Name   string // client name shown by the server
	Token  string // sent to a server that requires one (EmbedConfig.Token)
	Prefix string
	// GiveUp bounds how long an unreachable server is retried (0: until ctx ends).
	GiveUp time.Duration
	Log    *slog.Logger
}

// Dial connects to the NATS server at url, retrying with exponential backoff
// (250 ms doubling to 5 s) while it is unreachable: a trainer may start after
// its workers, and a worker may outlive a trainer's restart. Each failure is
// logged; the error after giving up names the server and the last cause.
// Once connected, the client reconnects on its own for as long as it lives.
func Dial(ctx context.Context, url string, cfg DialConfig) (*Broker, error) {
	n, err := namesFor(cfg.Prefix)
	if err != nil {
		return nil, err
	}
	log := logger(cfg.Log)
	start := time.Now()
	wait := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		nc, err := nats.Connect(url, nats.Name(cfg.Name), nats.Timeout(2*time.Second), nats.Token(cfg.Token),
			nats.MaxReconnects(-1), nats.ReconnectWait(time.Second),
			nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
				if err != nil {
					log.Warn("NATS connection lost; reconnecting", "url", url, "err", err)
				}
			}),
			nats.ReconnectHandler(func(*nats.Conn) { log.Info("NATS reconnected", "url", url) }))
		if err == nil {
			b, err := newBroker(nc, n, log)
			if err != nil {
				nc.Close()
				return nil, err
			}
			b.url, b.prefix = url, cfg.Prefix
			return b, nil
		}
		if errors.Is(err, nats.ErrAuthorization) {
			// Retrying cannot help; say so at once.
			return nil, fmt.Errorf("queue: NATS at %s refused the connection (wrong or missing token): %w", url, err)
		}
		spent := time.Since(start)
		if cfg.GiveUp > 0 && spent+wait > cfg.GiveUp {
			return nil, fmt.Errorf("queue: NATS at %s unreachable after %d attempts over %v: %w", url, attempt, spent.Round(time.Millisecond), err)
		}
		log.Warn("NATS unreachable; retrying", "url", url, "attempt", attempt, "retry_in", wait, "err", err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("queue: NATS at %s unreachable after %d attempts (%v): %w", url, attempt, err, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

func newBroker(nc *nats.Conn, n names, log *slog.Logger) (*Broker, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("queue: jetstream: %w", err)
	}
	return &Broker{nc: nc, js: js, n: n, log: logger(log)}, nil
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// URL is the address workers dial, "" when nothing outside this process can.
func (b *Broker) URL() string { return b.url }

// Embedded says whether this process runs the server.
func (b *Broker) Embedded() bool { return b.srv != nil }

// Close drains nothing: it closes the connection and stops an embedded server.
func (b *Broker) Close() {
	b.nc.Close()
	if b.srv != nil {
		b.srv.Shutdown()
		b.srv.WaitForShutdown()
	}
}

// SetupConfig is how the trainer lays out the broker for a run.
type SetupConfig struct {
	// AckWait is how long a job may go without a heartbeat before JetStream
	// redelivers it to another worker (default 30 s). Workers heartbeat at a
	// third of it, so only a dead or cut-off worker loses its job.
	AckWait time.Duration
	// MaxDeliver bounds the deliveries of one job (default 5), so a program
	// that takes down every worker it lands on does not circulate forever;
	// the trainer counts such jobs as exhausted (and the learner as lost).
	MaxDeliver int
	// Fresh empties the result stream and the submission store (a new run).
	// A resume keeps unread results: they answer re-submitted jobs at once.
	Fresh bool
	// SubmissionTTL is how long large submissions are kept (default 24 h).
	SubmissionTTL time.Duration
}

// Setup creates or updates the run's streams, consumers and object stores,
// and purges the job stream: jobs queued before a crash are either in the
// checkpoint (the learner re-submits them) or were dispatched after it (the
// learner dispatches afresh), so running them again would only waste workers.
func (b *Broker) Setup(ctx context.Context, cfg SetupConfig) error {
	cfg = cfg.withDefaults()
	if err := b.layout(ctx, cfg, true); err != nil {
		return err
	}
	b.mu.Lock()
	b.setup = &cfg
	b.mu.Unlock()
	return nil
}

// Relayout re-creates what Setup made, purging nothing: for a server that
// came back without the run's streams (its store lost or replaced). It
// fails when Setup was never called on b.
func (b *Broker) Relayout(ctx context.Context) error {
	b.mu.Lock()
	cfg := b.setup
	b.mu.Unlock()
	if cfg == nil {
		return errors.New("queue: relayout before setup")
	}
	return b.layout(ctx, *cfg, false)
}

func (cfg SetupConfig) withDefaults() SetupConfig {
	if cfg.AckWait <= 0 {
		cfg.AckWait = 30 * time.Second
	}
	if cfg.MaxDeliver == 0 {
		cfg.MaxDeliver = 5
	}
	if cfg.SubmissionTTL <= 0 {
		cfg.SubmissionTTL = 24 * time.Hour
	}
	return cfg
}

// layout creates or updates the streams, consumers and object stores of cfg;
// purge empties them as Setup documents.
func (b *Broker) layout(ctx context.Context, cfg SetupConfig, purge bool) error {
	jobs, err := b.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: b.n.jobsStream, Subjects: []string{b.n.jobsSubject},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
		Duplicates: 2 * time.Minute,
	})
	if err != nil {
		return fmt.Errorf("queue: stream %s: %w", b.n.jobsStream, err)
	}
	if purge {
		if err := jobs.Purge(ctx); err != nil {
			return fmt.Errorf("queue: purging %s: %w", b.n.jobsStream, err)
		}
	}
	results, err := b.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: b.n.resultsStream, Subjects: []string{b.n.resultsSubject},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
		Duplicates: 2 * time.Minute,
	})
	if err != nil {
		return fmt.Errorf("queue: stream %s: %w", b.n.resultsStream, err)
	}
	if purge && cfg.Fresh {
		if err := results.Purge(ctx); err != nil {
			return fmt.Errorf("queue: purging %s: %w", b.n.resultsStream, err)
		}
		if err := b.js.DeleteObjectStore(ctx, b.n.subsBucket); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) && !errors.Is(err, jetstream.ErrBucketNotFound) {
			return fmt.Errorf("queue: emptying %s: %w", b.n.subsBucket, err)
		}
	}
	if _, err := b.js.CreateOrUpdateConsumer(ctx, b.n.jobsStream, jetstream.ConsumerConfig{
		Durable: workersConsumer, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: cfg.AckWait, MaxDeliver: cfg.MaxDeliver,
		// Every idle slot of every worker holds one pull request, and every
		// busy one an unacked job: neither may be capped below the fleet.
		MaxAckPending: -1, MaxWaiting: 1 << 16,
	}); err != nil {
		return fmt.Errorf("queue: consumer %s on %s: %w", workersConsumer, b.n.jobsStream, err)
	}
	if _, err := b.js.CreateOrUpdateConsumer(ctx, b.n.resultsStream, jetstream.ConsumerConfig{
		Durable: trainerConsumer, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: 5 * time.Minute, MaxAckPending: -1,
	}); err != nil {
		return fmt.Errorf("queue: consumer %s on %s: %w", trainerConsumer, b.n.resultsStream, err)
	}
	if _, err := b.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: b.n.tasksBucket, Description: "public task files by SHA-256", Storage: jetstream.FileStorage,
	}); err != nil {
		return fmt.Errorf("queue: object store %s: %w", b.n.tasksBucket, err)
	}
	if _, err := b.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: b.n.subsBucket, Description: "large submissions", Storage: jetstream.FileStorage, TTL: cfg.SubmissionTTL,
	}); err != nil {
		return fmt.Errorf("queue: object store %s: %w", b.n.subsBucket, err)
	}
	return nil
}

// retry calls f until it succeeds, ctx ends or giveUp passes (0: only ctx),
// backing off from 100 ms to 5 s; what names the operation in logs and errors.
func retry(ctx context.Context, log *slog.Logger, what string, giveUp time.Duration, f func(context.Context) error) error {
	start := time.Now()
	wait := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		// One attempt never outlives 10 s: a broker that stopped answering
		// must turn into a retry, not a hang.
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := f(actx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w (last error: %v)", what, ctx.Err(), err)
		}
		if giveUp > 0 && time.Since(start)+wait > giveUp {
			return fmt.Errorf("%s: gave up after %d attempts over %v: %w", what, attempt, time.Since(start).Round(time.Millisecond), err)
		}
		log.Warn("retrying", "op", what, "attempt", attempt, "retry_in", wait, "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (last error: %v)", what, ctx.Err(), err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}
