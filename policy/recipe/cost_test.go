package recipe

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/task"
)

// syntheticText is a made-up text classification profile: rows training
// documents of meanLen characters in each of texts columns, classes labels
// (log loss), and one numeric column.
func syntheticText(rows, texts, classes int, meanLen float64) *Profile {
	p := &Profile{Name: "tiny-notes", Metric: "log_loss", IDColumn: "id", TrainRows: rows, TestRows: rows / 4,
		TargetKind: Multiclass, TrainTargets: []string{"label"}, MinorityFrac: 0.5 / float64(classes), CompleteFrac: 1}
	if classes == 2 {
		p.Metric, p.TargetKind = "auc", Binary
	}
	p.Columns = append(p.Columns, Column{Name: "id", Kind: KindID, InTest: true, Unique: rows})
	for i := range texts {
		p.Columns = append(p.Columns, Column{Name: fmt.Sprintf("text%d", i), Kind: KindText, InTest: true,
			Unique: rows, MeanLen: meanLen, MeanWords: meanLen / 6})
	}
	p.Columns = append(p.Columns, Column{Name: "x", Kind: KindNumeric, InTest: true, Unique: 100},
		Column{Name: "label", Kind: KindTarget, Unique: classes})
	for i := range classes {
		p.Classes = append(p.Classes, fmt.Sprintf("c%02d", i))
	}
	p.SubmissionColumns = p.Classes
	if classes == 2 {
		p.SubmissionColumns, p.PositiveClass = []string{"label"}, p.Classes[1]
	}
	return p
}

// The predicted time grows with the rows, the text columns, the classes
// (for the families that fit one model per class) and the text's length,
// whatever the family.
func TestPredictSecondsMonotone(t *testing.T) {
	base := struct {
		rows, texts, classes int
		meanLen              float64
	}{2000, 1, 5, 200}
	grow := []struct {
		name string
		set  func(rows, texts, classes *int, meanLen *float64)
	}{
		{"rows", func(r, _, _ *int, _ *float64) { *r *= 4 }},
		{"text columns", func(_, x, _ *int, _ *float64) { *x += 2 }},
		{"classes", func(_, _, k *int, _ *float64) { *k *= 6 }},
		{"text length", func(_, _, _ *int, l *float64) { *l *= 3 }},
	}
	for _, fam := range []string{"logistic", "linear_svm", "ridge", "naive_bayes", "random_forest", "xgboost", "knn", "mlp"} {
		for _, g := range grow {
			t.Run(fam+"/"+g.name, func(t *testing.T) {
				plan := choices{"read.rows": "all", "features.columns": "typed", "features.text": "tfidf_word_char",
					"features.text_max": "20000", "model.family": fam, "validation": "holdout", "ensemble": "none",
					"calibration": "none", "logistic.max_iter": "1000", "forest.n_estimators": "200", "xgb.n_estimators": "400",
					"mlp.hidden": "256", "mlp.max_iter": "200"}
				r, x, k, l := base.rows, base.texts, base.classes, base.meanLen
				before := predictSeconds(syntheticText(r, x, k, l), plan)
				g.set(&r, &x, &k, &l)
				after := predictSeconds(syntheticText(r, x, k, l), plan)
				if g.name == "classes" && !perClass[fam] {
					if after != before {
						t.Errorf("%s does not fit per class: %.1fs -> %.1fs", fam, before, after)
					}
					return
				}
				if !(after > before) {
					t.Errorf("more %s: predicted %.1fs -> %.1fs, want more", g.name, before, after)
				}
			})
		}
	}
	// Validation, calibration and an ensemble each add time.
	p := syntheticText(5000, 1, 10, 300)
	plain := choices{"read.rows": "all", "features.columns": "typed", "features.text": "tfidf_word_char",
		"features.text_max": "20000", "model.family": "logistic", "validation": "none", "ensemble": "none", "calibration": "none"}
	for _, ch := range []Choice{{"validation", "holdout"}, {"validation", "cv5"}, {"calibration", "isotonic"},
		{"ensemble", "nb_loglinear"}, {"read.rows", "all"}} {
		more := choices{}
		for k, v := range plain {
			more[k] = v
		}
		more[ch.Name] = ch.Value
		if ch.Name == "read.rows" { // fewer rows: less time
			plain["read.rows"] = "half"
		}
		if a, b := predictSeconds(p, plain), predictSeconds(p, more); !(b > a) {
			t.Errorf("%s=%s: predicted %.1fs, without it %.1fs", ch.Name, ch.Value, b, a)
		}
	}
}

// An option is avoided exactly when its plan's predicted time exceeds half
// the limit, and not when the limit is unknown.
func TestCostAvoidAtTheLimit(t *testing.T) {
	p := syntheticText(8000, 1, 30, 300)
	// Walk Default's plan up to the model family.
	walkTo := func(limit time.Duration) (*Walker, Decision) {
		p.TimeLimit = limit
		w := NewWalker(p, nil)
		prefs := defaultsFor(p)
		for d, ok := w.Next(); ok; d, ok = w.Next() {
			if d.Name == "model.family" {
				return w, d
			}
			_ = w.Choose(prefs.option(d))
		}
		t.Fatal("no model.family decision")
		return nil, Decision{}
	}
	w, d := walkTo(0)
	if slices.ContainsFunc(d.Avoid, func(i int) bool { return d.Options[i] == "logistic" }) {
		t.Fatalf("logistic avoided without a limit: %v", d.Avoid)
	}
	logistic := predictSeconds(p, w.completion(d, "logistic"))
	if logistic < 10 {
		t.Fatalf("logistic on 8,000 documents of 30 classes predicted at %.1fs; the test wants a slow option", logistic)
	}
	for _, tc := range []struct {
		limit time.Duration
		avoid bool
	}{
		{time.Duration(2 * logistic * 0.98 * float64(time.Second)), true},
		{time.Duration(2 * logistic * 1.02 * float64(time.Second)), false},
		{10 * time.Minute, false},
	} {
		_, d := walkTo(tc.limit)
		i := slices.Index(d.Options, "logistic")
		if got := slices.Contains(d.Avoid, i); got != tc.avoid {
			t.Errorf("limit %v (logistic predicted %.1fs): avoided %v, want %v", tc.limit, logistic, got, tc.avoid)
		}
	}
}

