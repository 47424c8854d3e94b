package recipe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/policy/choicenet"
	"github.com/mlerl/mlerl/policy/screen"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/task"
)

// Temperature is the paper's sampling temperature (SPEC.md §4).
const Temperature = 0.7

// HintLogit is the policy's prior: at every decision the option Default
// would take gets this much more logit (before the temperature), so a fresh
// policy writes mostly sensible programs with a few changes, as a pretrained
// language model does, instead of uniformly random ones (most of which fail
// on a real task). At T = 0.7 it makes the default option of a 4-way decision
// about 3/4 likely. The net learns on top of it and can overrule it.
const HintLogit = 1.5

// AvoidLogit is taken from every option the profile says will fail
// (Decision.Avoid), or, once the policy knows the time limit
// (SetTimeLimit), would run too long. At T = 0.7 it makes such an option about 300 times less
// likely than it would be, so a fresh policy seldom writes a program that
// cannot run on this task, while the option stays learnable.
const AvoidLogit = 4.0

// PriorAnchor weighs KL(π ‖ prior) in every update (choicenet's
// PriorKLCoef): the learnt policy is the prior times exp(advantage / 0.5),
// so a decision that keeps paying gains several times its prior mass but
// the others keep theirs in proportion. Without it a few batches of 8 noisy
// rewards collapsed the policy onto one plan (issue: learning must pay).
const PriorAnchor = 0.5

// Policy is the built-in policy: the grammar's decisions made one at a time by
// a small neural net (choicenet), rendered into a Python program. It satisfies
// rl.Policy; log-probabilities, PPO ratios, entropy and KL work per decision
// exactly as they do per token for a language model.
type Policy struct {
	net         *choicenet.Net
	profiles    map[string]*Profile
	prefs       map[string]preferences // Default's choices per task: the hints
	rng         *rand.Rand
	temperature float64
	// tried are the plan keys written so far, per task, this process.
	tried map[string]map[string]bool
	// editFloor is the share of an improve walk's choice of what to change
	// that stays the prior's (SetEditFloor).
	editFloor float64
	// scratchPrior is the share of scratch walks drawn wholly from the
	// prior (SetScratchPrior).
	scratchPrior float64
	// priorOnRepeat floors a walk toward the prior once its redraws only
	// repeat plans (SetPriorOnRepeat).
	priorOnRepeat bool
	// screenK candidates per walk, chosen among by the task's model of
	// results in screens (SetScreen; 0: off).
	screenK int
	// screenBy is what the screen's pick maximises (SetScreenPerSecond).
	screenBy screen.Objective
	// screenAfter, when above 0, holds the screen back until the task's
	// search has gone that many new programs without a new best
	// (SetScreenAfter).
	screenAfter int
	screens     map[string]*screen.Model
	// flatFamily has the prior's scratch walks of a stalled task draw the
	// model family without the prior's preference (SetFlatFamily).
	flatFamily bool
	// flatShare is the share of a stalled task's scratch walks a policy
	// without a scratch prior draws flat (SetFlatFamilyShare).
	flatShare float64
}

// meta is what an action carries so it can be scored again by a newer net,
// even after a resume: the plan, the steps taken, and the improve context.
type meta struct {
	Plan         *Plan            `json:"plan"`
	Steps        []choicenet.Step `json:"steps"`
	Parent       []choicenet.Step `json:"parent_steps,omitempty"`
	ParentReward float64          `json:"parent_reward,omitempty"`
	Temperature  float64          `json:"temperature"`
	// Screen is set when the action was the model of results' pick among
	// several candidates (SetScreen).
	Screen *screenNote `json:"screen,omitempty"`
	// Spent is set on a scratch walk that answered an improve prompt whose
	// parent had no new edit left (SetPriorOnRepeat).
	Spent bool `json:"spent_parent,omitempty"`
	// ScratchPrior is set on a scratch walk drawn wholly from the prior
	// (SetScratchPrior).
	ScratchPrior bool `json:"scratch_prior,omitempty"`
	// FlatFamily is set on such a walk whose model family was drawn
	// without the prior's preference (SetFlatFamily).
	FlatFamily bool `json:"flat_family,omitempty"`
}

