// Package rl is the asynchronous actor–learner of SPEC.md §1, §3 and §4.
//
// The interfaces the learner needs live here: Env runs actions and reports
// completions; Policy samples actions and learns from scored samples.
package rl

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/task"
)

// Env executes jobs on a fixed number of slots. Submit never blocks for long;
// Next blocks until the next job completes, in completion order. A replay Env
// advances a virtual clock instead of waiting.
type Env interface {
	Slots() int
	Submit(ctx context.Context, job episode.Job) error
	Next(ctx context.Context) (episode.Result, error)
	// Now is the time since the Env started: wall clock, or virtual clock for a replay.
	Now() time.Duration
}

// Prompt is what the policy is asked to do: solve Task from scratch, or
// improve Parent (a previous good solution) when Kind is Improve.
type Prompt struct {
	Kind   episode.Kind
	Task   *task.Task
	Parent *Solution
	// Widen, in [0, 1], is the share of its prior the policy should mix
	// into an improve walk's decisions: the task's best has not moved for a
	// while (Config.WidenAfter, Stalls). 0 is the policy's own walk. A
	// policy without a separate prior (a language model) ignores it.
	Widen float64
	// Stalled says the task's best has stood still for
	// Config.FlatFamilyAfter of the run's time. A policy may explore
	// further from its habits while it is set (the recipe policy:
	// SetFlatFamily); one that has no use for it ignores it.
	Stalled bool
}

// Solution is a previous attempt and how it fared, shown to improve prompts.
type Solution struct {
	Action Action
	Result episode.Result
}

// Action is one program the policy wrote, with what is needed to score it again
// under a newer policy (PPO's ratio needs the behaviour log-probabilities).
type Action struct {
	// Kind is the prompt's, except that a policy may answer an improve
	// prompt with Scratch when it has no new edit of the parent to write:
	// the learner then runs the episode as a scratch one.
	Kind episode.Kind `json:"kind"`
	Plan string       `json:"plan"`
	// Key names the program's design for executors and replay tables (the
	// recipe plan's key); empty for free-form code.
	Key           string `json:"key,omitempty"`
	Code          string `json:"code"`
	PolicyVersion int    `json:"policy_version"`
	// Tokens are the policy's own discrete choices (recipe decisions or LM
	// token ids); TokenLogProbs the behaviour policy's log-probability of each.
	Tokens        []int     `json:"tokens"`
	TokenLogProbs []float64 `json:"token_logprobs"`
	// Meta is the policy's own record of the action (e.g. the recipe plan and
	// the context it was sampled in), kept opaque here and carried through the
	// buffer and checkpoints so the action can be re-scored after a resume.
	Meta json.RawMessage `json:"meta,omitempty"`
	// CreditGroups, when set, has one entry per TokenLogProbs: a non-empty entry
	// names a finer state that token was chosen in (the recipe policy names
	// a hyperparameter's model family), and under Config.DecisionCredit the
	// token's advantage is taken against the critic's value of that group,
	// not of the whole prompt.
	CreditGroups []string `json:"credit_groups,omitempty"`
	// Line names the line of search the program belongs to (the recipe
	// policy names its model family): under Config.Lines the buffer keeps
	// each line's best as an improve parent too. Empty: no line.
	Line string `json:"line,omitempty"`
}

// LogProb is the behaviour log-probability of the whole action.
func (a Action) LogProb() float64 {
	s := 0.0
	for _, lp := range a.TokenLogProbs {
		s += lp
	}
	return s
}

// Sample is an action with its episode's result and credit, ready for a
// policy update. Advantage already includes the duration weight when
// duration-aware updates are on. Policies read whatever else they need
// (duration, stages, the episode id) from Result.
type Sample struct {
	Prompt    Prompt
	Action    Action
	Result    episode.Result
	Reward    float64
	Advantage float64
	Weight    float64
	// TokenAdvantages, when set, is the own advantage of each entry of
	// Action.TokenLogProbs (scaled and
	// weighted as Advantage is), from Config.DecisionCredit; nil: every
	// token takes Advantage.
	TokenAdvantages []float64
}

// UpdateStats reports one policy update.
type UpdateStats struct {
	Loss       float64 `json:"loss"`
	Entropy    float64 `json:"entropy"`
	KL         float64 `json:"kl"`
	ClipFrac   float64 `json:"clip_frac"`
	MaxStale   int     `json:"max_staleness"`
	NewVersion int     `json:"policy_version"`
}

// Policy writes programs and learns from scored samples.
type Policy interface {
	Version() int
	// Sample writes one action per prompt. It must be safe to call while no
	// Update is running; the learner never overlaps the two.
	Sample(ctx context.Context, prompts []Prompt) ([]Action, error)
	// Update takes one PPO step (several epochs allowed) on samples whose
	// TokenLogProbs come from possibly older versions, and bumps Version.
	Update(ctx context.Context, samples []Sample) (UpdateStats, error)
	Save(dir string) error
	Load(dir string) error
}

// Observer is a Policy that also learns from every completed episode as it
// completes, not only from the fresh ones of an update batch: the recipe
// policy's model of results (its screen) keeps every result, reused and
// stale ones included. The learner calls Observe between Samples, never
// during one. A frozen policy (Frozen) observes nothing: the prompting
// baseline learns nothing from its results.
type Observer interface {
	Observe(Solution)
}

// Noter is a Policy that has something to say about how it chose an action,
// kept in the action's episodes.jsonl line ("policy_note") for whoever reads
// the run: the recipe policy's screen records how many candidates it drew and
// what its model of results predicted for the one it ran, so the predictions
// can be checked against the outcomes. Nil: nothing to say.
type Noter interface {
	EpisodeNote(Action) json.RawMessage
}

// LearnerClock is implemented by an Env whose clock is virtual (the replay Env).
// The learner reports its own compute so the Env can charge a modelled cost for
// it on the virtual clock; slots that free up meanwhile sit idle, which keeps
// the utilisation it reports honest. A wall-clock Env need not implement it.
type LearnerClock interface {
	// Sampled reports that the policy wrote n actions.
	Sampled(n int)
	// Updated reports one policy update on a batch of n samples.
	Updated(n int)
}