// On a big text table with many classes under a 40 s limit, a fresh policy
// seldom writes a plan the cost model predicts to run over the limit;
// without the limit most of its plans do (Default's among them), and with
// a limit of 10 minutes the prior is as it was.
func TestFreshPolicyAvoidsSlowPlans(t *testing.T) {
	prof := syntheticText(20000, 2, 30, 400)
	over := func(limit time.Duration) (share float64, keys []string) {
		pol, tk := fixturePolicy(t, "tiny-notes", 3)
		pol.profiles[tk.Name], pol.prefs[tk.Name] = prof, defaultsFor(prof)
		pol.SetTimeLimit(limit)
		acts := sampleScratch(t, pol, tk, 200)
		n := 0
		for _, a := range acts {
			if predictSeconds(prof, keyChoices(a.Key)) > 40 {
				n++
			}
			keys = append(keys, a.Key)
		}
		return float64(n) / float64(len(acts)), keys
	}
	if s := predictSeconds(prof, Default(prof).choiceMap()); s < 40 {
		t.Fatalf("Default's plan predicted at %.1fs: the test wants a table where it is too slow", s)
	}
	without, _ := over(0)
	with, _ := over(40 * time.Second)
	long, _ := over(10 * time.Minute)
	t.Logf("plans predicted over 40 s: %.0f%% without a limit, %.0f%% with 40 s, %.0f%% with 10 min", 100*without, 100*with, 100*long)
	if with > 0.1 || without < 0.5 {
		t.Errorf("plans over 40 s: %.0f%% with the limit, %.0f%% without; want under 10%% and over half", 100*with, 100*without)
	}
	if long < without*0.8 {
		t.Errorf("a 10-minute limit moved the prior: %.0f%% of plans over 40 s, %.0f%% without a limit", 100*long, 100*without)
	}
	// Improve walks under the limit work too (the completion keeps the
	// parent's other parts).
	pol, tk := fixturePolicy(t, "tiny-notes", 4)
	pol.profiles[tk.Name], pol.prefs[tk.Name] = prof, defaultsFor(prof)
	pol.SetTimeLimit(40 * time.Second)
	acts, err := pol.Sample(context.Background(), []rl.Prompt{{Kind: episode.Scratch, Task: tk}})
	if err != nil {
		t.Fatal(err)
	}
	parent := &rl.Solution{Action: acts[0], Result: episode.Result{Valid: true, Reward: 0.5}}
	if _, err := pol.Sample(context.Background(), []rl.Prompt{{Kind: episode.Improve, Task: tk, Parent: parent}}); err != nil {
		t.Fatal(err)
	}
}

// keyChoices parses a plan key.
func keyChoices(key string) choices {
	c := choices{}
	for _, kv := range splitKeyPairs(key) {
		c[kv[0]] = kv[1]
	}
	return c
}

func splitKeyPairs(key string) [][2]string {
	var out [][2]string
	start := 0
	for i := 0; i <= len(key); i++ {
		if i == len(key) || key[i] == ';' {
			part := key[start:i]
			for j := range part {
				if part[j] == '=' {
					out = append(out, [2]string{part[:j], part[j+1:]})
					break
				}
			}
			start = i + 1
		}
	}
	return out
}

// TestCostPriorOnSuite logs, per suite and tuning task, the predicted one-thread
// seconds of a fresh policy's plans (median and 90th percentile of 200)
// without a limit and under 60 s: what the avoidance does to the prior's
// typical duration (docs/learning.md, "The prior"). It fails only when the
// limit makes the prior slower somewhere.
func TestCostPriorOnSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds per suite task")
	}
	dirs := fitTasks()
	if len(dirs) == 0 {
		t.Skip("no suite/tasks in this checkout")
	}
	t.Log("| task | Default's plan | median, no limit | median, 60 s | 90th percentile, no limit | 60 s |")
	for _, dir := range dirs {
		tk, err := task.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		prof := mustProfile(t, dir)
		if prof.HasImages() {
			t.Logf("| %s | images: not priced | | | | |", prof.Name)
			continue
		}
		stats := func(limit time.Duration) (median, p90 float64) {
			pol, err := NewPolicy([]*task.Task{tk}, 1)
			if err != nil {
				t.Fatal(err)
			}
			pol.SetTimeLimit(limit)
			acts := sampleScratch(t, pol, tk, 200)
			var secs []float64
			for _, a := range acts {
				secs = append(secs, predictSeconds(prof, keyChoices(a.Key)))
			}
			slices.Sort(secs)
			return secs[len(secs)/2], secs[len(secs)*9/10]
		}
		m0, q0 := stats(0)
		m1, q1 := stats(time.Minute)
		t.Logf("| %s | %.0f | %.0f | %.0f | %.0f | %.0f |", prof.Name, predictSeconds(prof, Default(prof).choiceMap()), m0, m1, q0, q1)
		if m1 > m0*1.05 || q1 > q0*1.05 {
			t.Errorf("%s: the limit made the prior slower", prof.Name)
		}
	}
}
