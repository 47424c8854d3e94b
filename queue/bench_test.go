package queue

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/instrument"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/rl/replay"
	"github.com/mlerl/mlerl/rl/tabular"
	"github.com/mlerl/mlerl/sandbox"
	"github.com/mlerl/mlerl/task"
)

// Measured in one run (go test -run '^$' -bench . -benchtime 3x ./queue) on
// this 2-core machine shared with other engineers' tests (load ~2-3):
//
//	jobs/s, trivial program   local slots   worker processes
//	  N=1                         8.6            7.7
//	  N=2                         9.9           16.7
//	  N=4                        18.1           17.8
//	broker round trips/s: 1 consumer 1438, 10: 2986, 100: 3498, 1000: 2698
//	1000-worker replay fleet: needs 14.9 episodes/s; learner (tabular,
//	batch 128) 44,701 episodes/s and 349 updates/s; broker 4,358 trips/s
//	with 1000 consumers; utilisation 100% (learner cost 0 on the clock).
//
// A sandboxed episode costs ~0.11 s of CPU (AST instrumenter helper, bwrap,
// python), so two cores cap jobs/s near 18 whichever way slots connect; the
// queue's cost per job (at most ~0.7 ms of CPU: 2 cores / ~3k trips/s) is invisible next to it. The
// broker's ceiling, ~3-4k round trips/s on these cores with server, trainer
// and workers in one process, is a 1000-worker fleet whose episodes average
// under ~0.3 s; real episodes take 1 s to minutes, ~200x below it.

// pump keeps up to depth jobs in flight on e, like the learner filling its
// free slots, until n results are back; it returns the wall time taken and
// the largest number of jobs waiting undelivered in the stream.
func pump(tb testing.TB, b *Broker, e *Env, prefix, code string, n, depth int) (time.Duration, uint64) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var maxQueued atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		cons, err := b.js.Consumer(ctx, b.n.jobsStream, workersConsumer)
		if err != nil {
			return
		}
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if ci, err := cons.Info(ctx); err == nil && ci.NumPending > maxQueued.Load() {
				maxQueued.Store(ci.NumPending)
			}
		}
	})
	start := time.Now()
	sent, got := 0, 0
	for got < n {
		for sent < n && sent-got < depth {
			if err := e.Submit(ctx, job(fmt.Sprintf("%s-%d", prefix, sent), code)); err != nil {
				tb.Fatal(err)
			}
			sent++
		}
		if _, err := e.Next(ctx); err != nil {
			tb.Fatal(err)
		}
		got++
	}
	d := time.Since(start)
	close(stop)
	wg.Wait()
	return d, maxQueued.Load()
}

// trivial is the cheapest real program: the csv module, no pandas.
const trivial = `import csv
rows = list(csv.DictReader(open("data/test.csv")))
with open("submission.csv", "w") as f:
    f.write("id,label\n" + "".join(r["id"] + "," + r["x"] + "\n" for r in rows))
`

// Jobs per second of a trivial sandboxed program: N local slots (goroutines
// in the trainer, in-process connection) against N worker processes with one
// slot each (loopback TCP, task files through the object store), N = 1, 2, 4,
// all in one run. Each sub-benchmark reports jobs/s; the machine's cores bound
// every row, so the ratio local/process at equal N is the queue's overhead.
func BenchmarkJobsPerSecond(b *testing.B) {
	p := fixture(b)
	sb, err := sandbox.New(context.Background(), sandbox.Config{})
	if err != nil {
		b.Fatal(err)
	}
	runner := &episode.Runner{Sandbox: sb, Instrumenter: instrument.NewAST(""), Max: episode.Settings{Timeout: time.Minute}}
	const jobs = 24
	for _, n := range []int{1, 2, 4} {
		for _, kind := range []string{"local", "procs"} {
			b.Run(fmt.Sprintf("%s=%d", kind, n), func(b *testing.B) {
				br := inProcess(b, "127.0.0.1:0", SetupConfig{})
				e := newEnv(b, br, p)
				if kind == "local" {
					startWorker(b, br, &Worker{Exec: runner, Slots: n, Data: LocalData{"tiny-auc": p.Task.PublicDir()}})
				} else {
					for range n {
						startProc(b, br.URL(), 1, 0)
					}
				}
				if err := e.WaitSlots(context.Background(), n, nil); err != nil {
					b.Fatal(err)
				}
				pump(b, br, e, "warm", trivial, n, n) // data fetched, interpreters warm
				var total time.Duration
				b.ResetTimer()
				for i := range b.N {
					d, _ := pump(b, br, e, fmt.Sprintf("j%d", i), trivial, jobs, n)
					total += d
				}
				b.ReportMetric(float64(jobs*b.N)/total.Seconds(), "jobs/s")
			})
		}
	}
}

