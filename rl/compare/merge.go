package compare

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/mlerl/mlerl/grade"
	"github.com/mlerl/mlerl/rl"
)

// Merge combines comparisons that ran apart into one result, so that one
// table compares them: the usual case is one bench process per arm side by
// side (each gets its own real slot), or more seeds run later on the same
// store. names label the parts in errors (file names), one per part.
//
// Parts must have been run alike — the same budget, workers, batch, clock
// and program settings — or their numbers do not compare, and Merge says
// which setting differs. The RL settings only bind parts that have an RL
// arm: a no-learn run's are its defaults and never shaped anything. A run
// (task, arm, seed) in two parts is an error, not a silent pick. Summaries,
// and the count of programs really run, are computed again from the runs,
// not trusted from the parts: a caller may have dropped some of a part's arms.
func Merge(parts []*Result, names []string) (*Result, error) {
	if len(parts) == 0 || len(parts) != len(names) {
		return nil, fmt.Errorf("merge: need results, each with a name (got %d results, %d names)", len(parts), len(names))
	}
	out := &Result{}
	var rlFrom string        // the first part with an RL arm, whose RL settings the rest must share
	settingsFrom := names[0] // the first part that recorded program settings
	type runKey struct {
		task, arm string
		seed      uint64
	}
	seen := map[runKey]string{}
	arms := map[[2]string]*Arm{}
	lowerBetter := map[string]bool{} // per task
	for i, p := range parts {
		name := names[i]
		if i == 0 {
			*out = *p
			out.Arms, out.Executed, out.Cautions = nil, 0, nil
		} else if err := sameRun(out, p, names[0], settingsFrom, name); err != nil {
			return nil, err
		}
		if out.Settings.Timeout == 0 { // the first part that recorded them
			out.Settings, settingsFrom = p.Settings, name
		}
		if readsLearning(p) {
			if rlFrom == "" {
				rlFrom = name
				out.Learning = p.Learning
			} else if d := out.Learning.diff(p.Learning); d != "" {
				return nil, fmt.Errorf("merge: %s and %s ran their RL arms (or no-learn-flat) with different %s", rlFrom, name, d)
			}
		}
		if p.Incomplete != "" { // part 0's was copied in above and is rewritten here with its name
			if i == 0 {
				out.Incomplete = ""
			}
			out.Incomplete = strings.TrimPrefix(out.Incomplete+"; ", "; ") + name + ": " + p.Incomplete
		}
		if i > 0 && p.Binary != "" && !slices.Contains(strings.Split(out.Binary, ", "), p.Binary) {
			out.Binary = strings.TrimPrefix(out.Binary+", "+p.Binary, ", ")
		}
		for _, a := range p.Arms {
			if lower, ok := lowerBetter[a.Task]; ok && lower != a.LowerIsBetter {
				return nil, fmt.Errorf("merge: %s says task %s is %s, an earlier part the opposite", name, a.Task, grade.Direction(a.LowerIsBetter))
			}
			lowerBetter[a.Task] = a.LowerIsBetter
			k := [2]string{a.Task, a.Arm}
			m := arms[k]
			if m == nil {
				m = &Arm{Task: a.Task, Arm: a.Arm, LowerIsBetter: a.LowerIsBetter}
				arms[k] = m
			}
			for _, r := range a.Runs {
				rk := runKey{a.Task, a.Arm, r.Seed}
				if first, dup := seen[rk]; dup {
					return nil, fmt.Errorf("merge: %s %s seed %d is in both %s and %s", a.Task, a.Arm, r.Seed, first, name)
				}
				seen[rk] = name
				m.Runs = append(m.Runs, r)
				out.Executed += r.Executed
			}
			// A stopped run is no finished one: the same seed finished in
			// another part (run again later) is the usual case, not a clash.
			for _, r := range a.Stopped {
				m.Stopped = append(m.Stopped, r)
				out.Executed += r.Executed
			}
		}
	}
	out.Cautions = speedCautions(parts, names)
	order := Arms()
	out.Seeds = 0
	for _, m := range arms {
		slices.SortFunc(m.Runs, func(a, b Run) int { return cmp.Compare(a.Seed, b.Seed) })
		m.summarise(out.Budget)
		out.Arms = append(out.Arms, *m)
		out.Seeds = max(out.Seeds, len(m.Runs))
	}
	slices.SortFunc(out.Arms, func(a, b Arm) int {
		return cmp.Or(strings.Compare(a.Task, b.Task), slices.Index(order, a.Arm)-slices.Index(order, b.Arm), strings.Compare(a.Arm, b.Arm))
	})
	return out, nil
}

