package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/queue"
)

// runWorker is `mlerl worker --nats URL [--slots N]`: an execution worker for
// a running train. It instruments and runs programs in its own sandbox and
// returns the raw runs; grading stays with train.
func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("nats", "", "`URL` of train's job queue, as printed by train --listen (e.g. nats://host:4222); its token is read from $"+tokenEnv)
	slots := fs.Int("slots", runtime.NumCPU(), "episodes run at once")
	cache := fs.String("cache", "", "where task files are kept by checksum (default: the user cache dir, mlerl/worker)")
	giveUp := fs.Duration("connect-timeout", 5*time.Minute, "give up when the NATS server stays unreachable this long at start (0: retry until interrupted)")
	verbose := fs.Bool("v", false, "log every episode")
	var ef envFlags
	ef.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case fs.NArg() > 0:
		return exitStatus(stderr, usageErrorf("worker: unexpected argument %q", fs.Arg(0)))
	case *url == "":
		return exitStatus(stderr, usageErrorf("worker: --nats URL is required"))
	case *slots < 1:
		return exitStatus(stderr, usageErrorf("worker: --slots must be at least 1"))
	}
	if *cache == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return exitStatus(stderr, usageErrorf("worker: no cache dir (%v): give --cache", err))
		}
		*cache = filepath.Join(d, "mlerl", "worker")
	}
	runner, err := ef.runner(ctx)
	if err != nil {
		return exitStatus(stderr, err)
	}
	// These are ceilings: a job asking for less (the run's --timeout, say)
	// gets less, a job asking for more gets these.
	runner.Max.Threads = episode.ThreadsPerProgram(runtime.NumCPU(), *slots)
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	b, err := queue.Dial(ctx, *url, queue.DialConfig{Name: "mlerl-worker", Token: os.Getenv(tokenEnv), GiveUp: *giveUp, Log: log})
	if err != nil {
		return exitStatus(stderr, err)
	}
	defer b.Close()
	w := &queue.Worker{
		Exec: runner, Slots: *slots, Data: queue.NewCachedData(b, *cache), Log: log,
		Started: func(id string, attempt uint64) {
			log.Info("episode started", "episode", id, "attempt", attempt)
		},
	}
	fmt.Fprintf(stderr, "mlerl: worker serving %s with %d slots, isolation %s, task cache %s\n", *url, *slots, runner.Sandbox.Level(), *cache)
	if err := w.Run(ctx, b); err != nil {
		return exitStatus(stderr, err)
	}
	fmt.Fprintf(stderr, "mlerl: worker stopped after %d episodes\n", w.Done())
	return 0
}

var _ queue.Executor = (*episode.Runner)(nil)