// noop answers every job at once with a perfect submission: the broker's own
// cost, no python.
type noop struct{}

func (noop) Execute(_ context.Context, _ string, j episode.Job) (episode.Execution, error) {
	return episode.Execution{Episode: j.ID, Task: j.Task, Kind: j.Kind, PolicyVersion: j.PolicyVersion,
		Stages: []string{}, Isolation: "none", Wrote: true, Submission: []byte(perfect)}, nil
}

// Job+result round trips per second through the broker with C concurrent
// consumers (slots), no program run: each slot holds a pull request, the
// trainer keeps C jobs in flight, grades every result. The workers connect
// over loopback TCP, spread over up to 20 connections. Reports round trips/s
// and the deepest the job stream's undelivered backlog got.
func BenchmarkBrokerRoundTrips(b *testing.B) {
	p := fixture(b)
	for _, c := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("consumers=%d", c), func(b *testing.B) {
			trips, depth := brokerRoundTrips(b, p, c, 2000)
			b.ReportMetric(trips, "trips/s")
			b.ReportMetric(float64(depth), "max-queued")
		})
	}
}

func brokerRoundTrips(tb testing.TB, p *episode.Prepared, consumers, n int) (float64, uint64) {
	br := inProcess(tb, "127.0.0.1:0", SetupConfig{})
	e := newEnv(tb, br, p)
	conns := min(consumers, 20)
	for i := range conns {
		wb, err := Dial(context.Background(), br.URL(), DialConfig{})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(wb.Close)
		slots := consumers / conns
		if i < consumers%conns {
			slots++
		}
		startWorker(tb, wb, &Worker{Exec: noop{}, Slots: slots, Data: LocalData{"tiny-auc": p.Task.PublicDir()}})
	}
	if err := e.WaitSlots(context.Background(), consumers, nil); err != nil {
		tb.Fatal(err)
	}
	pump(tb, br, e, "warm", "x", consumers, consumers)
	d, depth := pump(tb, br, e, "rt", "x", n, consumers)
	return float64(n) / d.Seconds(), depth
}

// A 1,000-worker fleet on the replay Env's virtual clock, driven by the real
// learner with the paper's batch of 128, next to the broker's measured
// round-trip rate with 1,000 consumers, in one run. The fleet needs
// workers/mean-duration completions per second; the learner keeps up when it
// processes episodes (sample, complete, update) faster than that in wall time,
// and the broker when its round trips/s exceed it.
func BenchmarkFleet1000(b *testing.B) {
	const workers = 1000
	tb, err := replay.Builtin("synthetic")
	if err != nil {
		b.Fatal(err)
	}
	p := fixture(b)
	for range b.N {
		env, err := replay.New(tb, replay.Config{Workers: workers, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		pol, err := tabular.New(tb.Keys(), tabular.DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		cfg := rl.DefaultConfig()
		cfg.Batch, cfg.Budget, cfg.Seed = 128, 2*time.Hour, 1
		start := time.Now()
		sum, err := rl.Run(context.Background(), cfg, env, pol, []*task.Task{{Name: tb.Task()}}, &rl.Memory{})
		if err != nil {
			b.Fatal(err)
		}
		wall := time.Since(start)
		virtual := env.Now().Seconds()
		need := float64(sum.Completed) / virtual // completions/s the fleet produces
		learner := float64(sum.Completed) / wall.Seconds()
		trips, depth := brokerRoundTrips(b, p, workers, 5000)
		b.ReportMetric(need, "fleet-episodes/s")
		b.ReportMetric(learner, "learner-episodes/s")
		b.ReportMetric(float64(sum.Updates)/wall.Seconds(), "updates/s")
		b.ReportMetric(100*env.Utilisation(), "util%")
		b.ReportMetric(trips, "broker-trips/s")
		b.ReportMetric(float64(depth), "broker-max-queued")
		b.ReportMetric(learner/need, "learner-headroom-x")
		b.ReportMetric(trips/need, "broker-headroom-x")
		b.Logf("virtual %.0fs, %d episodes, %d updates, wall %v", virtual, sum.Completed, sum.Updates, wall.Round(time.Millisecond))
	}
}