// sameRun says how q was run differently from p, in what every arm shares;
// p's program settings are from part settingsFrom, the rest from pName.
// Program settings recorded by only one of them (results from before they
// were recorded) are not held against it.
func sameRun(p, q *Result, pName, settingsFrom, qName string) error {
	var d []string
	if p.Mode != q.Mode {
		d = append(d, fmt.Sprintf("clock (%q, %q)", p.Mode, q.Mode))
	}
	if p.Budget != q.Budget {
		d = append(d, fmt.Sprintf("budget (%v, %v)", p.Budget, q.Budget))
	}
	if p.Workers != q.Workers {
		d = append(d, fmt.Sprintf("workers (%d, %d)", p.Workers, q.Workers))
	}
	if p.Batch != q.Batch {
		d = append(d, fmt.Sprintf("batch (%d, %d)", p.Batch, q.Batch))
	}
	if p.Grid != q.Grid { // "" is the standard grid, and only it is written so
		d = append(d, fmt.Sprintf("grid (%q, %q)", cmp.Or(p.Grid, "standard"), cmp.Or(q.Grid, "standard")))
	}
	if p.Lines != q.Lines {
		d = append(d, fmt.Sprintf("lines (%d, %d)", p.Lines, q.Lines))
	}
	if p.LinesAfter != q.LinesAfter {
		d = append(d, fmt.Sprintf("lines after (%v, %v)", p.LinesAfter, q.LinesAfter))
	}
	if p.Mix != q.Mix { // "" is the fixed half, and only it is written so
		d = append(d, fmt.Sprintf("mix (%s, %s)", cmp.Or(p.Mix, rl.MixHalf), cmp.Or(q.Mix, rl.MixHalf)))
	}
	if len(d) > 0 {
		return fmt.Errorf("merge: %s and %s were not run alike: %s", pName, qName, strings.Join(d, ", "))
	}
	if ps, qs := p.Settings, q.Settings; ps != qs && ps.Timeout != 0 && qs.Timeout != 0 {
		return fmt.Errorf("merge: %s and %s were not run alike: program settings (limit %v, memory %d, instrument %q, threads %d; limit %v, memory %d, instrument %q, threads %d)",
			settingsFrom, qName, ps.Timeout, ps.MemoryBytes, ps.Instrument, ps.Threads, qs.Timeout, qs.MemoryBytes, qs.Instrument, qs.Threads)
	}
	return nil
}

// readsLearning says whether r has an arm whose Learning settings mattered (an
// arm that learns, or no-learn-flat).
func readsLearning(r *Result) bool {
	for _, a := range r.Arms {
		if usesLearning(a.Arm) {
			return true
		}
	}
	return false
}

// speedLimit is the ratio of durations beyond which parts are said to have
// run on machines of different speed: a round margin for the noise of
// timing one program twice, not measured. The gap it is for was not small:
// the same task's runs completed 22 and 35 episodes on two days
// (bench/RESULTS.md, "a caution on comparing runs made apart").
const speedLimit = 1.25

// speedCautions compares the first programs (Run.First) each part shares
// with the earliest part that ran any of the same ones on the task: parts
// run apart on different stores measured their programs on the machine of
// the day, and a program that took longer there leaves fewer episodes in
// the same virtual budget, whatever the arm. The same program twice on one
// store is the same measurement (ratio 1).
func speedCautions(parts []*Result, names []string) []string {
	type program struct{ task, plan string }
	times := make([]map[program]float64, len(parts)) // seconds
	var tasks []string
	for i, p := range parts {
		times[i] = map[program]float64{}
		for _, a := range p.Arms {
			for _, r := range a.Runs {
				for _, f := range r.First {
					if f.DurationS > 0 {
						times[i][program{a.Task, f.Plan}] = f.DurationS
					}
					if !slices.Contains(tasks, a.Task) {
						tasks = append(tasks, a.Task)
					}
				}
			}
		}
	}
	slices.Sort(tasks)
	var out []string
	for _, t := range tasks {
		for i := range parts {
			for ref := range i {
				var ratios []float64
				for p, s := range times[i] {
					if s0, ok := times[ref][p]; ok && p.task == t {
						ratios = append(ratios, s/s0)
					}
				}
				if len(ratios) == 0 {
					continue
				}
				if m := median(ratios); m > speedLimit || m < 1/speedLimit {
					out = append(out, fmt.Sprintf("%s: the programs %s and %s both ran first took %.2f× as long in %s (median of %d): durations, and so episodes in a virtual budget, do not compare; run the arms side by side or on one --cache",
						t, names[ref], names[i], m, names[i], len(ratios)))
				}
				break
			}
		}
	}
	return out
}