// NewPolicy profiles every task up front (a task the grammar cannot read is
// an error now, not mid-run) and makes a fresh net.
func NewPolicy(tasks []*task.Task, seed uint64) (*Policy, error) {
	cfg := choicenet.DefaultConfig(NumFeatures, len(DecisionNames()), MaxOptions)
	cfg.Seed = seed
	cfg.HintLogit = HintLogit
	cfg.AvoidLogit = AvoidLogit
	cfg.PriorKLCoef = PriorAnchor
	net, err := choicenet.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("recipe policy: %w", err)
	}
	p := &Policy{
		net:         net,
		profiles:    map[string]*Profile{},
		prefs:       map[string]preferences{},
		tried:       map[string]map[string]bool{},
		screens:     map[string]*screen.Model{},
		rng:         rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)),
		temperature: Temperature,
	}
	for _, t := range tasks {
		prof, err := NewProfile(t)
		if err != nil {
			return nil, fmt.Errorf("recipe policy: task %s: %w", t.Name, err)
		}
		p.profiles[t.Name] = prof
		p.prefs[t.Name] = defaultsFor(prof)
		p.tried[t.Name] = map[string]bool{}
	}
	return p, nil
}

// SetGrid makes the policy's plans take their hyperparameters from grid
// (GridStandard or GridWide) from now on. A plan of the wide grid does not
// validate against the standard one: a run keeps the grid it started with.
func (p *Policy) SetGrid(grid string) error { return setGrid(p.profiles, grid) }

// CheckGrid says why grid is not one of Grids (nil when it is).
func CheckGrid(grid string) error {
	if !slices.Contains(Grids(), grid) {
		return fmt.Errorf("unknown grid %q (want one of %s)", grid, strings.Join(Grids(), ", "))
	}
	return nil
}

func setGrid(profiles map[string]*Profile, grid string) error {
	if err := CheckGrid(grid); err != nil {
		return fmt.Errorf("recipe: %w", err)
	}
	for _, prof := range profiles {
		prof.Grid = grid
	}
	return nil
}

// SetEditFloor keeps the share f of an improve walk's choice of what to
// change at the prior's (choicenet.Step.Floor): its first decision, which
// part of the parent to re-decide (uniform under the prior), and, when that
// part is the model, the model family (the prior's hint: the parent's). On
// poll-adjustment the learnt policy's edits came to change the features far
// more often than the prior's and the model family far less
// (bench/RESULTS.md); the family switches that found no-learn's
// best model had all but stopped. Flooring the part alone does not keep
// them: the family decision collapses onto the parent's, and a walk that
// keeps it writes the parent again and is redrawn. Measured with f = 0.5,
// it kept the switches but did not pay (bench/RESULTS.md, "An edit
// floor"), so 0, off, is the default.
func (p *Policy) SetEditFloor(f float64) error {
	if err := CheckEditFloor(f); err != nil {
		return fmt.Errorf("recipe policy: %w", err)
	}
	p.editFloor = f
	return nil
}

// CheckEditFloor says why f is not a share of the prior (nil when it is).
func CheckEditFloor(f float64) error { return checkShare("edit floor", f) }

// SetScratchPrior has the share f of scratch walks drawn wholly from the
// prior (every decision floored at 1, the mechanism of rl.Prompt.Widen at
// 1): the prompting baseline's walk for the same prompt. The learnt scratch
// policy concentrates on the families whose first programs scored well, so
// a family the prior draws once in 60 walks and whose first draws happened
// to score badly is all but never drawn again; on austen-authorship at 20
// minutes RL drew complement naive Bayes 0 times in 270 scratch walks, and
// the prompting baseline's best line began with it (bench/RESULTS.md).
// Such walks' PPO ratio is 1 (the mixture is the prior alone), so they teach
// the net nothing directly; what they find reaches it as the parent of
// improve walks. The coin is drawn only when f > 0, so a run without it
// draws exactly what it drew before. A Policy starts at 0; mlerl train and
// bench set 0.5 where it learns, as measured (bench/RESULTS.md, 2026-12-04).
func (p *Policy) SetScratchPrior(f float64) error {
	if err := CheckScratchPrior(f); err != nil {
		return fmt.Errorf("recipe policy: %w", err)
	}
	p.scratchPrior = f
	return nil
}

// CheckScratchPrior says why f is not a share of scratch walks (nil when it
// is).
func CheckScratchPrior(f float64) error { return checkShare("scratch prior", f) }

func checkShare(what string, f float64) error {
	if !(f >= 0 && f <= 1) {
		return fmt.Errorf("%s %v is not in [0, 1]", what, f)
	}
	return nil
}

