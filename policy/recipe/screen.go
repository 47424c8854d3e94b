package recipe

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/mlerl/mlerl/policy/choicenet"
	"github.com/mlerl/mlerl/policy/screen"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/rl/runfolder"
)

// SetScreen makes every walk draw k distinct new candidate plans and run the
// one the task's model of results (package screen) expects to improve most
// on the task's best; 0 (the default) runs the policy's first draw, as
// before. The model learns from every completed episode (Observe); until it
// has a few valid results it picks the first draw. k = 1 would be the first
// draw: refused, so a flag of 1 is not mistaken for a screen.
//
// Why: past a run's first minutes the learnt policy draws near its mode, and
// which line an improve walk reaches decides the final best
// (bench/RESULTS.md, the 20-minute runs): the net, anchored to the prior and
// moved a noisy batch at a time, forgets what it tried, while the model keeps
// every result and knows which choices were never tried. The candidates are
// the policy's own draws, so what it learnt still proposes; the model
// disposes. The PPO update then learns from the chosen samples with their
// own log-probabilities: the screen is part of how actions are chosen, as a
// search over a policy's samples is, and the clip bounds what the selection
// does to the ratio.
func (p *Policy) SetScreen(k int) error {
	if err := CheckScreen(k); err != nil {
		return fmt.Errorf("recipe policy: %w", err)
	}
	p.screenK = k
	return nil
}

// SetScreenPerSecond makes the screen run the candidate of most expected
// improvement per second the task's model of durations predicts for it,
// rather than of most expected improvement: a budget is seconds, and a
// program that is likely to improve a little in 3 s can be worth more than
// one a little likelier to in 40 (or to time out there). It is Snoek et al.'s
// "EI per second" (2012), with the durations modelled as the scores are, by a
// Bayesian linear model of their logarithms over the plans' choices. Off, the
// screen ignores time: on one 20-minute run one seed of three spent 13
// programs on time-outs (bench/RESULTS.md).
func (p *Policy) SetScreenPerSecond(on bool) {
	p.screenBy = screen.Improvement
	if on {
		p.screenBy = screen.PerSecond
	}
}

// SetScreenAfter holds the screen back until a task's search has gone n
// new programs without a new best (screen.Model.SinceBest; 0, the default,
// screens every walk once the model is ready): until then the walks are the
// policy's first draws, as without a screen, and the model only learns.
//
// Why: the screen paid where runs stall, and cost where they do not. At 20
// minutes on austen-authorship it was 1.0-2.0 standard errors ahead of the
// prompting baseline from minute 5 to 15, and at 4 minutes on hpc-job-class
// and poll-adjustment ahead of no-learn and of the default RL; at 4 minutes
// on digit-images, whose best every run reaches within minutes, it ran slower
// untried programs from the start and ended 2.0 SE behind (bench/RESULTS.md).
// A run's early minutes are where the learnt policy's own draws find new
// bests quickly; past them, improve walks of one best are spent and the
// model, which keeps every result and knows which choices were never tried,
// is the better proposer. Needs SetScreen.
func (p *Policy) SetScreenAfter(n int) error {
	if err := CheckScreenAfter(p.screenK, n); err != nil {
		return fmt.Errorf("recipe policy: %w", err)
	}
	p.screenAfter = n
	return nil
}

// CheckScreenAfter says why the screen of k candidates cannot wait for n
// programs without a new best (nil when it can).
func CheckScreenAfter(k, n int) error {
	switch {
	case n < 0:
		return fmt.Errorf("screen after %d programs without a new best: want 0 (at once) or more", n)
	case n > 0 && k == 0:
		return errors.New("--screen-after says when the screen starts: it needs --screen K")
	}
	return nil
}

// CheckScreen says why k is not a screen size (nil when it is).
func CheckScreen(k int) error {
	if k < 0 || k == 1 || k > maxScreen {
		return fmt.Errorf("screen %d: want 0 (off) or 2 to %d candidates", k, maxScreen)
	}
	return nil
}

// CheckScreenPerSecond says why picking per second cannot be on with a
// screen of k candidates (nil when it can): it changes how the screen picks,
// and with no screen nothing picks.
func CheckScreenPerSecond(k int, perSecond bool) error {
	if perSecond && k == 0 {
		return errors.New("--screen-per-second changes how the screen picks: it needs --screen K")
	}
	return nil
}

// maxScreen bounds the candidates per walk: each is a walk of microseconds
// and a prediction of a few, but a screen of thousands is a different search.
const maxScreen = 256

// Observe records a completed episode in its task's model of results when
// the screen is on (rl.Observer); the learner calls it for every completion,
// reused ones included (the model keeps a plan once).
func (p *Policy) Observe(s rl.Solution) {
	if p.screenK == 0 {
		return
	}
	var m meta
	if err := json.Unmarshal(s.Action.Meta, &m); err != nil || m.Plan == nil {
		return // not a recipe action: nothing to learn its plan from
	}
	model := p.screens[s.Result.Task]
	if model == nil {
		model = screen.New()
		p.screens[s.Result.Task] = model
	}
	model.Observe(screenPlan(m.Plan), s.Result.Valid, s.Result.Reward, s.Result.DurationS)
}

