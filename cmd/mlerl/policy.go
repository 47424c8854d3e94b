package main

import (
	"cmp"
	"context"
	"flag"
	"os"
	"path/filepath"
	"time"

	"github.com/mlerl/mlerl/policy/llm"
	"github.com/mlerl/mlerl/policy/recipe"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/rl/runfolder"
	"github.com/mlerl/mlerl/task"
)

// policyFlags are train's flags for the language-model policy and the
// prompting baseline; they are kept in runConfig so --resume reuses them.
type policyFlags struct {
	url         string
	model       string
	concurrency int
	timeout     time.Duration
	maxTokens   int
	noLearn     bool
	initPolicy  string
	grid        string
}

func (f *policyFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "llm-url", "", "OpenAI-compatible base URL of the policy model (--policy llm), e.g. http://localhost:8000/v1; API key from $MLERL_API_KEY")
	fs.StringVar(&f.model, "llm-model", "", "model name of the policy (--policy llm)")
	fs.IntVar(&f.concurrency, "llm-concurrency", 4, "most requests to the policy's server at once")
	fs.DurationVar(&f.timeout, "llm-timeout", 10*time.Minute, "limit on one request to the policy's server (retried on expiry)")
	fs.IntVar(&f.maxTokens, "max-tokens", 1024, "response limit of the policy model in tokens (the paper: 1024)")
	fs.StringVar(&f.initPolicy, "init-policy", "", "start the built-in policy from what the run in this folder learnt (its last checkpoint), e.g. a run on the suite; this run's tasks may differ")
	fs.StringVar(&f.grid, "grid", recipe.GridStandard, "hyperparameter values the built-in policy's plans take: standard (about three per hyperparameter) or wide (more, between and beyond: more to search in a long run)")
	fs.BoolVar(&f.noLearn, "no-learn", false, "prompting baseline: the same loop, tasks and rewards with no policy updates; improve prompts always improve the best solution so far")
}

func (f *policyFlags) apply(rc *runConfig) {
	rc.LLMURL, rc.LLMModel, rc.LLMConcurrency, rc.LLMTimeout, rc.MaxTokens, rc.NoLearn =
		f.url, f.model, f.concurrency, f.timeout, f.maxTokens, f.noLearn
	rc.InitPolicy = f.initPolicy
	if f.grid != recipe.GridStandard {
		rc.Grid = f.grid // absent in run.json: the standard grid, as runs before it
	}
	if abs, err := filepath.Abs(f.initPolicy); err == nil && f.initPolicy != "" {
		rc.InitPolicy = abs // run.json must name it from anywhere
	}
}

// rolloutsFile is written by the llm policy into the run folder (CONTRACT.md §3).
const rolloutsFile = "rollouts.jsonl"

// newPolicy makes the policy a run's config names; dir is the run folder.
// A fresh run (not a resume, whose checkpoint has the policy) starts from
// --init-policy's when given.
func newPolicy(ctx context.Context, rc runConfig, dir string, tasks []*task.Task, fresh bool) (rl.Policy, error) {
	switch rc.Policy {
	case "recipe":
		if rc.LLMURL != "" || rc.LLMModel != "" {
			return nil, usageErrorf("train: --llm-url and --llm-model need --policy llm")
		}
		pol, err := recipe.NewPolicy(tasks, rc.Seed)
		if err != nil {
			return nil, errUsage{err}
		}
		pol.SetTimeLimit(rc.Timeout) // the prior avoids plans predicted to overrun it
		if err := pol.SetGrid(cmp.Or(rc.Grid, recipe.GridStandard)); err != nil {
			return nil, usageErrorf("train: --grid: %v", err)
		}
		if err := pol.SetEditFloor(rc.EditFloor); err != nil {
			return nil, usageErrorf("train: --edit-floor: %v", err)
		}
		if err := pol.SetScratchPrior(rc.ScratchPrior); err != nil {
			return nil, usageErrorf("train: --scratch-prior: %v", err)
		}
		pol.SetPriorOnRepeat(rc.PriorOnRepeat)
		pol.SetFlatFamily(rc.FlatFamilyAfter > 0)
		if rc.NoLearn && rc.ScratchPrior == 0 && rc.FlatFamilyAfter > 0 {
			// The baseline draws the learning policy's scratch-prior share
			// flat, as the bench's no-learn-flat arm (derived from run.json's
			// fields, so a resume draws alike).
			if err := pol.SetFlatFamilyShare(DefaultScratchPrior); err != nil {
				return nil, errUsage{err}
			}
		}
		if err := pol.SetScreen(rc.Screen); err != nil {
			return nil, usageErrorf("train: --screen: %v", err)
		}
		pol.SetScreenPerSecond(rc.ScreenPerSecond)
		if err := pol.SetScreenAfter(rc.ScreenAfter); err != nil {
			return nil, usageErrorf("train: --screen-after: %v", err)
		}
		if rc.InitPolicy != "" && fresh {
			if err := runfolder.LoadPolicy(rc.InitPolicy, pol); err != nil {
				return nil, usageErrorf("train: --init-policy: %v", err)
			}
			pol.ForgetResults() // its net is the starting point; its results are another run's
		}
		if rc.NoLearn {
			return rl.Frozen(pol), nil
		}
		return pol, nil
	case "llm":
		switch {
		case rc.InitPolicy != "":
			return nil, usageErrorf("train: --init-policy needs --policy recipe (a language model's weights are its server's)")
		case rc.LLMURL == "" || rc.LLMModel == "":
			return nil, usageErrorf("train: --policy llm needs --llm-url and --llm-model")
		case rc.LLMConcurrency < 1:
			return nil, usageErrorf("train: --llm-concurrency must be at least 1")
		case rc.LLMTimeout <= 0:
			return nil, usageErrorf("train: --llm-timeout must be positive")
		case rc.MaxTokens < 1:
			return nil, usageErrorf("train: --max-tokens must be at least 1")
		}
		pol, err := llm.New(llm.Config{
			URL: rc.LLMURL, Model: rc.LLMModel, APIKey: os.Getenv("MLERL_API_KEY"),
			MaxTokens: rc.MaxTokens, Concurrency: rc.LLMConcurrency, Timeout: rc.LLMTimeout,
			Rollouts: filepath.Join(dir, rolloutsFile), NoLearn: rc.NoLearn, TimeLimit: rc.Timeout,
		}, tasks)
		if err != nil {
			return nil, errUsage{err}
		}
		return pol, nil
	default:
		return nil, usageErrorf("train: --policy: unknown policy %q (want recipe or llm)", rc.Policy)
	}
}