// scratchFloor is the floor of a scratch walk's decisions: 1 for the share
// of walks SetScratchPrior gives the prior, marked in m, else 0.
func (p *Policy) scratchFloor(m *meta) float64 {
	if p.scratchPrior > 0 && p.rng.Float64() < p.scratchPrior {
		m.ScratchPrior = true
		return 1
	}
	return 0
}

// scratchWalk is a scratch walk's floor, its marks set in m: the scratch
// prior's share is wholly the prior's (scratchFloor) and, for a stalled
// task with SetFlatFamily, draws its family flat; a policy without a
// scratch prior draws SetFlatFamilyShare's share of a stalled task's
// scratch walks that way.
func (p *Policy) scratchWalk(pr rl.Prompt, m *meta) float64 {
	floor := p.scratchFloor(m)
	m.FlatFamily = p.flatFamily && pr.Stalled && floor == 1
	if p.flatShare > 0 && p.scratchPrior == 0 && pr.Stalled && p.rng.Float64() < p.flatShare {
		floor, m.ScratchPrior, m.FlatFamily = 1, true, true
	}
	return floor
}

// SetPriorOnRepeat says what a walk does when maxRedraws redraws have all
// reproduced plans already written for the task: off (the default), the
// episode repeats one of them, which the cache answers at once and which
// teaches nothing; on, the walk is drawn again with each decision floored at
// half the prior and then at all of it (repeatFloors), so a policy that has
// written every plan near its mode goes on searching where the prompting
// baseline would. At 20 minutes RL repeated about 1,300 programs a run on
// movie-ratings, 330 on meats-composition, 300 on telco-churn and 80 on
// stackoverflow-remote, but 2 over all three runs of wordnet-supersense and
// none on tweet-source, whose text gives edits far more plans
// (bench/RESULTS.md); on stackoverflow-remote its best stopped moving while
// no-learn's went on, on meats-composition RL still ended ahead of no-learn
// on every seed. Measured on telco-churn it ended most repeats and moved no
// best; on digit-images at 20 minutes, where without it RL's walks repeated
// 98% of the time from minute 7 (instant repeats and their updates, 46,168
// episodes by minute 12), it ended that loop, but a spent parent's edits
// still repeat as often as the prompting baseline's (a quarter of the
// episodes). So an improve walk that repeats at every floor no longer
// repeats: its parent's edits are spent, and the prompt is answered with a
// walk from scratch (rl.Action.Kind Scratch, meta spent_parent), whose
// draws almost never repeat (400 prior draws per suite task gave none).
// Off, by the rule it was measured under.
func (p *Policy) SetPriorOnRepeat(on bool) { p.priorOnRepeat = on }

// SetFlatFamily has the scratch walks the scratch prior draws
// (SetScratchPrior) for a task whose best has stood still
// (rl.Prompt.Stalled, rl.Config.FlatFamilyAfter) draw the model family with
// no preference among the families the table allows: every family gets the
// same mass, except those the cost model says would overrun half the time
// limit and those that would fail here (familyBreaks), which keep the
// prior's avoidance (AvoidLogit). The rest of the walk is the prior's. Why:
// past its first minutes a run's best sits on one family's ceiling, and the
// families that could go above it are the ones the prior draws least: the
// prior prefers Default's family at every scratch walk, and on a table of
// text of 2,000 rows or more makes the tree ensembles about 300 times less
// likely (slowOnText), a blanket rule from two suite tasks that the cost model,
// which sees the plan's rows and n-gram features, now judges plan by plan:
// without the option both arms of a bench drew a family such as gradient
// boosting over hashed text a few times a run. Such walks are the prior's at every
// decision but the family's, which is a fixed uniform draw: their PPO ratio
// is 1 and they teach the net nothing directly; what they find reaches it
// as the parent of improve walks. Off, the default: a run draws exactly
// what it drew before.
func (p *Policy) SetFlatFamily(on bool) { p.flatFamily = on }

// SetFlatFamilyShare gives a policy without a scratch prior, such as the
// prompting baseline's frozen one, the walks SetFlatFamily gives the scratch
// prior's: that share of a stalled task's scratch walks is drawn wholly from
// the prior with the model family flat. Why: the RL arms' flat walks are a
// change of search, not of learning; the prompting baseline given the same
// share tells what the search gains from them from what learning adds (bench
// arm no-learn-flat). The share draws nothing until a task first stalls, so
// that far the policy draws exactly what it draws without it, and a run
// beside the plain baseline's replays it from the store. With a scratch
// prior set, its walks are the flat ones and the share adds none. 0, the
// default, is off.
func (p *Policy) SetFlatFamilyShare(share float64) error {
	if err := checkShare("flat family share", share); err != nil {
		return err
	}
	p.flatShare = share
	return nil
}

