// Command mlerl trains machine-learning-engineering agents with reinforcement learning.
// See README.md for the layout and CONTRACT.md for the command line.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mlerl/mlerl/sandbox"
)

const usage = `usage: mlerl COMMAND [flags]

commands:
  tasks list [--json]          list the built-in task suite
  tasks check TASK             validate a task folder
  tasks import-mlebench --repo MLEBENCH --data DATA [--out DIR] (ID...|--all)
                               MLE-bench competitions as task folders (docs/mlebench.md)
  grade --task T --submission FILE [--json]
  exec --task T --code FILE [--instrument none|ast|lm] [--timeout DUR] [--memory BYTES] [--json]
                               run one episode: instrument, sandboxed run, grade, reward
  train --task T --out DIR [--budget DUR] [--workers N] [--batch B] [--duration-aware=BOOL] [--seed S]
  train --resume DIR [--budget DUR]
                               asynchronous duration-aware RL with the built-in policy
  train ... [--listen ADDR | --nats URL] [--workers 0]
                               expose the run's job queue (or use an external NATS) for remote workers;
                               --listen requires a token: $MLERL_NATS_TOKEN, or one made in DIR/nats-token
  worker --nats URL [--slots N]
                               run episodes for a train on another process or machine (token: $MLERL_NATS_TOKEN)
  train --policy llm --llm-url URL --llm-model NAME [--llm-concurrency N] [--llm-timeout DUR] [--max-tokens N]
        [--instrument lm --instrumenter-url URL --instrumenter-model NAME] ...
                               the same loop with a language model behind an OpenAI-compatible server
                               (API key from $MLERL_API_KEY); writes DIR/rollouts.jsonl for an external trainer
  train ... --ui ADDR          also serve the live web view of this run at ADDR (e.g. 127.0.0.1:8080)
  train ... --no-learn         prompting baseline: same loop and rewards, no updates, improve the best so far
  train ... --init-policy RUN  start the built-in policy from what the run in folder RUN learnt (other tasks allowed)
  serve --task T[,T] --out DIR [--listen 127.0.0.1:8765] [--workers N] [--nats URL | --nats-listen ADDR]
                               the environment for external LM trainers over HTTP (docs/serve.md); a non-loopback
                               --listen requires a token: $MLERL_SERVE_TOKEN, or one made in DIR/serve-token
  ui [--listen ADDR] DIR...    live web view of run folders as they grow (several overlaid); docs/ui.md
  suite build [--set suite|unseen|tuning] [--out DIR] [--verify]
                               rebuild the suite (or the unseen or tuning set) from Debian packages; --verify checks the suite
  bench duration-ablation [--json] [--seeds N] [--workers N] [--budget DUR] [--table hpc-job-class|letter-recognition|synthetic|FILE]
                               naive vs duration-aware updates on a replay table (the paper's Fig. 8)
  bench record-replay --task T --out FILE [--plans N] [--repeats R]
                               record a replay table from real sandboxed runs of recipe plans
  bench rl-vs-prompting --task T[,T] [--seeds 5] [--first-seed 1] [--budget 4m] [--arms A,B] [--cache DIR] [--json]
                               RL against --no-learn and random search, on a virtual clock over real executions
  bench rl-vs-prompting --merge FILE,FILE... [--json]
                               one table from --json outputs run apart (an arm per process, or seeds added later)
  bench mlebench --repo MLEBENCH --data DATA [--budget 4m] [--json] ID...
                               import MLE-bench competitions, train, and score them as MLE-bench does
  version                      the commit this binary was built from
  help                         this text

Run "mlerl COMMAND -h" for a command's flags.
`

// A command runs with its arguments and returns the process exit status:
// 0 success, 1 the work failed, 2 bad usage or bad input (CONTRACT.md §3).
type command func(ctx context.Context, args []string, stdout, stderr io.Writer) int

var commands = map[string]command{
	"tasks":   runTasks,
	"grade":   runGrade,
	"exec":    runExec,
	"train":   runTrain,
	"suite":   runSuite,
	"bench":   runBench,
	"worker":  runWorker,
	"serve":   runServe,
	"ui":      runUI,
	"version": runVersion,
}

func main() {
	// When started by the sandbox as its supervisor or exec stage, do that
	// job and exit; otherwise return at once.
	sandbox.Reexec()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "mlerl: unknown command %q (run \"mlerl help\")\n", args[0])
		return 2
	}
	return cmd(ctx, args[1:], stdout, stderr)
}

// errUsage marks an error as bad usage or bad input: exit status 2.
type errUsage struct{ err error }

func (e errUsage) Error() string { return e.err.Error() }
func (e errUsage) Unwrap() error { return e.err }

func usageErrorf(format string, a ...any) error { return errUsage{fmt.Errorf(format, a...)} }

// exitStatus prints err as one line and maps it to an exit status.
func exitStatus(stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "mlerl: %v\n", err)
	var u errUsage
	if errors.As(err, &u) {
		return 2
	}
	return 1
}
