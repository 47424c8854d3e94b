package ui

import (
	"errors"
	"fmt"
	"html"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mlerl/mlerl/policy/recipe"
	"github.com/mlerl/mlerl/report"
	"github.com/mlerl/mlerl/rl/runfolder"
	"github.com/mlerl/mlerl/task"
)

// policyView is what the built-in policy of one run learned, computed from
// its last checkpoint and kept until the checkpoint changes: profiling a
// task reads its data, so it is done once per run, not per page view.
type policyView struct {
	mu         sync.Mutex
	now, prior *recipe.Policy
	task       string
	stamp      stamp
	html       string
}

// policy renders the policy view of run i.
func (s *Server) policy(i int, rr report.Run) string {
	if rr.Config == nil {
		return note("run.json not written yet.")
	}
	if p, _ := rr.Config["policy"].(string); p != "recipe" {
		return note("This run's policy is " + p + ": the per-decision view is for the built-in recipe policy.")
	}
	if s.opts.LoadTask == nil {
		return note("Task loading is not wired in; the policy view needs the task's profile.")
	}
	s.mu.Lock()
	pv := s.policies[i]
	if pv == nil {
		pv = &policyView{}
		s.policies[i] = pv
	}
	s.mu.Unlock()
	pv.mu.Lock()
	defer pv.mu.Unlock()
	dir := s.runs[i].dir
	st := stampOf(filepath.Join(dir, runfolder.CheckDir, "state.json"))
	if pv.html != "" && st == pv.stamp {
		return pv.html
	}
	out, err := pv.render(dir, rr, s.opts.LoadTask)
	if err != nil {
		return note("Cannot show what the policy learned: " + err.Error())
	}
	pv.stamp, pv.html = st, out
	return out
}

func note(s string) string { return `<p class="note">` + html.EscapeString(s) + "</p>\n" }

// render loads the checkpoint's net and tabulates its odds against the prior.
func (pv *policyView) render(dir string, rr report.Run, load func(string) (*task.Task, error)) (string, error) {
	if pv.now == nil {
		if err := pv.init(rr, load); err != nil {
			return "", err
		}
	}
	st := report.ReadObject(filepath.Join(dir, runfolder.CheckDir, "state.json"))
	pdir, _ := st["policy_dir"].(string)
	version := "0 (no checkpoint yet: the prior itself)"
	if pdir != "" {
		if err := pv.now.Load(filepath.Join(dir, runfolder.CheckDir, pdir)); err != nil {
			return "", err
		}
		version = fmt.Sprint(pv.now.Version())
	}
	odds, err := pv.now.Odds(pv.task, pv.prior)
	if err != nil {
		return "", err
	}
	return oddsTable(version, pv.task, odds), nil
}

func (pv *policyView) init(rr report.Run, load func(string) (*task.Task, error)) error {
	names, _ := rr.Config["tasks"].([]any)
	if len(names) == 0 {
		return fmt.Errorf("run.json names no task")
	}
	var tasks []*task.Task
	for _, n := range names {
		t, err := load(fmt.Sprint(n))
		if err != nil {
			return fmt.Errorf("task %v: %w", n, err)
		}
		tasks = append(tasks, t)
	}
	seed := uint64(1)
	if f, ok := rr.Config["seed"].(float64); ok {
		seed = uint64(f)
	}
	// The prior is the net the run started from: same seed, no update.
	prior, err := recipe.NewPolicy(tasks, seed)
	if err != nil {
		return err
	}
	now, err := recipe.NewPolicy(tasks, seed)
	if err != nil {
		return err
	}
	if g, ok := rr.Config["grid"].(string); ok && g != "" { // the options the run's plans could take
		if err := errors.Join(prior.SetGrid(g), now.SetGrid(g)); err != nil {
			return err
		}
	}
	pv.now, pv.prior, pv.task = now, prior, tasks[0].Name
	return nil
}

func oddsTable(version, taskName string, odds []recipe.DecisionOdds) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<p class="note" id="policy-source">Computed from the last checkpoint (policy version %s) for task %s: at each decision of a plan from scratch, the probability of each option now (blue) against the prior (grey: the net before any update, with its hint toward the default option, marked *). The walk goes on with the option now most likely (bold), so later decisions are asked in the context of the policy's current favourite plan.</p>`,
		html.EscapeString(version), html.EscapeString(taskName))
	b.WriteString(`<table class="probs" id="policy-table"><tr><th>decision</th><th>option</th><th>now</th><th>prior</th></tr>`)
	for _, d := range odds {
		for k, opt := range d.Options {
			name, label := "", html.EscapeString(opt)
			if k == 0 {
				name = html.EscapeString(d.Name)
			}
			if k == d.Default {
				label += "*"
			}
			if k == d.Chosen {
				label = "<b>" + label + "</b>"
			}
			fmt.Fprintf(&b, `<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`, name, label, pbar(d.Now[k], ""), pbar(d.Prior[k], " prior"))
		}
	}
	b.WriteString("</table>\n")
	return b.String()
}

func pbar(p float64, cls string) string {
	return fmt.Sprintf(`<span class="pbar%s" style="width:%.0fpx"></span> %.2f`, cls, 1+120*p, p)
}
