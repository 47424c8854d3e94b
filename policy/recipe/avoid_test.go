package recipe

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/mlerl/mlerl/policy/choicenet"
)

// The options the profile says will fail are listed in Decision.Avoid, on
// the tables where they fail and not elsewhere, and Default never takes one.
// (TestFailureModes runs each of these modes for real.)
func TestRiskyOptionsAvoided(t *testing.T) {
	tests := []struct {
		task  string
		avoid map[string][]string // decision -> avoided options, on Default's walk
	}{
		// Non-ASCII text: the ascii loader; a comma-separated file: the
		// semicolon one; strings: raw columns; n-grams: dense-only models.
		{"tiny-reviews", map[string][]string{"read.loader": {"ascii", "semicolon"}, "features.columns": {"raw"}, "model.family": {"hist_gb"}}},
		// Missing values: no imputation, or dropping incomplete training rows
		// (the test rows keep their NaN).
		{"tiny-churn", map[string][]string{"read.loader": {"semicolon"}, "features.columns": {"raw"}, "features.missing": {"none", "drop_rows"}}},
		// A linear SVM has no probabilities: a log-loss task must calibrate.
		{"tiny-notes", map[string][]string{"read.loader": {"semicolon"}, "features.columns": {"raw"}, "features.missing": {"none", "drop_rows"}, "model.family": {"hist_gb"}, "calibration": {"none"}}},
		{"tiny-events", map[string][]string{"read.loader": {"semicolon"}, "features.columns": {"raw"}, "features.missing": {"none", "drop_rows"}, "model.family": {"hist_gb", "pls"}}},
	}
	for _, tc := range tests {
		t.Run(tc.task, func(t *testing.T) {
			p := mustProfile(t, filepath.Join("testdata", tc.task))
			def := Default(p)
			got := map[string][]string{}
			w := NewWalker(p, nil)
			for d, ok := w.Next(); ok; d, ok = w.Next() {
				i := slices.Index(d.Options, def.Get(d.Name))
				if slices.Contains(d.Avoid, i) {
					t.Errorf("Default takes %s=%s, which the profile says fails", d.Name, d.Options[i])
				}
				for _, a := range d.Avoid {
					got[d.Name] = append(got[d.Name], d.Options[a])
				}
				if err := w.Choose(i); err != nil {
					t.Fatal(err)
				}
			}
			for name, want := range tc.avoid {
				if !slices.Equal(got[name], want) {
					t.Errorf("%s: avoids %v, want %v", name, got[name], want)
				}
			}
			for name, opts := range got {
				if _, ok := tc.avoid[name]; !ok {
					t.Errorf("%s: avoids %v, want none", name, opts)
				}
			}
		})
	}
}

// A fresh policy seldom writes a plan with an avoided option; without the
// avoidance (AvoidLogit 0) over a third of its plans on tiny-reviews had
// one: a loader that cannot read the file, or strings given to a model.
func TestFreshPolicyAvoidsFailingOptions(t *testing.T) {
	share := func(avoidLogit float64) float64 {
		p, tk := fixturePolicy(t, "tiny-reviews", 7)
		cfg := choicenet.DefaultConfig(NumFeatures, len(DecisionNames()), MaxOptions)
		cfg.Seed, cfg.HintLogit, cfg.AvoidLogit, cfg.PriorKLCoef = 7, HintLogit, avoidLogit, PriorAnchor
		net, err := choicenet.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		p.net = net
		acts := sampleScratch(t, p, tk, 400)
		hit := 0
		for _, a := range acts {
			m := actionMeta(t, a)
			for _, s := range m.Steps {
				if slices.Contains(s.Avoid, s.Chosen) {
					hit++
					break
				}
			}
		}
		return float64(hit) / float64(len(acts))
	}
	with, without := share(AvoidLogit), share(0)
	t.Logf("plans with an avoided option: %.1f%% with AvoidLogit %v, %.1f%% without", 100*with, AvoidLogit, 100*without)
	if with > 0.03 || without < 0.15 {
		t.Errorf("share of plans with an avoided option: %.3f (want under 0.03) with the avoidance, %.3f (want over 0.15) without", with, without)
	}
}

