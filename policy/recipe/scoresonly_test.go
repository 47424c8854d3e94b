package recipe

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// An improve edit keeps every part of its parent but the one it changes, so
// editing the model family of a parent pooled with naive Bayes (or of one
// averaged with a second model, or submitting probabilities) to LinearSVC or
// RidgeClassifier used to render model.predict_proba on a model without it:
// the program crashed every time, whatever the policy learnt (on
// wordnet-supersense, every one of a run's edits from its pooled logistic
// best to the linear SVM that is the task's best family). Such a program now
// turns the model's decision scores into probabilities and is valid; the
// plans whose model has predict_proba render as before.
func TestScoresOnlyRun(t *testing.T) {
	pooled := map[string]string{"model.family": "logistic", "calibration": "none", "ensemble": "nb_loglinear", "ensemble.nb_weight": "0.2"}
	for _, tc := range []struct {
		task   string
		parent map[string]string // nil: a scratch plan of choose
		choose map[string]string
	}{
		// The edits that crashed: the parent's pool and its calibration (none:
		// on an accuracy task, as wordnet-supersense, there is none to ask) kept.
		{"tiny-notes", pooled, map[string]string{"model.family": "linear_svm"}},
		{"tiny-reviews", pooled, map[string]string{"model.family": "ridge"}},
		// Two classes, scores in one column; a probability metric, nothing pooled.
		{"tiny-churn", nil, map[string]string{"model.family": "linear_svm", "calibration": "none"}},
		// Averaged with a second model.
		{"tiny-soy", nil, map[string]string{"model.family": "ridge", "calibration": "none", "ensemble": "average", "ensemble.second": "linear"}},
	} {
		p := mustProfile(t, filepath.Join("testdata", tc.task))
		plan := withChoices(t, p, tc.choose)
		if tc.parent != nil {
			plan = editModel(t, p, withChoices(t, p, tc.parent), tc.choose["model.family"])
			if plan.Get("ensemble") != "nb_loglinear" {
				t.Fatalf("%s: the edit %s does not keep its parent's pool", tc.task, plan.Key())
			}
		}
		code := renderHolding(t, p, plan, tc.choose)
		if !strings.Contains(code, "scores = model.decision_function(X_test)") || strings.Contains(code, "= model.predict_proba(") {
			t.Errorf("%s %s: want the decision scores, not predict_proba:\n%s", tc.task, plan.Key(), code)
		}
		r := runProgram(t, p, code, time.Minute)
		if !r.Valid {
			t.Errorf("%s %s: %s\n%s\n%s", tc.task, plan.Key(), r, code, r.Output)
			continue
		}
		t.Logf("%s %s: %s", tc.task, plan.Key(), r)
	}
	// A model with predict_proba, or one calibrated, keeps it.
	for _, choose := range []map[string]string{pooled, {"model.family": "linear_svm", "calibration": "sigmoid", "ensemble": "nb_loglinear"}} {
		p := mustProfile(t, "testdata/tiny-notes")
		code, err := Render(p, withChoices(t, p, choose))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(code, "decision_function") || !strings.Contains(code, "proba = model.predict_proba(X_test)") {
			t.Errorf("%v: want predict_proba:\n%s", choose, code)
		}
	}
}

// editModel walks an improve edit of parent that changes its model part to
// family, every other decision of that part as Default takes it.
func editModel(t *testing.T, p *Profile, parent *Plan, family string) *Plan {
	t.Helper()
	w := NewWalker(p, parent)
	d, ok := w.Next()
	if !ok || !slices.Contains(d.Options, PartModel) {
		t.Fatalf("improve walk: first decision %+v, want the part to change", d)
	}
	if err := w.Choose(slices.Index(d.Options, PartModel)); err != nil {
		t.Fatal(err)
	}
	walkTo(t, w, p, map[string]string{"model.family": family}, "")
	return w.Plan()
}
