package recipe

import (
	"fmt"

	"github.com/mlerl/mlerl/policy/choicenet"
)

// DecisionOdds is one decision of a plan from scratch: its options and how
// likely the policy now makes each, against how likely a fresh policy (its
// prior: the net before any update, with the hint toward Default) made them.
type DecisionOdds struct {
	Name    string    `json:"name"`
	Options []string  `json:"options"`
	Now     []float64 `json:"now"`
	Prior   []float64 `json:"prior"`
	Default int       `json:"default"` // the option the hint favours
	Chosen  int       `json:"chosen"`  // the one the walk went on with: the most probable now
}

// Odds walks one plan from scratch for task, always on with the option p now
// finds most probable (the policy's mode, decision by decision), and reports
// p's and prior's probabilities at every decision. A decision's options
// depend on earlier choices, so the walk is what makes the rows comparable:
// both nets are asked the same question in the same context.
func (p *Policy) Odds(task string, prior *Policy) ([]DecisionOdds, error) {
	prof, ok := p.profiles[task]
	if !ok {
		return nil, fmt.Errorf("recipe policy: task %s was not profiled", task)
	}
	c := choicenet.Context{Features: prof.Features()}
	prefs := p.prefs[task]
	w := NewWalker(prof, nil)
	var steps []choicenet.Step
	var out []DecisionOdds
	for d, ok := w.Next(); ok; d, ok = w.Next() {
		step := choicenet.Step{Decision: d.ID, NumOptions: len(d.Options), Hint: 1 + prefs.option(d)}
		now, err := p.net.StepProbs(c, steps, step, p.temperature)
		if err != nil {
			return nil, fmt.Errorf("recipe policy: odds of %s: %w", d.Name, err)
		}
		before, err := prior.net.StepProbs(c, steps, step, prior.temperature)
		if err != nil {
			return nil, fmt.Errorf("recipe policy: prior odds of %s: %w", d.Name, err)
		}
		best := 0
		for i, q := range now {
			if q > now[best] {
				best = i
			}
		}
		if err := w.Choose(best); err != nil {
			return nil, fmt.Errorf("recipe policy: %w", err)
		}
		step.Chosen = best
		steps = append(steps, step)
		out = append(out, DecisionOdds{Name: d.Name, Options: d.Options, Now: now, Prior: before, Default: step.Hint - 1, Chosen: best})
	}
	return out, nil
}