// Version is the number of updates the net has taken.
func (p *Policy) Version() int { return p.net.Version() }

// Sample writes one program per prompt.
func (p *Policy) Sample(ctx context.Context, prompts []rl.Prompt) ([]rl.Action, error) {
	out := make([]rl.Action, 0, len(prompts))
	for _, pr := range prompts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		a, err := p.sample(pr)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func (p *Policy) sample(pr rl.Prompt) (rl.Action, error) {
	prof, ok := p.profiles[pr.Task.Name]
	if !ok {
		return rl.Action{}, fmt.Errorf("recipe policy: task %s was not profiled", pr.Task.Name)
	}
	m := meta{Temperature: p.temperature}
	var parentPlan *Plan
	if pr.Kind == episode.Improve && pr.Parent != nil {
		var pm meta
		if err := json.Unmarshal(pr.Parent.Action.Meta, &pm); err != nil || pm.Plan == nil {
			return rl.Action{}, fmt.Errorf("recipe policy: improve prompt: parent action has no recipe plan")
		}
		parentPlan, m.Parent, m.ParentReward = pm.Plan, pm.Steps, pr.Parent.Result.Reward
	}
	c := choicenet.Context{Features: prof.Features(), Parent: m.Parent, ParentReward: m.ParentReward}
	prefs := p.prefs[pr.Task.Name]
	widen := 0.0
	if parentPlan != nil {
		widen = pr.Widen
	} else {
		widen = p.scratchWalk(pr, &m)
	}
	if !(widen >= 0 && widen <= 1) {
		return rl.Action{}, fmt.Errorf("recipe policy: widen %v is not a share in [0, 1]", pr.Widen)
	}
	drawFrom := func(c choicenet.Context, parentPlan *Plan, widen float64, flat bool) (*Walker, stepsAndLogps, *screenNote, error) {
		drawOne := func(seen map[string]bool) (*Walker, stepsAndLogps, error) {
			w, steps, logps, err := p.draw(prof, c, prefs, parentPlan, widen, flat, seen)
			return w, stepsAndLogps{steps, logps}, err
		}
		return p.screenDraw(pr.Task.Name, drawOne, p.tried[pr.Task.Name])
	}
	tried := len(p.tried[pr.Task.Name])
	w, drawn, note, err := drawFrom(c, parentPlan, widen, m.FlatFamily)
	if err != nil {
		return rl.Action{}, fmt.Errorf("%w for task %s", err, pr.Task.Name)
	}
	// A walk that added no plan to the task's written ones (or gave back
	// the parent) repeats one: with SetPriorOnRepeat every floor has been
	// tried, so the parent's edits are spent and the prompt is answered
	// from scratch, where the prior's draws almost never repeat.
	if p.priorOnRepeat && parentPlan != nil && (len(p.tried[pr.Task.Name]) == tried || w.Plan().Key() == parentPlan.Key()) {
		parentPlan, m.Parent, m.ParentReward, m.Spent = nil, nil, 0, true
		floor := p.scratchWalk(pr, &m)
		if w, drawn, note, err = drawFrom(choicenet.Context{Features: prof.Features()}, nil, floor, m.FlatFamily); err != nil {
			return rl.Action{}, fmt.Errorf("%w for task %s", err, pr.Task.Name)
		}
	}
	m.Steps, m.Screen = drawn.steps, note
	logps := drawn.logps
	m.Plan = w.Plan()
	code, err := Render(prof, m.Plan)
	if err != nil {
		return rl.Action{}, fmt.Errorf("recipe policy: rendering %s: %w", m.Plan.Key(), err)
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return rl.Action{}, err
	}
	kind := pr.Kind
	if parentPlan == nil {
		kind = episode.Scratch
	}
	tokens := make([]int, 0, 3*len(m.Steps))
	for _, s := range m.Steps {
		tokens = append(tokens, s.Decision, s.NumOptions, s.Chosen)
	}
	return rl.Action{
		Kind: kind, Plan: m.Plan.Describe(), Key: m.Plan.Key(), Code: code, PolicyVersion: p.net.Version(),
		Tokens: tokens, TokenLogProbs: logps, Meta: raw, CreditGroups: creditGroups(m.Steps, m.Plan),
		Line: m.Plan.Get("model.family"),
	}, nil
}

// creditGroups names, for each step, the state its credit is judged in
// under rl.Config.DecisionCredit: a hyperparameter is only ever asked for
// one model family, so it is judged against the task's programs of that
// family ("model.family=xgboost"); every other decision against all of the
// task's programs (""). nil when the plan has no hyperparameter step.
func creditGroups(steps []choicenet.Step, plan *Plan) []string {
	var groups []string
	for i, s := range steps {
		if grammar[s.Decision].part != PartHyper {
			continue
		}
		if groups == nil {
			groups = make([]string, len(steps))
		}
		groups[i] = "model.family=" + plan.Get("model.family")
	}
	return groups
}

// draw walks the grammar for a prompt and marks the plan it returns as
// written (seen). A walk that reproduces a plan this policy already wrote
// for the task (its parent, for an improve walk) would spend an episode
// learning nothing new: the cache hands back the old result, and a policy
// that keeps writing it collapses onto it. So it is drawn again, up to
// maxRedraws times: sampling without replacement, which turns a
// concentrated policy into a local search around its mode. The
// log-probabilities are the drawn walk's own, not renormalised for the
// excluded plans: with q the mass of the excluded plans, a sample's PPO
// ratio is off by (1-q_old)/(1-q_new), near 1 between the few versions a
// sample may be stale, and the clip bounds it either way.
//
// With SetPriorOnRepeat, a walk whose redraws all repeat is drawn again at
// each of the floors of repeatFloors in turn, maxRedraws more times each:
// the policy has written every plan it would, so half of each decision, and
// then all of it, goes back to the prior. When every draw repeats something,
// a plan that is not the parent is still better than the parent: the first
// such draw is kept.
func (p *Policy) draw(prof *Profile, c choicenet.Context, prefs preferences, parentPlan *Plan, widen float64, flat bool, seen map[string]bool) (w *Walker, steps []choicenet.Step, logps []float64, err error) {
	type draw struct {
		w     *Walker
		steps []choicenet.Step
		logps []float64
	}
	floors := []float64{widen}
	if p.priorOnRepeat {
		for _, f := range repeatFloors {
			if f > widen {
				floors = append(floors, f)
			}
		}
	}
	var notParent *draw
	for _, floor := range floors {
		for attempt := 0; ; attempt++ {
			w = NewWalker(prof, parentPlan)
			w.flat = flat
			if steps, logps, err = p.walk(w, c, prefs, parentPlan, floor); err != nil {
				return nil, nil, nil, err
			}
			key := w.Plan().Key()
			isParent := parentPlan != nil && key == parentPlan.Key()
			if !seen[key] && !isParent {
				seen[key] = true
				return w, steps, logps, nil
			}
			if !isParent && notParent == nil {
				notParent = &draw{w, steps, logps}
			}
			if attempt == maxRedraws {
				break
			}
		}
	}
	if parentPlan != nil && w.Plan().Key() == parentPlan.Key() && notParent != nil {
		w, steps, logps = notParent.w, notParent.steps, notParent.logps
	}
	seen[w.Plan().Key()] = true
	return w, steps, logps, nil
}

// maxRedraws bounds how often a walk that reproduced a plan already written
// is drawn again. With the prior toward the parent's values a one-decision part
// keeps the parent about 4 times in 5, so 64 redraws leave a duplicate
// about once in a million walks; each walk costs microseconds.
const maxRedraws = 64

// repeatFloors are the shares of the prior a walk is floored at, in turn,
// once maxRedraws redraws have repeated plans (SetPriorOnRepeat): at 0.5 the
// policy still has half of each decision and its PPO ratio a gradient; at 1
// the walk is the prior's, the prompting baseline's walk for the same prompt.
var repeatFloors = []float64{0.5, 1}

// walk takes w's decisions with the net and returns them with their
// log-probabilities. Every decision gets a prior (Hint) toward
// Default's option, except in the part an improve walk re-decides: there the
// prior is toward the parent's own value, so an improvement is a local edit
// of a good plan (most decisions kept, a few changed) rather than a pull back
// to Default, which would undo what made the parent good.
//
// widen (rl.Prompt.Widen, improve walks only) floors every decision at that
// share of the prior, the edit floor's mechanism over the whole walk: at 1
// the walk is the prior's, the prompting baseline's edit of the same parent.
// Its PPO ratio is the mixture's, as the edit floor's.
func (p *Policy) walk(w *Walker, c choicenet.Context, prefs preferences, parent *Plan, widen float64) ([]choicenet.Step, []float64, error) {
	var steps []choicenet.Step
	var logps []float64
	for d, ok := w.Next(); ok; d, ok = w.Next() {
		step := choicenet.Step{Decision: d.ID, NumOptions: len(d.Options), Avoid: d.Avoid}
		switch {
		case d.Name == improveDecision: // which part to improve has no default
			step.Floor = p.editFloor
		case w.flat && d.Name == "model.family": // no preferred family (SetFlatFamily)
		case parent != nil && grammar[d.ID].part == w.Part() && slices.Contains(d.Options, parent.Get(d.Name)):
			step.Hint = 1 + slices.Index(d.Options, parent.Get(d.Name))
			if d.Name == "model.family" {
				step.Floor = p.editFloor
			}
		default:
			step.Hint = 1 + prefs.option(d)
		}
		step.Floor = max(step.Floor, widen)
		i, lp := p.net.ChooseStep(c, steps, step, p.temperature, p.rng)
		if i < 0 {
			// The net's input check failed: a profile or plan the net was not
			// built for (a checkpoint from another grammar, say).
			return nil, nil, fmt.Errorf("recipe policy: the network cannot decide %q (decision %d of %d options): its input does not match its shape",
				d.Name, d.ID, len(d.Options))
		}
		if err := w.Choose(i); err != nil {
			return nil, nil, fmt.Errorf("recipe policy: %w", err)
		}
		step.Chosen = i
		steps = append(steps, step)
		logps = append(logps, lp)
	}
	return steps, logps, nil
}

// Update takes one PPO step; the learner has already put the duration weight
// into each sample's advantage.
func (p *Policy) Update(ctx context.Context, samples []rl.Sample) (rl.UpdateStats, error) {
	batch := make([]choicenet.Example, 0, len(samples))
	for _, s := range samples {
		var m meta
		if err := json.Unmarshal(s.Action.Meta, &m); err != nil {
			return rl.UpdateStats{}, fmt.Errorf("recipe policy: sample without a recipe record: %w", err)
		}
		prof, ok := p.profiles[s.Prompt.Task.Name]
		if !ok {
			return rl.UpdateStats{}, fmt.Errorf("recipe policy: task %s was not profiled", s.Prompt.Task.Name)
		}
		batch = append(batch, choicenet.Example{
			Ctx:         choicenet.Context{Features: prof.Features(), Parent: m.Parent, ParentReward: m.ParentReward},
			Steps:       m.Steps,
			OldLogProbs: s.Action.TokenLogProbs,
			Advantage:   s.Advantage,
			Temperature: m.Temperature,
			// Step advantages of the wrong length are the net's ErrBadInput:
			// they would be another action's credit.
			StepAdvantages: s.TokenAdvantages,
		})
	}
	st, err := p.net.Update(ctx, batch)
	if err != nil {
		return rl.UpdateStats{}, fmt.Errorf("recipe policy: %w", err)
	}
	return rl.UpdateStats{Loss: st.Loss, Entropy: st.Entropy, KL: st.ApproxKL, ClipFrac: st.ClipFrac, NewVersion: p.net.Version()}, nil
}

const netFile = "recipe-net.bin"

// Save writes the net (weights, optimiser state, version) into dir, and the
// models of results when the screen has observed any (SetScreen).
func (p *Policy) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("recipe policy: save: %w", err)
	}
	tmp, err := os.CreateTemp(dir, netFile+".tmp*")
	if err != nil {
		return fmt.Errorf("recipe policy: save: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := p.net.Save(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("recipe policy: save: %w", err)
	}
	if err := errors.Join(tmp.Sync(), tmp.Close()); err != nil {
		return fmt.Errorf("recipe policy: save: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, netFile)); err != nil {
		return fmt.Errorf("recipe policy: save: %w", err)
	}
	if err := p.saveScreen(dir); err != nil {
		return fmt.Errorf("recipe policy: save: %w", err)
	}
	return nil
}

// Load restores what Save wrote; a folder without models of results (a
// run without the screen, or from before it) leaves none.
func (p *Policy) Load(dir string) error {
	f, err := os.Open(filepath.Join(dir, netFile))
	if err != nil {
		return fmt.Errorf("recipe policy: load: %w", err)
	}
	defer f.Close()
	if err := p.net.Load(f); err != nil {
		return fmt.Errorf("recipe policy: load %s: %w", f.Name(), err)
	}
	if err := p.loadScreen(dir); err != nil {
		return fmt.Errorf("recipe policy: load: %w", err)
	}
	return nil
}
