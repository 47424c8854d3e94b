package recipe

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

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

// TestSuitePlans runs a sample of plans on every suite and tuning task
// (fitTasks): the named plans and a few random ones. It takes tens of
// minutes, so it runs only when asked (RECIPE_LONG=1, not with -short). RECIPE_MEASURE_OUT appends one JSON line
// per run; RECIPE_RANDOM sets random plans per task (default 2), RECIPE_TASKS
// limits the tasks (comma-separated names), RECIPE_PLANS the named plans (a
// regular expression on Edit names), RECIPE_TIMEOUT the limit per run,
// RECIPE_FIXTURES=1 runs on testdata's tiny tasks instead of the suite,
// RECIPE_LOGISTIC_GRID=1 runs logisticGrid instead of the named and random
// plans.
func TestSuitePlans(t *testing.T) {
	if testing.Short() || os.Getenv("RECIPE_LONG") == "" {
		t.Skip("long: runs many programs per suite task; set RECIPE_LONG=1")
	}
	dirs := fitTasks()
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
	var planRE *regexp.Regexp
	if v := os.Getenv("RECIPE_PLANS"); v != "" {
		planRE = regexp.MustCompile(v)
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
		jobs := suitePlanJobs(p, planRE, nRandom)
		if os.Getenv("RECIPE_LOGISTIC_GRID") != "" {
			jobs = logisticGrid(p)
		}
		for _, j := range jobs {
			runSuiteJob(t, p, j, limit, out)
		}
	}
}

// suiteJob is one program TestSuitePlans runs.
type suiteJob struct {
	name string
	plan *Plan
}

// suitePlanJobs are the edits that apply to p (those whose name planRE
// matches, when set), each plan once, then nRandom random plans.
func suitePlanJobs(p *Profile, planRE *regexp.Regexp, nRandom int) []suiteJob {
	var jobs []suiteJob
	seen := map[string]bool{}
	for _, np := range Edits() {
		if planRE != nil && !planRE.MatchString(np.Name) {
			continue
		}
		if pl, ok := np.Apply(p); ok && !seen[pl.Key()] {
			seen[pl.Key()] = true
			jobs = append(jobs, suiteJob{np.Name, pl})
		}
	}
	rng := rand.New(rand.NewPCG(uint64(len(p.Name)), 11))
	for i := 0; i < nRandom; i++ {
		pl := Random(p, rng)
		jobs = append(jobs, suiteJob{"random " + strconv.Itoa(i+1), pl})
	}
	return jobs
}

// logisticGrid is logistic regression alone (no validation, ensemble or
// calibration) at each C and iteration cap, on word, word+char and count
// n-grams where the task has text: what the cost model needs to price the
// solver's iterations (docs/learning.md, "The prior").
func logisticGrid(p *Profile) []suiteJob {
	texts := []string{""}
	if p.HasText() {
		texts = []string{"tfidf_word", "tfidf_word_char", "counts"}
	}
	var jobs []suiteJob
	for _, text := range texts {
		for _, c := range []string{"0.1", "1", "10"} {
			for _, it := range []string{"100", "1000"} {
				e := Edit{Name: fmt.Sprintf("logistic C=%s max_iter=%s %s", c, it, text), Choose: map[string]string{
					"model.family": "logistic", "logistic.C": c, "logistic.max_iter": it,
					"validation": "none", "ensemble": "none", "calibration": "none"}}
				if text != "" {
					e.Choose["features.text"] = text
				}
				if pl, ok := e.Apply(p); ok {
					jobs = append(jobs, suiteJob{e.Name, pl})
				}
			}
		}
	}
	return jobs
}

// runSuiteJob runs one program, logs it, appends its measurement to out
// (when not nil) and fails on a renderer bug.
func runSuiteJob(t *testing.T, p *Profile, j suiteJob, limit time.Duration, out *os.File) {
	t.Helper()
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
