package recipe

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/task"
)

// Uniform is the random-search arm of the comparisons: every decision of the
// grammar is drawn uniformly among its allowed options (an improve prompt
// edits one part of its parent uniformly), with no prior and no learning.
// It satisfies rl.Policy; Update changes nothing.
type Uniform struct {
	profiles map[string]*Profile
	rng      *rand.Rand
}

// NewUniform profiles the tasks; seed fixes the draws.
func NewUniform(tasks []*task.Task, seed uint64) (*Uniform, error) {
	u := &Uniform{profiles: map[string]*Profile{}, rng: rand.New(rand.NewPCG(seed, 0x756e69666f726d))} // "uniform"
	for _, t := range tasks {
		prof, err := NewProfile(t)
		if err != nil {
			return nil, fmt.Errorf("uniform policy: task %s: %w", t.Name, err)
		}
		u.profiles[t.Name] = prof
	}
	return u, nil
}

// SetGrid: see Policy.SetGrid.
func (u *Uniform) SetGrid(grid string) error { return setGrid(u.profiles, grid) }

// Version is always 0: the policy never changes.
func (u *Uniform) Version() int { return 0 }

// Sample draws one plan per prompt and renders it.
func (u *Uniform) Sample(ctx context.Context, prompts []rl.Prompt) ([]rl.Action, error) {
	out := make([]rl.Action, len(prompts))
	for i, pr := range prompts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		prof, ok := u.profiles[pr.Task.Name]
		if !ok {
			return nil, fmt.Errorf("uniform policy: task %s was not profiled", pr.Task.Name)
		}
		var plan *Plan
		kind := episode.Scratch
		if pr.Kind == episode.Improve && pr.Parent != nil {
			var pm meta
			if err := json.Unmarshal(pr.Parent.Action.Meta, &pm); err == nil && pm.Plan != nil {
				plan, kind = RandomImprove(prof, pm.Plan, u.rng), episode.Improve
			}
		}
		if plan == nil {
			plan = Random(prof, u.rng)
		}
		code, err := Render(prof, plan)
		if err != nil {
			return nil, fmt.Errorf("uniform policy: rendering %s: %w", plan.Key(), err)
		}
		raw, err := json.Marshal(meta{Plan: plan})
		if err != nil {
			return nil, err
		}
		out[i] = rl.Action{Kind: kind, Plan: plan.Describe(), Key: plan.Key(), Code: code, Meta: raw, Line: plan.Get("model.family")}
	}
	return out, nil
}

// Update learns nothing.
func (u *Uniform) Update(ctx context.Context, _ []rl.Sample) (rl.UpdateStats, error) {
	return rl.UpdateStats{}, ctx.Err()
}

// Save has nothing to keep: the draws restart from the seed.
func (u *Uniform) Save(string) error { return nil }

// Load: see Save.
func (u *Uniform) Load(string) error { return nil }
