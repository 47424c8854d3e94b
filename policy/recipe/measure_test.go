package recipe

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// namedPlans are hand-picked edits of the default plan that span the space:
// fast and weak, slow and (often) strong. A plan whose values a task does not
// allow is skipped for that task.
var namedPlans = []struct {
	name   string
	choose map[string]string
}{
	{"default", nil},
	{"fast linear", map[string]string{"model.family": "logistic", "logistic.C": "1", "logistic.max_iter": "100", "validation": "none"}},
	{"fast linear", map[string]string{"model.family": "ridge", "ridge.alpha": "1", "validation": "none"}},
	{"xgboost 400", map[string]string{"model.family": "xgboost", "features.categorical": "ordinal", "xgb.n_estimators": "400",
		"xgb.learning_rate": "0.1", "xgb.max_depth": "6", "xgb.subsample": "0.8", "validation": "none"}},
	{"xgboost 1500", map[string]string{"model.family": "xgboost", "features.categorical": "ordinal", "xgb.n_estimators": "1500",
		"xgb.learning_rate": "0.03", "xgb.max_depth": "6", "xgb.subsample": "0.8", "validation": "none"}},
	{"random forest 600", map[string]string{"model.family": "random_forest", "forest.n_estimators": "600", "forest.max_depth": "none", "validation": "none"}},
	{"svm rbf", map[string]string{"model.family": "svm_rbf", "svm.C": "10", "features.scaling": "standard", "validation": "none"}},
	{"ordinal as regression, default model", map[string]string{"target.ordinal": "regression"}},
	{"ordinal as regression, xgboost 400", map[string]string{"target.ordinal": "regression", "model.family": "xgboost",
		"xgb.n_estimators": "400", "xgb.learning_rate": "0.1", "xgb.max_depth": "6", "xgb.subsample": "0.8", "validation": "none"}},
	{"logistic C=10, char tf-idf on text", map[string]string{"features.text": "tfidf_char", "features.text_max": "200000", "model.family": "logistic",
		"logistic.C": "10", "logistic.max_iter": "1000", "validation": "none"}},
}

// strictChoices walks p taking the given values and the default's elsewhere;
// ok is false when a given value is not allowed on this task.
func strictChoices(p *Profile, choose map[string]string) (*Plan, bool) {
	def := Default(p)
	w := NewWalker(p, nil)
	used := 0
	for d, ok := w.Next(); ok; d, ok = w.Next() {
		v, has := choose[d.Name]
		if has {
			used++
		} else {
			v = def.Get(d.Name)
		}
		i := slices.Index(d.Options, v)
		if i < 0 {
			if has {
				return nil, false
			}
			i = 0
		}
		_ = w.Choose(i)
	}
	pl := w.Plan()
	for k, v := range choose {
		if got := pl.Get(k); got != "" && got != v {
			return nil, false
		}
	}
	return pl, used > 0 || len(choose) == 0
}

// rendererBug matches Python errors that mean the renderer wrote a wrong
// program (as opposed to a plan that does not suit the data).
var rendererBug = regexp.MustCompile(`SyntaxError|IndentationError|NameError|UnboundLocalError|got an unexpected keyword argument|ModuleNotFoundError|ImportError`)

// measured is one line of the measurement log.
type measured struct {
	Task      string  `json:"task"`
	Plan      string  `json:"plan"`
	Key       string  `json:"key"`
	DurationS float64 `json:"duration_s"`
	Valid     bool    `json:"valid"`
	Score     float64 `json:"score"`
	TimedOut  bool    `json:"timed_out"`
	Failure   string  `json:"failure,omitempty"` // the program's last error line or the grader's reason
	Stage     string  `json:"stage,omitempty"`   // where it failed, from its own progress prints
}

// TestSuitePlans runs a sample of plans on every suite task: the named plans
// and a few random ones. It takes tens of minutes, so it runs only when asked
// (RECIPE_LONG=1, not with -short). RECIPE_MEASURE_OUT appends one JSON line
// per run; RECIPE_RANDOM sets random plans per task (default 2), RECIPE_TASKS
// limits the tasks (comma-separated names), RECIPE_TIMEOUT the limit per run,
// RECIPE_FIXTURES=1 runs on testdata's tiny tasks instead of the suite.
func TestSuitePlans(t *testing.T) {
	if testing.Short() || os.Getenv("RECIPE_LONG") == "" {
		t.Skip("long: runs many programs per suite task; set RECIPE_LONG=1")
	}
	dirs := suiteTasks()
	if os.Getenv("RECIPE_FIXTURES") != "" { // the tiny fixtures instead: many random plans in little time
		dirs = nil
		for _, n := range fixtureTasks {
			dirs = append(dirs, "testdata/"+n)
		}
	}
	if len(dirs) == 0 {
		t.Skip("no suite/tasks in this checkout")
	}
	nRandom := 2
	if v, err := strconv.Atoi(os.Getenv("RECIPE_RANDOM")); err == nil {
		nRandom = v
	}
	limit := 150 * time.Second
	if v, err := time.ParseDuration(os.Getenv("RECIPE_TIMEOUT")); err == nil {
		limit = v
	}
	var only []string
	if v := os.Getenv("RECIPE_TASKS"); v != "" {
		only = strings.Split(v, ",")
	}
	var out *os.File
	if path := os.Getenv("RECIPE_MEASURE_OUT"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		out = f
	}
	for _, dir := range dirs {
		p := mustProfile(t, dir)
		if only != nil && !slices.Contains(only, p.Name) {
			continue
		}
		type job struct {
			name string
			plan *Plan
		}
		var jobs []job
		seen := map[string]bool{}
		for _, np := range namedPlans {
			if pl, ok := strictChoices(p, np.choose); ok && !seen[pl.Key()] {
				seen[pl.Key()] = true
				jobs = append(jobs, job{np.name, pl})
			}
		}
		rng := rand.New(rand.NewPCG(uint64(len(p.Name)), 11))
		for i := 0; i < nRandom; i++ {
			pl := Random(p, rng)
			jobs = append(jobs, job{"random " + strconv.Itoa(i+1), pl})
		}
		for _, j := range jobs {
			code, err := Render(p, j.plan)
			if err != nil {
				t.Fatalf("%s %s: %v", p.Name, j.name, err)
			}
			r := runProgram(t, p, code, limit)
			m := measured{Task: p.Name, Plan: j.name, Key: j.plan.Key(), DurationS: r.Duration.Seconds(),
				Valid: r.Valid, Score: r.Score, TimedOut: r.TimedOut}
			if !r.Valid {
				m.Failure, m.Stage = r.Error, stageReached(r.Output, p.Metric)
			}
			t.Logf("%s | %s | %s", p.Name, j.name, r)
			if out != nil {
				b, _ := json.Marshal(m)
				out.Write(append(b, '\n'))
			}
			if !r.Valid && rendererBug.MatchString(r.Output) {
				t.Errorf("%s %s: renderer bug, not an honest failure:\n%s\n%s", p.Name, j.name, code, r.Output)
			}
		}
	}
}

// stageReached names the last step a program's own prints show it finished.
func stageReached(output, metric string) string {
	stages := []struct{ marker, stage string }{
		{"wrote submission.csv", "wrote submission"},
		{"training " + metric + ":", "scored training rows"},
		{"fitted on", "trained model"},
		{"validation ", "validated"},
		{"fold 1:", "validating"},
		{"features:", "built features"},
		{"train (", "loaded data"},
	}
	for _, s := range stages {
		if strings.Contains(output, s.marker) {
			return s.stage
		}
	}
	return "before loading data"
}
