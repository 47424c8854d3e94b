package recipe

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"
)

// costRun is one measured suite program: its plan's choices, the work the
// cost model gives it (without the ensemble multiplier), its seconds and
// whether it hit its limit (then seconds is a lower bound).
type costRun struct {
	task     string
	c        choices
	terms    costTerms
	seconds  float64
	timedOut bool
}

// costFitFiles are the committed measurements of suite and tuning programs
// the cost model is fitted on: the prior's samples (TestPriorFailures, 60 s),
// the named and random plans of TestSuitePlans (150 s) and its logisticGrid. Held-out tasks' files
// are not among them, nor the suite's earliest prior runs
// (prior-failures-{before,after,after-e9a095f}-suite.jsonl), measured at a
// load average of 9-11 on 2 cores (bench/prior-failures.md), where the
// same plan took anywhere from 3 to 50 s.
var costFitFiles = []string{
	"../../bench/results/prior-failures-avoid-8407dcd-suite.jsonl",
	"../../bench/results/prior-failures-avoid-88d8e50-suite.jsonl",
	"../../bench/results/prior-failures-trees-ed516c5-suite-text.jsonl",
	"testdata/measured.jsonl",
	// bench/tuning's many-class text task: logisticGrid at a load of 1
	// (not its first pass, -load3, nor the prior's samples measured beside
	// it: at a load of 3-4 the same plans took twice as long).
	"../../bench/results/cost-logistic-grid-fortune-a8603ba.jsonl",
	// and the prior's samples under the cost model before and after the
	// solver term, two programs at a time (a load of 2, as the suite's
	// prior files): hashed, 1-2-gram and 200,000-feature vocabularies.
	"../../bench/results/prior-failures-tuning-a8603ba-load2.jsonl",
	"../../bench/results/prior-failures-tuning-89aca0d-load2.jsonl",
}