// The rules that depend on earlier choices or on the table's size, asked
// directly: slow families on thousands of documents, naive Bayes variants
// that refuse negative values after standard scaling, dense-only models on
// many-level categoricals one-hot encoded.
func TestRiskyRulesInContext(t *testing.T) {
	reviews := mustProfile(t, filepath.Join("testdata", "tiny-reviews"))
	big := *reviews
	big.TrainRows = 5000
	family := grammar[slices.IndexFunc(grammar, func(s spec) bool { return s.name == "model.family" })]
	nb := grammar[slices.IndexFunc(grammar, func(s spec) bool { return s.name == "nb.variant" })]
	second := grammar[slices.IndexFunc(grammar, func(s spec) bool { return s.name == "ensemble.second" })]
	typedText := choices{"features.columns": "typed"}
	for _, tc := range []struct {
		name string
		got  bool
		want bool
	}{
		{"svm_rbf on 300 documents", family.risky(reviews, typedText, "svm_rbf"), false},
		{"svm_rbf on 5,000 documents", family.risky(&big, typedText, "svm_rbf"), true},
		{"svm_rbf on a fifth of 5,000 documents", family.risky(&big, choices{"features.columns": "typed", "read.rows": "fifth"}, "svm_rbf"), false},
		{"logistic on 5,000 documents", family.risky(&big, typedText, "logistic"), false},
		{"xgboost on 5,000 documents", family.risky(&big, typedText, "xgboost"), true},
		{"random forest on 300 documents", family.risky(reviews, typedText, "random_forest"), false},
		{"kNN second on 5,000 documents", second.risky(&big, typedText, "knn"), true},
		{"linear second on 5,000 documents", second.risky(&big, typedText, "linear"), false},
		{"kNN second on 300 documents", second.risky(reviews, typedText, "knn"), false},
		{"hist_gb second on n-grams", second.risky(reviews, typedText, "hist_gb"), true},
		{"hist_gb second on numbers only", second.risky(reviews, choices{"features.columns": "numeric_only"}, "hist_gb"), false},
		{"hist_gb on numbers only", family.risky(&big, choices{"features.columns": "numeric_only"}, "hist_gb"), false},
		{"complement NB after standard scaling", nb.risky(reviews, choices{"features.scaling": "standard"}, "complement"), true},
		{"complement NB unscaled", nb.risky(reviews, choices{"features.scaling": "none"}, "complement"), false},
		{"bernoulli NB after standard scaling", nb.risky(reviews, choices{"features.scaling": "standard"}, "bernoulli"), false},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: risky %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	// A log-loss task: a linear SVM has no probabilities and needs
	// calibration, which a fifth of the rows cannot give when the rarest
	// class is 5% of tiny-notes' 340 (about 3 rows, under the 6 needed).
	notes := *mustProfile(t, filepath.Join("testdata", "tiny-notes"))
	notes.MinorityFrac = 0.05
	for rows, want := range map[string]bool{"all": false, "fifth": true} {
		c := choices{"features.columns": "numeric_only", "read.rows": rows}
		if got := family.risky(&notes, c, "linear_svm"); got != want || family.risky(&notes, c, "logistic") {
			t.Errorf("linear_svm on %s of tiny-notes: risky %v, want %v (logistic never)", rows, got, want)
		}
	}
	// tiny-events without its text columns: its many-level categoricals
	// one-hot encoded are what would make the matrix sparse.
	events := *mustProfile(t, filepath.Join("testdata", "tiny-events"))
	events.Columns = slices.DeleteFunc(slices.Clone(events.Columns), func(c Column) bool { return c.Kind == KindText })
	if events.HasText() || !events.HasHighCardinality() {
		t.Fatal("the fixture changed: want many-level categoricals and (after the deletion) no text")
	}
	for enc, want := range map[string]bool{"onehot_grouped": true, "target_mean": false} {
		if got := family.risky(&events, choices{"features.columns": "typed", "features.high_card": enc}, "hist_gb"); got != want {
			t.Errorf("hist_gb with many-level categoricals encoded %s: risky %v, want %v", enc, got, want)
		}
	}
}

// Several targets go to a family that fits one (boosting, SVMs) only through
// the per-target wrapper; unwrapped it failed ("y should be a 1d array").
// The second model of an average is held to the same rule.
func TestSingleTargetFamiliesWrapped(t *testing.T) {
	p := mustProfile(t, filepath.Join("testdata", "tiny-meats"))
	if p.TargetKind != MultiOutput {
		t.Fatalf("tiny-meats is %s, want multi_output", p.TargetKind)
	}
	for fam, native := range map[string]bool{"hist_gb": false, "svm_rbf": false, "random_forest": true, "ridge": true} {
		w := NewWalker(p, nil)
		var opts []string
		for d, ok := w.Next(); ok; d, ok = w.Next() {
			v := d.Options[0]
			switch d.Name {
			case "model.family":
				v = fam
			case "model.multioutput":
				opts = d.Options
				v = "native"
				if !native {
					t.Errorf("%s: offered %v, want per_target alone (asked no question)", fam, d.Options)
				}
			case "ensemble":
				v = "average"
			case "ensemble.second":
				if slices.Contains(d.Options, "hist_gb") && w.chosen["model.multioutput"] == "native" {
					t.Errorf("%s native: second model may be hist_gb", fam)
				}
			}
			if err := w.Choose(max(0, slices.Index(d.Options, v))); err != nil {
				t.Fatal(err)
			}
		}
		if got := w.Plan().Get("model.multioutput"); !native && got != "per_target" {
			t.Errorf("%s: model.multioutput=%s, want per_target", fam, got)
		}
		if native && !slices.Contains(opts, "native") {
			t.Errorf("%s: native not offered (%v)", fam, opts)
		}
	}
}
