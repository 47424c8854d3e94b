package main

import (
	"context"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl"
)

// trainEnv is the environment train drives: the learner's Env, plus what the
// progress line shows and a Close that stops running episodes.
type trainEnv interface {
	rl.Env
	Busy() int
	Close()
}

// newEnv makes the executors of a run: local slots running sandboxed episodes.
func newEnv(ctx context.Context, rc runConfig, runner *episode.Runner, tasks []*episode.Prepared) (trainEnv, error) {
	pool, err := episode.NewPool(runner, tasks, rc.Workers)
	if err != nil {
		return nil, errUsage{err}
	}
	return pool, nil
}