// loadCostRuns reads costFitFiles: the valid runs and the timed-out ones
// (a crash's duration says nothing of the plan's), on tables whose width
// the model knows.
func loadCostRuns(t *testing.T) []costRun {
	t.Helper()
	profiles := map[string]*Profile{}
	for _, dir := range fitTasks() {
		p := mustProfile(t, dir)
		profiles[p.Name] = p
	}
	if len(profiles) == 0 {
		t.Skip("no suite/tasks in this checkout")
	}
	var runs []costRun
	for _, path := range costFitFiles {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var r struct {
				Task      string  `json:"task"`
				Plan      string  `json:"plan"`
				Key       string  `json:"key"`
				Valid     bool    `json:"valid"`
				TimedOut  bool    `json:"timed_out"`
				DurationS float64 `json:"duration_s"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			p := profiles[r.Task]
			if p == nil || !r.Valid && !r.TimedOut {
				continue
			}
			key := r.Plan
			if r.Key != "" {
				key = r.Key
			}
			c := choices{}
			for _, kv := range strings.Split(key, ";") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					c[k] = v
				}
			}
			terms, ok := planTerms(p, c)
			if !ok {
				continue
			}
			runs = append(runs, costRun{task: r.Task, c: c, terms: terms, seconds: r.DurationS, timedOut: r.TimedOut})
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return runs
}

// costFit is the least-squares fit of log(seconds) = log(costOverhead +
// costFeaturise · featurise + Σ costPerUnit[key] · units · solver) over runs
// (Gauss-Newton on the logs of the constants and on the solver term's two
// exponents). A timed-out run's seconds
// are a lower bound: it enters as the larger of its bound and the current
// prediction, refitted until the predictions settle (a simple treatment of
// censored values). It returns the constants, the root-mean-square log
// residual of the n runs that finished, and each run's residual.
func costFit(runs []costRun) (f costFitted, rms float64, n int, resid []float64) {
	// Unknowns: x[0] = log costFeaturise, then one log constant per key.
	var keys []string
	idx := map[string]int{}
	for _, r := range runs {
		for _, m := range r.terms.models {
			if _, ok := idx[m.key]; !ok {
				idx[m.key] = -1
				keys = append(keys, m.key)
			}
		}
	}
	sort.Strings(keys)
	for i, k := range keys {
		idx[k] = i + 1
	}
	// Then the solver term's exponents, starting at 0 (no term), and the
	// logs of its width and vocabulary constants.
	sc, sC, sW, sV, sS := len(keys)+1, len(keys)+2, len(keys)+3, len(keys)+4, len(keys)+5
	k := len(keys) + 6
	x := make([]float64, k)
	for i := range x {
		x[i] = math.Log(1e-6)
	}
	x[sc], x[sC], x[sW], x[sV], x[sS] = 0, 0, math.Log(10), math.Log(10), 0
	solver := func() solverTerms {
		return solverTerms{classes: x[sc], c: x[sC], width: math.Exp(x[sW]), vocab: math.Exp(x[sV]), svmClasses: x[sS]}
	}
	y := make([]float64, len(runs))
	for i, r := range runs {
		y[i] = math.Log(r.seconds)
	}
	// fitted is the model's seconds for r and d(log seconds)/dx.
	fitted := func(r costRun) (float64, map[int]float64) {
		grad := map[int]float64{}
		s := costOverhead
		if r.terms.featurise > 0 {
			v := math.Exp(x[0]) * r.terms.featurise
			s += v
			grad[0] += v
		}
		sv := solver()
		for _, m := range r.terms.models {
			v := m.seconds(math.Exp(x[idx[m.key]]), sv)
			s += v
			grad[idx[m.key]] += v
			if m.svm {
				grad[sS] += v * m.lnClasses
			} else {
				grad[sc] += v * m.lnClasses
			}
			grad[sC] += v * m.lnC
			if total := m.units + sv.width*m.perWidth + sv.vocab*m.coefficients; m.perWidth > 0 {
				grad[sW] += v * sv.width * m.perWidth / total
				grad[sV] += v * sv.vocab * m.coefficients / total
			}
		}
		for j := range grad {
			grad[j] /= s
		}
		return s, grad
	}
	for range 200 {
		for i, r := range runs {
			if r.timedOut {
				f, _ := fitted(r)
				y[i] = max(math.Log(r.seconds), math.Log(f))
			}
		}
		a := make([][]float64, k)
		for i := range a {
			a[i] = make([]float64, k)
			a[i][i] = 1e-3 // damping; it also keeps a key seen only beside others determined
		}
		b := make([]float64, k)
		// A weak pull of the exponents toward 0 (no solver term): without
		// it, a family whose runs are all about costOverhead (logistic
		// regression on small dense tables) lets the fit trade its
		// constant for an absurd exponent.
		for _, j := range []int{sc, sC, sS} {
			a[j][j] += costExponentPull
			b[j] -= costExponentPull * x[j]
		}
		for i, r := range runs {
			f, g := fitted(r)
			res := y[i] - math.Log(f)
			for p, gp := range g {
				b[p] += gp * res
				for q, gq := range g {
					a[p][q] += gp * gq
				}
			}
		}
		for j, d := range solve(a, b) {
			x[j] += max(-1, min(1, d))
		}
	}
	f = costFitted{featurise: math.Exp(x[0]), perUnit: map[string]float64{}, solver: solver()}
	for _, key := range keys {
		f.perUnit[key] = math.Exp(x[idx[key]])
	}
	var ss float64
	resid = make([]float64, len(runs))
	for i, r := range runs {
		f, _ := fitted(r)
		resid[i] = y[i] - math.Log(f)
		if !r.timedOut {
			ss += resid[i] * resid[i]
			n++
		}
	}
	return f, math.Sqrt(ss / float64(n)), n, resid
}

// costExponentPull is the weight of the pull toward 0 of the solver term's
// exponents, in squared log residuals: a prior of standard deviation 1.
const costExponentPull = 1.0

// costFitted are the cost model's fitted constants.
type costFitted struct {
	featurise float64
	perUnit   map[string]float64
	solver    solverTerms
}

// solve solves a x = b by Gaussian elimination with partial pivoting.
func solve(a [][]float64, b []float64) []float64 {
	n := len(b)
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		b[c], b[p] = b[p], b[c]
		for r := c + 1; r < n; r++ {
			f := a[r][c] / a[c][c]
			for j := c; j < n; j++ {
				a[r][j] -= f * a[c][j]
			}
			b[r] -= f * b[c]
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := b[r]
		for j := r + 1; j < n; j++ {
			s -= a[r][j] * x[j]
		}
		x[r] = s / a[r][r]
	}
	return x
}

// TestCostFit re-derives the cost model's constants (costPerUnit,
// costEnsemble) from the committed suite measurements and checks the
// tables in cost.go are them, to two significant digits. With -v it
// prints the fit, its error and the Go tables.
func TestCostFit(t *testing.T) {
	runs := loadCostRuns(t)
	fit, rms, n, resid := costFit(runs)
	featurise, perUnit := fit.featurise, fit.perUnit
	if os.Getenv("COST_DEBUG") != "" {
		for i, r := range runs {
			f := predictSecondsWith(r, fit)
			fmt.Printf("RES %+.2f %6.1f %6.1f %v %s %s %s\n", resid[i], r.seconds, f, r.timedOut, r.task, r.terms.models[0].key,
				r.c["features.text"]+"/"+r.c["validation"]+"/"+r.c["calibration"]+"/"+r.c["ensemble"]+r.c["ensemble.second"]+"/"+r.c["read.rows"]+"/"+r.c["features.columns"])
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d runs (%d finished, %d timed out); rms log residual of the finished: %.2f (a factor of %.2f)\n",
		len(runs), n, len(runs)-n, rms, math.Exp(rms))
	var keys []string
	for f := range perUnit {
		keys = append(keys, f)
	}
	sort.Strings(keys)
	count := map[string]int{}
	for _, r := range runs {
		for _, m := range r.terms.models {
			count[m.key]++
		}
	}
	fmt.Fprintf(&b, "var costFeaturise = %.2g\n", featurise)
	fmt.Fprintf(&b, "var costSolver = solverTerms{classes: %.2f, c: %.2f, width: %.2g, vocab: %.2g, svmClasses: %.2f}\n",
		fit.solver.classes, fit.solver.c, fit.solver.width, fit.solver.vocab, fit.solver.svmClasses)
	b.WriteString("var costPerUnit = map[string]float64{\n")
	for _, f := range keys {
		fmt.Fprintf(&b, "\t%q: %.2g, // %d runs\n", f, perUnit[f], count[f])
	}
	b.WriteString("}\n")
	t.Log("\n" + b.String())
	close := func(got, want float64) bool { return math.Abs(got-want) <= 0.05*math.Abs(want) }
	if !close(costFeaturise, featurise) {
		t.Errorf("costFeaturise = %g, the fit gives %.2g", costFeaturise, featurise)
	}
	if math.Abs(costSolver.classes-fit.solver.classes) > 0.02 || math.Abs(costSolver.c-fit.solver.c) > 0.02 ||
		math.Abs(costSolver.svmClasses-fit.solver.svmClasses) > 0.02 ||
		!close(costSolver.width, fit.solver.width) || !close(costSolver.vocab, fit.solver.vocab) {
		t.Errorf("costSolver = %+v; the fit gives %+v", costSolver, fit.solver)
	}
	for _, f := range keys {
		if !close(costPerUnit[f], perUnit[f]) {
			t.Errorf("costPerUnit[%q] = %g, the fit gives %.2g", f, costPerUnit[f], perUnit[f])
		}
	}
}

// predictSecondsWith is predictSeconds with the given constants.
func predictSecondsWith(r costRun, f costFitted) float64 {
	s := costOverhead + f.featurise*r.terms.featurise
	for _, m := range r.terms.models {
		s += m.seconds(f.perUnit[m.key], f.solver)
	}
	return s
}
