package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/serve"
)

// serveTokenEnv names the variable holding serve's bearer token.
const serveTokenEnv = "MLERL_SERVE_TOKEN"

// runServe is `mlerl serve`: the environment for an external trainer
// (docs/serve.md). Programs run on the same job queue as train's, so
// `mlerl worker --nats` machines add capacity.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	taskArg := fs.String("task", "", "suite name(s) or task folder(s), comma-separated")
	out := fs.String("out", "", "run folder (created, or reopened: finished requests are answered from it)")
	listen := fs.String("listen", "127.0.0.1:8765", "HTTP address; any non-loopback address requires a bearer token ($"+serveTokenEnv+", or one made in DIR/serve-token)")
	workers := fs.Int("workers", runtime.NumCPU(), "local executor slots (0: only remote workers)")
	wait := fs.Duration("wait", 30*time.Second, "how long POST /v1/episodes waits for the result when the request gives no wait_s")
	maxTurns := fs.Int("max-turns", 3, "steps of a session when POST /v1/sessions gives no max_turns")
	keep := fs.Int("keep-finished", 4096, "finished episodes kept in memory; older ones are answered from DIR/episodes.jsonl")
	maxQueued := fs.Int("max-queued", 10000, "episodes waiting for a slot before new ones are refused (503 + Retry-After)")
	var ef envFlags
	ef.register(fs)
	qf := queueFlags{ackWait: 30 * time.Second}
	fs.StringVar(&qf.natsURL, "nats", "", "use the external NATS server (JetStream enabled) at this URL for the job queue")
	fs.StringVar(&qf.listen, "nats-listen", "", "expose the job queue (embedded NATS) at `host:port` for `mlerl worker --nats` on other machines (token: DIR/nats-token or $"+tokenEnv+")")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case fs.NArg() > 0:
		return exitStatus(stderr, usageErrorf("serve: unexpected argument %q", fs.Arg(0)))
	case *out == "":
		return exitStatus(stderr, usageErrorf("serve: --out DIR is required"))
	case *workers < 0:
		return exitStatus(stderr, usageErrorf("serve: --workers must not be negative"))
	case *keep < 1 || *maxQueued < 1:
		return exitStatus(stderr, usageErrorf("serve: --keep-finished and --max-queued must be positive"))
	case *workers == 0 && qf.listen == "" && qf.natsURL == "":
		return exitStatus(stderr, usageErrorf("serve: --workers 0 runs no local executors: give --nats-listen or --nats so workers can join"))
	}
	return exitStatus(stderr, serveRun(ctx, serveArgs{
		tasks: splitList(*taskArg), dir: *out, listen: *listen, workers: *workers,
		wait: *wait, maxTurns: *maxTurns, keep: *keep, maxQueued: *maxQueued, env: &ef, queue: &qf, stderr: stderr,
	}))
}

type serveArgs struct {
	tasks       []string
	dir, listen string
	workers     int
	wait        time.Duration
	maxTurns    int
	keep        int // serve.Config.KeepFinished
	maxQueued   int // serve.Config.MaxQueued
	env         *envFlags
	queue       *queueFlags
	stderr      io.Writer
}

func serveRun(ctx context.Context, a serveArgs) error {
	if len(a.tasks) == 0 {
		return usageErrorf("serve: --task is required")
	}
	_, prepared, err := loadTasks(a.tasks)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		return errUsage{fmt.Errorf("--out: %w", err)}
	}
	token, tokenFile, err := serveToken(a.dir, a.listen)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", a.listen)
	if err != nil {
		return errUsage{fmt.Errorf("--listen: %w", err)}
	}
	defer ln.Close()
	runner, err := a.env.runner(ctx)
	if err != nil {
		return err
	}
	runner.Max.Threads = episode.ThreadsPerProgram(runtime.NumCPU(), a.workers)
	// The queue as train builds it: local slots are workers of it.
	tr := trainRun{rc: runConfig{Workers: a.workers}, dir: a.dir, queue: a.queue, stderr: a.stderr}
	q, err := tr.newQueue(ctx, runner, prepared)
	if err != nil {
		return err
	}
	defer q.Close()
	log := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := serve.New(serve.Config{
		Executor: q, Tasks: prepared, Reward: runner.Reward, Settings: runner.Max, Dir: a.dir, Token: token,
		DefaultWait: a.wait, MaxTurns: a.maxTurns, KeepFinished: a.keep, MaxQueued: a.maxQueued, Log: log,
		Stats: func() (int, map[string]any) { st := q.Stats(); return st.Redelivered, map[string]any{"broker": st} },
	})
	if err != nil {
		return err
	}
	auth := "no token (loopback)"
	switch {
	case tokenFile != "":
		auth = fmt.Sprintf("bearer token in %s (%s=$(cat %s))", tokenFile, serveTokenEnv, tokenFile)
	case token != "":
		auth = "bearer token from $" + serveTokenEnv
	}
	fmt.Fprintf(a.stderr, "mlerl: serving %s at http://%s (%s); %d local slots, isolation %s, program time limit %v, run folder %s\n",
		strings.Join(a.tasks, ","), ln.Addr(), auth, a.workers, runner.Sandbox.Level(), runner.Max.Timeout, a.dir)
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Long polls would hold Shutdown for minutes: they are cut, and their
	// episodes are finished by the next server on the same folder.
	_ = hs.Shutdown(sctx)
	err = errors.Join(ignoreClosed(err), srv.Close())
	fmt.Fprintf(a.stderr, "mlerl: stopped; %s\n", filepath.Join(a.dir, "summary.json"))
	return err
}

func ignoreClosed(err error) error {
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// serveToken is the bearer token: $MLERL_SERVE_TOKEN when set, else on a
// non-loopback address one made per run folder (DIR/serve-token, mode
// 0600, kept across restarts), else none: on loopback only this machine's
// users can connect.
func serveToken(dir, listen string) (token, file string, err error) {
	if t := strings.TrimSpace(os.Getenv(serveTokenEnv)); t != "" {
		return t, "", nil
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return "", "", usageErrorf("--listen %q: %v", listen, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return "", "", nil
	}
	file = filepath.Join(dir, "serve-token")
	if b, err := os.ReadFile(file); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), file, nil
	}
	token = rand.Text()
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("serve token: %w", err)
	}
	return token, file, nil
}
