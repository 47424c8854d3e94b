package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/instrument"
	"github.com/mlerl/mlerl/sandbox"
)

// envFlags are the flags that say how episodes run; exec and train share them.
type envFlags struct {
	instrument        string
	instrumenterURL   string
	instrumenterModel string
	timeout           time.Duration
	memory            int64
	isolation         string
	unsafeNoIsolation bool
}

func (e *envFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&e.instrument, "instrument", "ast", "progress markers for partial credit: none, ast or lm")
	fs.StringVar(&e.instrumenterURL, "instrumenter-url", "", "OpenAI-compatible base URL of the frozen instrumenter model (--instrument lm)")
	fs.StringVar(&e.instrumenterModel, "instrumenter-model", "", "model name of the frozen instrumenter (--instrument lm)")
	fs.DurationVar(&e.timeout, "timeout", 10*time.Minute, "wall-clock limit of one program run (train: a sixth of --budget, 30s..10m, unless given)")
	fs.Int64Var(&e.memory, "memory", 0, "memory limit of one program run in bytes (0: sandbox default)")
	fs.StringVar(&e.isolation, "isolation", "", "force an isolation level: bwrap or landlock (default: the best that works here)")
	fs.BoolVar(&e.unsafeNoIsolation, "unsafe-no-isolation", false, "DANGEROUS: run untrusted programs with no isolation at all when nothing else works")
}

// runner builds the sandbox and instrumenter the flags describe.
func (e *envFlags) runner(ctx context.Context) (*episode.Runner, error) {
	want := sandbox.Level(e.isolation)
	switch want {
	case "", sandbox.Level("bwrap"), sandbox.Level("landlock"):
	case sandbox.Level("none"):
		if !e.unsafeNoIsolation {
			return nil, usageErrorf("--isolation none needs --unsafe-no-isolation")
		}
	default:
		return nil, usageErrorf("--isolation: unknown level %q (want bwrap, landlock or none)", e.isolation)
	}
	if e.timeout <= 0 {
		return nil, usageErrorf("--timeout must be positive, got %v", e.timeout)
	}
	if e.memory < 0 {
		return nil, usageErrorf("--memory must not be negative")
	}
	sb, err := sandbox.New(ctx, sandbox.Config{Want: want, AllowNone: e.unsafeNoIsolation})
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if sb.Level() == sandbox.Level("none") {
		fmt.Fprintln(os.Stderr, "mlerl: WARNING: running untrusted programs with NO ISOLATION (--unsafe-no-isolation)")
	}
	r := &episode.Runner{
		Sandbox: sb,
		Reward:  episode.DefaultReward(),
		Max:     episode.Settings{Timeout: e.timeout, MemoryBytes: e.memory, Instrument: e.instrument},
	}
	ast := instrument.NewAST("")
	switch e.instrument {
	case "none":
	case "ast":
		r.Instrumenter = ast
	case "lm":
		if e.instrumenterURL == "" || e.instrumenterModel == "" {
			return nil, usageErrorf("--instrument lm needs --instrumenter-url and --instrumenter-model")
		}
		r.Instrumenter = instrument.NewLM(instrument.LMConfig{
			URL: e.instrumenterURL, Model: e.instrumenterModel, APIKey: os.Getenv("MLERL_API_KEY"),
		}, ast)
	default:
		return nil, usageErrorf("--instrument: unknown mode %q (want none, ast or lm)", e.instrument)
	}
	return r, nil
}

func runExec(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("exec", flag.ContinueOnError)
	fs.SetOutput(stderr)
	taskArg := fs.String("task", "", "suite name or task folder")
	codePath := fs.String("code", "", "the Python program to run")
	asJSON := fs.Bool("json", false, "print the episode result as one JSON document on stdout")
	keep := fs.String("save-submission", "", "also write the program's submission.csv here")
	threads := fs.Int("threads", 0, "OpenMP/BLAS threads the program may use (0: the sandbox's default, 2); train gives each program cores / slots")
	var ef envFlags
	ef.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		return exitStatus(stderr, usageErrorf("exec: unexpected argument %q", fs.Arg(0)))
	}
	if *codePath == "" {
		return exitStatus(stderr, usageErrorf("exec: --code is required"))
	}
	if *threads < 0 {
		return exitStatus(stderr, usageErrorf("exec: --threads must not be negative"))
	}
	code, err := os.ReadFile(*codePath)
	if err != nil {
		return exitStatus(stderr, usageErrorf("--code %s: %v", *codePath, err))
	}
	t, err := loadTask(*taskArg)
	if err != nil {
		return exitStatus(stderr, err)
	}
	prep, err := episode.Prepare(t)
	if err != nil {
		return exitStatus(stderr, errUsage{err})
	}
	r, err := ef.runner(ctx)
	if err != nil {
		return exitStatus(stderr, err)
	}
	r.Max.Threads = *threads
	res, err := execOne(ctx, r, prep, episode.Job{ID: "exec-1", Task: t.Name, Kind: episode.Scratch, Code: string(code)})
	if err != nil {
		return exitStatus(stderr, err)
	}
	if *keep != "" && res.Submission != nil {
		if err := os.WriteFile(*keep, res.Submission, 0o644); err != nil {
			return exitStatus(stderr, fmt.Errorf("--save-submission: %w", err))
		}
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			return exitStatus(stderr, err)
		}
	} else {
		printEpisode(stderr, res)
	}
	if !res.Valid {
		return 1 // the work failed: no valid submission
	}
	return 0
}

// printEpisode is the human form of an episode result.
func printEpisode(w io.Writer, r episode.Result) {
	if out := strings.TrimSpace(r.Output); out != "" {
		fmt.Fprintf(w, "--- program output ---\n%s\n--- end of output ---\n", out)
	}
	verdict := "no valid submission: " + r.Error
	if r.Valid {
		verdict = fmt.Sprintf("valid submission, score %.6g", *r.Score)
	}
	fmt.Fprintf(w, "%s: %s\n", r.Task, verdict)
	fmt.Fprintf(w, "  exit %d in %.2fs, peak memory %.0f MiB, isolation %s, instrumentation %s\n",
		r.ExitCode, r.DurationS, float64(r.PeakMemoryBytes)/(1<<20), r.Isolation, r.Instrumentation)
	fmt.Fprintf(w, "  stages reached (%d): %s\n  reward %.4g\n", len(r.Stages), strings.Join(r.Stages, ", "), r.Reward)
}

// execOne runs one job the way train does, through an executor and the
// trainer's grading step (episode.Graded), on one local slot.
func execOne(ctx context.Context, r *episode.Runner, p *episode.Prepared, job episode.Job) (episode.Result, error) {
	pool, err := episode.NewPool(r, map[string]string{p.Task.Name: p.Task.PublicDir()}, 1)
	if err != nil {
		return episode.Result{}, err
	}
	defer pool.Close()
	g := episode.NewGraded(pool, []*episode.Prepared{p}, r.Reward, r.Max)
	if err := g.Submit(ctx, job); err != nil {
		return episode.Result{}, err
	}
	return g.Next(ctx)
}
