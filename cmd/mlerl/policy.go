package main

import (
	"context"

	"github.com/mlerl/mlerl/policy/recipe"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/task"
)

// newPolicy makes the policy a run's config names.
func newPolicy(ctx context.Context, rc runConfig, tasks []*task.Task) (rl.Policy, error) {
	switch rc.Policy {
	case "recipe":
		pol, err := recipe.NewPolicy(tasks, rc.Seed)
		if err != nil {
			return nil, errUsage{err}
		}
		return pol, nil
	case "llm":
		return nil, usageErrorf("train: --policy llm is not available in this build yet; use --policy recipe")
	default:
		return nil, usageErrorf("train: --policy: unknown policy %q (want recipe or llm)", rc.Policy)
	}
}