// EpisodeNote is how the action was drawn, for its episodes.jsonl line
// (rl.Noter): its screen record, {"screen": {...}}, and whether the walk
// was the scratch prior's, and a flat-family one, so a reader of the run
// can tell those walks' programs from the learnt policy's; nil when none
// applies.
func (p *Policy) EpisodeNote(a rl.Action) json.RawMessage {
	var m meta
	if err := json.Unmarshal(a.Meta, &m); err != nil || m.Screen == nil && !m.ScratchPrior && !m.FlatFamily {
		return nil
	}
	b, err := json.Marshal(struct {
		Screen       *screenNote `json:"screen,omitempty"`
		ScratchPrior bool        `json:"scratch_prior,omitempty"`
		FlatFamily   bool        `json:"flat_family,omitempty"`
	}{m.Screen, m.ScratchPrior, m.FlatFamily})
	if err != nil {
		return nil
	}
	return b
}

// screenNote is what an action records of its screen: the candidates drawn,
// which was run, and the model's belief about it.
type screenNote struct {
	Candidates int               `json:"candidates"`
	Chosen     int               `json:"chosen"`
	Pred       screen.Prediction `json:"prediction"`
}

// screenDraw draws candidates until p.screenK of them are new (not written
// for the task before, nor, to the model, a repeat of a program run: they
// differ from one only in choices its results show to be neutral), or until
// screenDraws draws, and returns the one the model picks; only it is marked
// written. The walks see one another's plans as written. Without a ready
// model, or while SetScreenAfter holds the screen back, it is the first
// draw, as without a screen.
func (p *Policy) screenDraw(task string, drawOne func(seen map[string]bool) (*Walker, stepsAndLogps, error), seen map[string]bool) (*Walker, stepsAndLogps, *screenNote, error) {
	model := p.screens[task]
	if model == nil || !model.Ready() || model.SinceBest() < p.screenAfter {
		w, sl, err := drawOne(seen)
		return w, sl, nil, err
	}
	scratch := maps.Clone(seen)
	var walkers []*Walker
	var draws []stepsAndLogps
	var plans []screen.Plan
	fresh := 0
	for range screenDraws * p.screenK {
		w, sl, err := drawOne(scratch)
		if err != nil {
			return nil, stepsAndLogps{}, nil, err
		}
		key := w.Plan().Key()
		if seen[key] || slices.ContainsFunc(walkers, func(o *Walker) bool { return o.Plan().Key() == key }) {
			// The redraws ran out of new plans: the draw repeats one. It
			// is a candidate only if no draw is new (a repeat is answered
			// at once and teaches nothing, though its predicted mean can
			// beat a new plan's expected improvement).
			if len(walkers) == 0 {
				walkers, draws, plans = append(walkers, w), append(draws, sl), append(plans, screenPlan(w.Plan()))
			}
			break
		}
		sp := screenPlan(w.Plan())
		repeat := model.Repeats(sp)
		if repeat && len(walkers) > 0 {
			continue // a repeat in all but its key; the first is kept in case all are
		}
		walkers, draws, plans = append(walkers, w), append(draws, sl), append(plans, sp)
		if !repeat {
			if fresh++; fresh == p.screenK {
				break
			}
		}
	}
	i, preds := model.Pick(plans, p.screenBy)
	seen[walkers[i].Plan().Key()] = true
	return walkers[i], draws[i], &screenNote{Candidates: len(walkers), Chosen: i, Pred: preds[i]}, nil
}

// screenDraws bounds the draws per walk, in screens: with half of an
// improve walk's edits neutral on some tables (austen-authorship), 8 new
// candidates take about 16 draws.
const screenDraws = 4

// stepsAndLogps is one walk's decisions and their log-probabilities.
type stepsAndLogps struct {
	steps []choicenet.Step
	logps []float64
}

// partOf is each decision's part, by name.
var partOf = func() map[string]string {
	m := map[string]string{}
	for _, s := range grammar {
		m[s.name] = s.part
	}
	return m
}()

// screenPlan is what the model of results sees of a plan: its choices
// ("features.text=tfidf_word") grouped by the model family, each choice
// outside the model part paired with the family too
// ("xgboost|features.text=tfidf_word"), since how a table is encoded pays
// differently per model (one-hot text helps a linear model and can drown a
// forest). Hyperparameters belong to one family already.
func screenPlan(pl *Plan) screen.Plan {
	sp := screen.Plan{Group: pl.Get("model.family"), Choices: make([]screen.Choice, len(pl.Choices))}
	for i, c := range pl.Choices {
		part := partOf[c.Name]
		sp.Choices[i] = screen.Choice{Name: c.Name, Value: c.Value, Paired: part != PartHyper && part != PartModel}
	}
	return sp
}

const screenFile = "recipe-screen.json"

// saveScreen writes the models' observations beside the net (Save).
func (p *Policy) saveScreen(dir string) error {
	path := filepath.Join(dir, screenFile)
	if len(p.screens) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	st := map[string][]screen.Record{}
	for t, m := range p.screens {
		st[t] = m.State()
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return runfolder.WriteFileAtomic(path, b)
}

// loadScreen restores what saveScreen wrote; no file is no observations.
func (p *Policy) loadScreen(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, screenFile))
	if errors.Is(err, os.ErrNotExist) {
		p.screens = map[string]*screen.Model{}
		return nil
	}
	if err != nil {
		return err
	}
	var st map[string][]screen.Record
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("%s is corrupt: %w", screenFile, err)
	}
	screens := map[string]*screen.Model{}
	for t, recs := range st {
		m, err := screen.Restore(recs)
		if err != nil {
			return fmt.Errorf("%s: task %s: %w", screenFile, t, err)
		}
		screens[t] = m
	}
	p.screens = screens
	return nil
}

// ForgetResults drops the models of results: a policy loaded from another
// run (--init-policy) starts with that run's net but none of its results,
// which are another run's knowledge of the task, not a starting point.
func (p *Policy) ForgetResults() { p.screens = map[string]*screen.Model{} }
