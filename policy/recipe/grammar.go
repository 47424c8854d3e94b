package recipe

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/mlerl/mlerl/grade"
)

// Parts of a plan an "improve" action may change; the first decision of an
// improve walk picks one, and only that part's decisions are asked again.
const (
	PartFeatures   = "features"
	PartModel      = "model"
	PartHyper      = "hyperparameters"
	PartValidation = "validation"
	PartEnsembling = "ensembling"
)

// improveDecision is the name of the improve walk's first decision.
const improveDecision = "improve.part"

// Decision is one categorical choice the walker asks for. ID indexes
// DecisionNames(). Options are the values allowed here (masked for this task and
// the choices so far); Index[i] is the position of Options[i] in
// AllOptions(ID), so a net can give every option a stable identity and mask
// the rest.
type Decision struct {
	ID      int      `json:"id"`
	Name    string   `json:"name"`
	Options []string `json:"options"`
	Index   []int    `json:"index"`
	// Avoid lists the Options (by index) the profile says will fail: a
	// deliberate failure mode of the grammar (a loader that does not fit
	// the file, strings given to a model, ...) on this task. They stay
	// allowed, so a policy can still learn they fail; the built-in policy's
	// prior gives them little mass. When the profile knows the time limit,
	// it also lists the options the cost model predicts would make the
	// program overrun it (costAvoid, cost.go).
	Avoid []int `json:"avoid,omitempty"`
}

// Choice is one decided value of a plan.
type Choice struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Step is one decision the policy actually took (auto-filled and copied
// choices are not steps): what a net needs to score the walk again.
type Step struct {
	Decision int `json:"decision"` // index in DecisionNames()
	Option   int `json:"option"`   // index in AllOptions(Decision)
	Chosen   int `json:"chosen"`   // index in the Decision's Options, as passed to Choose
	Allowed  int `json:"allowed"`  // len(Options) at that step
}

// Plan is a complete set of choices in grammar order. It is JSON-serialisable.
type Plan struct {
	Choices []Choice `json:"choices"`
}

// spec is one decision of the grammar. applies says whether it is asked at all
// given the task and the choices so far; allowed masks options (nil: all).
type spec struct {
	name    string
	part    string
	options []string
	applies func(p *Profile, c choices) bool
	allowed func(p *Profile, c choices, opt string) bool
	// risky says an allowed option is expected to fail, or to score badly
	// (uncalibrated scores for probabilities), on this task given the choices
	// so far (Decision.Avoid); nil: none is.
	risky func(p *Profile, c choices, opt string) bool
	// wide are values offered only on the wide grid (GridWide), appended
	// to options by init so every option index stays what it was; standard
	// is then the number of options the standard grid offers (0: all).
	wide     []string
	standard int
	// describe words for option values that are not self-explanatory.
}

type choices map[string]string

var familyOptions = []string{
	"logistic", "ridge", "linear", "random_forest", "extra_trees", "hist_gb",
	"gradient_boosting", "xgboost", "knn", "linear_svm", "svm_rbf", "mlp", "naive_bayes",
	// Added later (appended so option indexes stay stable): regressors for
	// many correlated columns, spectra first among them.
	"kernel_ridge", "pls",
}

// familyHyper lists the hyperparameter decisions each model family asks.
var familyHyper = map[string][]string{
	"logistic":          {"logistic.C", "logistic.max_iter"},
	"ridge":             {"ridge.alpha"},
	"linear":            nil,
	"random_forest":     {"forest.n_estimators", "forest.max_depth"},
	"extra_trees":       {"forest.n_estimators", "forest.max_depth"},
	"hist_gb":           {"hgb.max_iter", "hgb.learning_rate", "hgb.max_leaf_nodes"},
	"gradient_boosting": {"gb.n_estimators", "gb.learning_rate", "gb.max_depth"},
	"xgboost":           {"xgb.n_estimators", "xgb.learning_rate", "xgb.max_depth", "xgb.subsample"},
	"knn":               {"knn.n_neighbors", "knn.weights"},
	"linear_svm":        {"svm.C"},
	"svm_rbf":           {"svm.C"},
	"mlp":               {"mlp.hidden", "mlp.max_iter"},
	"naive_bayes":       {"nb.variant"},
	"kernel_ridge":      {"kernel_ridge.kernel", "kernel_ridge.alpha", "kernel_ridge.gamma"},
	"pls":               {"pls.n_components"},
}

func familyAllowed(p *Profile, c choices, fam string) bool {
	switch fam {
	case "logistic", "naive_bayes":
		return classifies(p, c)
	case "linear", "kernel_ridge":
		return !classifies(p, c)
	case "pls": // at least its fewest components
		return !classifies(p, c) && minFeatures(p, c) >= 5
	}
	return true
}

// minFeatures is a lower bound on the columns the model gets, from the
// feature choices so far: PLS cannot have more components than that.
func minFeatures(p *Profile, c choices) int {
	if !notRaw(c) { // every column but the id and the targets
		return len(p.Columns) - 1 - len(p.TrainTargets)
	}
	n := len(p.Kinds(KindNumeric))
	if m := c["features.series"]; m == "diff1" || m == "diff2" || m == "snv_diff1" {
		n -= 2
	}
	if c["features.dates"] == "parts" {
		n += 5 * len(p.Kinds(KindDate)) // year, month, day, weekday, days
	}
	if !typed(c) {
		return n
	}
	if c["features.categorical"] != "drop" {
		n += len(p.Categorical(false))
	}
	if c["features.high_card"] != "drop" {
		n += len(p.Categorical(true))
	}
	n += len(p.Kinds(KindText))
	if p.HasImages() {
		n++
	}
	return n
}

// classifies says the plan predicts classes: a classification task, unless an
// ordinal (qwk) target is learned as a number.
func classifies(p *Profile, c choices) bool {
	return p.IsClassification() && c["target.ordinal"] != "regression"
}

// withoutProba says the chosen model family has no predict_proba as rendered.
func withoutProba(c choices) bool { return !families[c["model.family"]].hasPredictProb }

func typed(c choices) bool          { return c["features.columns"] == "typed" }
func notRaw(c choices) bool         { return c["features.columns"] != "raw" }
func always(*Profile, choices) bool { return true }

func hyper(name string) func(*Profile, choices) bool {
	return func(_ *Profile, c choices) bool { return slices.Contains(familyHyper[c["model.family"]], name) }
}

// grammar is the decision space in the order decisions are asked. Its order
// and names are part of the policy's identity: append, never reorder.
var grammar = []spec{
	{name: improveDecision, part: "", options: []string{PartFeatures, PartModel, PartHyper, PartValidation, PartEnsembling},
		applies: func(*Profile, choices) bool { return false }}, // asked by the walker itself
	// How to read the files. Some options do not fit some files; that is the point.
	{name: "read.loader", part: PartFeatures, options: []string{"default", "sniff", "ascii", "semicolon"}, applies: always,
		risky: loaderRisky},
	{name: "read.rows", part: PartFeatures, options: []string{"all", "half", "fifth"}, applies: always},
	{name: "features.columns", part: PartFeatures, options: []string{"typed", "numeric_only", "raw"}, applies: always,
		allowed: func(p *Profile, _ choices, o string) bool { return columnsAllowed(p, o) },
		// Raw columns reach the model as read: strings and NaN fail it.
		risky: func(p *Profile, _ choices, o string) bool { return o == "raw" && !allNumericComplete(p) }},
	{name: "features.missing", part: PartFeatures, options: []string{"none", "drop_rows", "mean", "median", "most_frequent"},
		applies: func(_ *Profile, c choices) bool { return notRaw(c) },
		allowed: func(p *Profile, c choices, o string) bool { return o != "drop_rows" || keepsRows(p, c) },
		// NaN left in reaches encoders and models that refuse it; dropping
		// incomplete training rows leaves the test rows' NaN (a random
		// split has them where the training rows do).
		risky: func(p *Profile, _ choices, o string) bool {
			return (o == "none" || o == "drop_rows") && p.MissingFrac > 0
		}},
	{name: "features.categorical", part: PartFeatures, options: []string{"onehot", "get_dummies", "ordinal", "drop"},
		applies: func(p *Profile, c choices) bool { return typed(c) && p.HasCategorical() },
		allowed: func(p *Profile, c choices, o string) bool { return o != "drop" || keepsFeatures(p, c, "categorical") }},
	{name: "features.text", part: PartFeatures, options: []string{"tfidf_word", "tfidf_word_1_2", "tfidf_char", "counts", "hashing", "tfidf_word_char", "tfidf_word_char_cased"},
		applies: func(p *Profile, c choices) bool { return typed(c) && p.HasText() }},
	{name: "features.text_max", part: PartFeatures, options: []string{"2000", "20000", "200000"},
		applies: func(p *Profile, c choices) bool { return typed(c) && p.HasText() }},
	{name: "features.image", part: PartFeatures, options: []string{"gray_scaled", "gray_raw", "rgb_scaled"},
		applies: func(p *Profile, c choices) bool { return typed(c) && p.HasImages() }},
	{name: "features.scaling", part: PartFeatures, options: []string{"none", "standard"},
		applies: func(_ *Profile, c choices) bool { return notRaw(c) }},
	{name: "target.transform", part: PartFeatures, options: []string{"none", "log1p"},
		applies: func(p *Profile, _ choices) bool { return !p.IsClassification() }},
	// The model.
	{name: "model.family", part: PartModel, options: familyOptions, applies: always,
		allowed: func(p *Profile, c choices, o string) bool { return familyAllowed(p, c, o) },
		risky: func(p *Profile, c choices, o string) bool {
			return familyBreaks(p, c, o) || slowOnText[o] && bigText(p, c)
		}},
	{name: "model.multioutput", part: PartModel, options: []string{"native", "per_target"},
		applies: func(p *Profile, _ choices) bool { return p.TargetKind == MultiOutput },
		// PLS is multi-output by construction; wrapped per target, its
		// column-shaped predictions stack into a 3-d array. Boosting and
		// SVMs fit one target only: native is no option for them.
		allowed: func(_ *Profile, c choices, o string) bool {
			if o == "native" {
				return !singleTarget[c["model.family"]]
			}
			return c["model.family"] != "pls"
		}},
	// Hyperparameters, asked only for the chosen family.
	{name: "logistic.C", part: PartHyper, options: []string{"0.1", "1", "10"}, wide: []string{"0.01", "0.3", "3", "30", "100"}, applies: hyper("logistic.C")},
	{name: "logistic.max_iter", part: PartHyper, options: []string{"100", "1000"}, applies: hyper("logistic.max_iter")},
	{name: "ridge.alpha", part: PartHyper, options: []string{"0.1", "1", "10"}, wide: []string{"0.001", "0.01", "0.03", "0.3", "3", "30", "100"}, applies: hyper("ridge.alpha")},
	{name: "forest.n_estimators", part: PartHyper, options: []string{"50", "200", "600"}, wide: []string{"100", "400"}, applies: hyper("forest.n_estimators")},
	{name: "forest.max_depth", part: PartHyper, options: []string{"none", "8", "20"}, wide: []string{"4", "12", "30"}, applies: hyper("forest.max_depth")},
	{name: "hgb.max_iter", part: PartHyper, options: []string{"100", "300", "1000"}, wide: []string{"50", "200", "500"}, applies: hyper("hgb.max_iter")},
	{name: "hgb.learning_rate", part: PartHyper, options: []string{"0.03", "0.1", "0.3"}, wide: []string{"0.01", "0.05", "0.2"}, applies: hyper("hgb.learning_rate")},
	{name: "hgb.max_leaf_nodes", part: PartHyper, options: []string{"15", "31", "63"}, wide: []string{"7", "127"}, applies: hyper("hgb.max_leaf_nodes")},
	{name: "gb.n_estimators", part: PartHyper, options: []string{"100", "300"}, wide: []string{"50", "200", "600"}, applies: hyper("gb.n_estimators")},
	{name: "gb.learning_rate", part: PartHyper, options: []string{"0.05", "0.1", "0.2"}, wide: []string{"0.02", "0.3"}, applies: hyper("gb.learning_rate")},
	{name: "gb.max_depth", part: PartHyper, options: []string{"3", "5"}, wide: []string{"2", "4", "7"}, applies: hyper("gb.max_depth")},
	{name: "xgb.n_estimators", part: PartHyper, options: []string{"100", "400", "1500"}, wide: []string{"50", "200", "800"}, applies: hyper("xgb.n_estimators")},
	{name: "xgb.learning_rate", part: PartHyper, options: []string{"0.03", "0.1", "0.3"}, wide: []string{"0.01", "0.05", "0.2"}, applies: hyper("xgb.learning_rate")},
	{name: "xgb.max_depth", part: PartHyper, options: []string{"3", "6", "10"}, wide: []string{"2", "4", "8"}, applies: hyper("xgb.max_depth")},
	{name: "xgb.subsample", part: PartHyper, options: []string{"1.0", "0.8"}, wide: []string{"0.6"}, applies: hyper("xgb.subsample")},
	{name: "knn.n_neighbors", part: PartHyper, options: []string{"3", "15", "50"}, wide: []string{"1", "7", "30"}, applies: hyper("knn.n_neighbors")},
	{name: "knn.weights", part: PartHyper, options: []string{"uniform", "distance"}, applies: hyper("knn.weights")},
	{name: "svm.C", part: PartHyper, options: []string{"0.1", "1", "10"}, wide: []string{"0.01", "0.3", "3", "30", "100"}, applies: hyper("svm.C")},
	{name: "mlp.hidden", part: PartHyper, options: []string{"64", "256", "256_128"}, applies: hyper("mlp.hidden")},
	{name: "mlp.max_iter", part: PartHyper, options: []string{"50", "200", "600"}, applies: hyper("mlp.max_iter")},
	{name: "nb.variant", part: PartHyper, options: []string{"gaussian", "multinomial", "bernoulli", "complement"}, applies: hyper("nb.variant"),
		// Gaussian needs a dense matrix; multinomial and complement refuse
		// the negative values standard scaling makes.
		risky: func(p *Profile, c choices, o string) bool {
			return o == "gaussian" && sparseLikely(p, c) ||
				(o == "multinomial" || o == "complement") && c["features.scaling"] == "standard"
		}},
	// Validation only costs time and prints a score; it never changes the
	// final model, which is always refitted on every training row.
	{name: "validation", part: PartValidation, options: []string{"none", "holdout", "cv5"}, applies: always},
	// Ensembling and calibration.
	{name: "ensemble", part: PartEnsembling, options: []string{"none", "average", "nb_loglinear"}, applies: always,
		allowed: func(p *Profile, c choices, o string) bool { return o != "nb_loglinear" || poolsNB(p, c) },
		// Combining classifiers needs the model's probabilities; without
		// them, only calibration (asked next, for probability metrics)
		// would give it some. The program combines a softmax of the
		// decision scores instead (renderer.ScoresOnly; it crashed before
		// 2026-12-06); the prior still avoids it, but an improve edit that
		// keeps a parent's ensemble and changes its model family to one of
		// these now runs.
		risky: func(p *Profile, c choices, o string) bool {
			return o != "none" && classifies(p, c) && withoutProba(c) &&
				(!p.NeedsProba() || !calibratable(p, c))
		}},
	{name: "ensemble.second", part: PartEnsembling, options: []string{"linear", "random_forest", "hist_gb", "xgboost", "knn"},
		applies: func(_ *Profile, c choices) bool { return c["ensemble"] == "average" },
		// The second model is wrapped as the first is: unwrapped, it must fit
		// every target itself.
		allowed: func(p *Profile, c choices, o string) bool {
			return p.TargetKind != MultiOutput || c["model.multioutput"] != "native" || !singleTarget[o]
		},
		// A second model is fitted on the same matrix as the first, and fails
		// or runs out of time where the first would.
		risky: func(p *Profile, c choices, o string) bool {
			return denseOnly[o] && sparseLikely(p, c) || slowOnText[o] && bigText(p, c)
		}},
	{name: "calibration", part: PartEnsembling, options: []string{"none", "sigmoid", "isotonic"},
		applies: func(p *Profile, _ choices) bool { return p.IsClassification() && p.NeedsProba() },
		allowed: func(p *Profile, c choices, o string) bool { return o == "none" || calibratable(p, c) },
		// Uncalibrated scores (renderer.ScoresOnly) where the metric wants
		// probabilities: valid since 2026-12-06, still avoided by the prior.
		risky: func(_ *Profile, c choices, o string) bool {
			return o == "none" && withoutProba(c)
		}},
	// Added after the first release, so appended here (IDs stay stable) but
	// asked just before the model family, which it masks: see askOrder.
	{name: "target.ordinal", part: PartModel, options: []string{"classes", "regression"},
		applies: func(p *Profile, _ choices) bool { return p.OrdinalIntegers() }},
	// Added later still, asked where askOrder puts them. A row that is one
	// ordered series (a spectrum, a sampled signal; see Profile.Series) can
	// be replaced by its differences along the series, which remove baseline
	// shifts (first) and linear slopes (second); snv_diff1 first centres and
	// scales each row (standard normal variate, for multiplicative scatter);
	// savgol keeps the series and adds Savitzky-Golay smoothed first and
	// second derivatives.
	{name: "features.series", part: PartFeatures, options: []string{"none", "diff1", "diff2", "snv_diff1", "savgol"},
		applies: func(p *Profile, c choices) bool { return notRaw(c) && p.HasSeries() }},
	{name: "kernel_ridge.kernel", part: PartHyper, options: []string{"rbf", "poly2"}, applies: hyper("kernel_ridge.kernel")},
	// "cv": the program picks the value by 5-fold cross-validation over a
	// log grid (both at once when both are "cv"): slower, and it needs no
	// guess of the data's scale.
	{name: "kernel_ridge.alpha", part: PartHyper, options: []string{"0.0001", "0.001", "0.01", "1", "cv"}, wide: []string{"0.00001", "0.1", "10"}, applies: hyper("kernel_ridge.alpha")},
	{name: "kernel_ridge.gamma", part: PartHyper, options: []string{"0.0001", "0.001", "0.01", "cv"}, wide: []string{"0.00001", "0.1", "1"}, applies: hyper("kernel_ridge.gamma")},
	{name: "pls.n_components", part: PartHyper, options: []string{"5", "10", "20"}, wide: []string{"2", "3", "8", "15", "30"}, applies: hyper("pls.n_components"),
		allowed: func(p *Profile, c choices, o string) bool { n, _ := strconv.Atoi(o); return n <= minFeatures(p, c) }},
	// The weight of naive Bayes in the log-linear pool (ensemble=nb_loglinear).
	{name: "ensemble.nb_weight", part: PartEnsembling, options: []string{"0.05", "0.1", "0.2"}, wide: []string{"0.02", "0.3", "0.5"},
		applies: func(_ *Profile, c choices) bool { return c["ensemble"] == "nb_loglinear" }},
	// Added for the tables users have (issue 10): several free-text columns
	// are vectorised one by one, each with its own vocabulary, or joined
	// into one document per row that shares one.
	{name: "features.text_columns", part: PartFeatures, options: []string{"per_column", "joined"},
		applies: func(p *Profile, c choices) bool { return typed(c) && len(p.Kinds(KindText)) > 1 }},
	// Dates become numbers (year, month, day, weekday, hour, days since
	// 1970), or are dropped; dropping is masked when nothing would be left.
	{name: "features.dates", part: PartFeatures, options: []string{"parts", "drop"},
		applies: func(p *Profile, c choices) bool { return notRaw(c) && p.HasDates() },
		allowed: func(p *Profile, c choices, o string) bool { return o != "drop" || keepsFeatures(p, c, "dates") }},
	// Categorical columns with many levels (Column.HighCardinality): one-hot
	// with rare levels (under 5 rows) grouped into one column, the mean
	// target per level (out of fold on training rows, so no row sees its
	// own target), integer codes, or dropped.
	{name: "features.high_card", part: PartFeatures, options: []string{"onehot_grouped", "target_mean", "ordinal", "drop"},
		applies: func(p *Profile, c choices) bool { return typed(c) && p.HasHighCardinality() },
		allowed: func(p *Profile, c choices, o string) bool { return o != "drop" || keepsFeatures(p, c, "high_card") }},
}

func init() {
	for i := range grammar {
		if s := &grammar[i]; len(s.wide) > 0 {
			s.standard = len(s.options)
			s.options = append(slices.Clip(s.options), s.wide...)
		}
	}
}

// The grids of hyperparameter values a plan may take. The standard grid
// (three values or so per hyperparameter) is what the prior, the cost
// model and every 4-minute measurement were made with; a short run finds
// its best plans within a few minutes. The wide grid adds values between
// and beyond them (C and alpha from 0.001-0.01 to 100, shallower and deeper
// trees, more learning rates): more to search, so a longer run has more to
// find (bench/RESULTS.md: at 20 minutes both RL and the prompting baseline
// stopped at the best the standard grid can write on both tasks measured;
// on the wide grid stackoverflow-remote's bests rose by about 0.005 AUC).
const (
	GridStandard = "standard"
	GridWide     = "wide"
)

// Grids are the grids a policy can walk (Policy.SetGrid).
func Grids() []string { return []string{GridStandard, GridWide} }

// offered says option i of s is on the profile's grid.
func (s spec) offered(p *Profile, i int) bool {
	return s.standard == 0 || i < s.standard || p.Grid == GridWide
}

// loaderRisky: the ascii loader fails on a file with non-ASCII bytes, the
// semicolon loader on a comma-separated file (its header reads as one
// column, and the target is not found).
func loaderRisky(p *Profile, _ choices, o string) bool {
	switch o {
	case "ascii":
		return p.NonASCII
	case "semicolon":
		return len(p.Columns) > 1
	}
	return false
}

// allNumericComplete says every column but the id is numbers pandas reads as
// such, with no missing value: what raw columns need.
func allNumericComplete(p *Profile) bool {
	if p.MissingFrac > 0 {
		return false
	}
	for _, c := range p.Columns {
		if c.Name != p.IDColumn && c.Kind != KindNumeric && !c.PandasNumeric {
			return false
		}
	}
	return true
}

// familyBreaks says family o would fail, or answer badly, on this table
// whatever its speed: the model family's risks other than slowOnText's
// (a flat-family walk keeps these and leaves speed to the cost model).
func familyBreaks(p *Profile, c choices, o string) bool {
	return denseOnly[o] && sparseLikely(p, c) ||
		// No probabilities where the metric needs them, and too few
		// rows of the rarest class to calibrate (before any split):
		// the program then submits a softmax of the decision scores
		// (renderer.ScoresOnly), valid but uncalibrated; it crashed
		// before 2026-12-06, and the prior still avoids it.
		classifies(p, c) && p.NeedsProba() && !families[o].hasPredictProb && !calibratable(p, c)
}

// singleTarget are the families whose regressors fit one target at a time
// (scikit-learn's boosting and SVMs): several targets need the per-target
// wrapper.
var singleTarget = map[string]bool{"hist_gb": true, "gradient_boosting": true, "svm_rbf": true, "linear_svm": true}

// denseOnly are the families whose estimators refuse a sparse matrix.
var denseOnly = map[string]bool{"hist_gb": true, "pls": true}

// sparseLikely says the feature matrix is expected to be sparse: typed
// features with text columns (their n-gram matrices are), or many-level
// categoricals one-hot encoded.
func sparseLikely(p *Profile, c choices) bool {
	return typed(c) && (p.HasText() || p.HasHighCardinality() && c["features.high_card"] == "onehot_grouped")
}

// slowOnText are the families whose fit grows with rows times n-gram
// columns (or rows squared) fast enough that thousands of documents take
// minutes: on the suite's text tasks (fine-food-reviews, 4,000 rows;
// austen-authorship, 10,000) they were most of the prior's time-outs. The
// trees joined later, from the same two tasks' measurements
// (bench/prior-failures.md): xgboost timed out in 5 of 5 programs there,
// random forests in 5 of 9, extra trees in 3 of 7.
var slowOnText = map[string]bool{"svm_rbf": true, "knn": true, "mlp": true, "gradient_boosting": true, "kernel_ridge": true,
	"xgboost": true, "random_forest": true, "extra_trees": true}

// bigText says the plan reads text columns of at least bigTextRows
// training rows.
func bigText(p *Profile, c choices) bool {
	return typed(c) && p.HasText() && rowsShare(c)*float64(p.TrainRows) >= bigTextRows
}

// bigTextRows: see slowOnText.
const bigTextRows = 2000

// keepsFeatures says some group of feature columns is left when the group
// dropping is dropped, given the choices so far (a group whose decision is
// still to come counts as kept; its own drop is masked in turn). A plan
// with no feature left fails on every table, which teaches nothing.
func keepsFeatures(p *Profile, c choices, dropping string) bool {
	groups := map[string]bool{
		"numeric":     len(p.Kinds(KindNumeric)) > 0,
		"dates":       p.HasDates() && c["features.dates"] != "drop",
		"categorical": typed(c) && p.HasCategorical() && c["features.categorical"] != "drop",
		"high_card":   typed(c) && p.HasHighCardinality() && c["features.high_card"] != "drop",
		"text":        typed(c) && p.HasText(),
		"image":       typed(c) && p.HasImages(),
	}
	delete(groups, dropping)
	for _, kept := range groups {
		if kept {
			return true
		}
	}
	return false
}

// minRowsLeft is the fewest training rows dropping incomplete rows may
// leave: fewer fail a holdout or 5-fold split, or leave classes unseen.
const minRowsLeft = 50

// rowsShare is the share of training rows read.rows keeps.
func rowsShare(c choices) float64 {
	if share, ok := map[string]float64{"half": 0.5, "fifth": 0.2}[c["read.rows"]]; ok {
		return share
	}
	return 1
}

// calibratable says the rarest class is expected to keep the 3 rows
// CalibratedClassifierCV's 3 stratified folds need after a validation split
// and read.rows took theirs (twice that from a random share of the rows,
// which may hold fewer than expected); with fewer, calibration fails on
// every run.
func calibratable(p *Profile, c choices) bool {
	share, need := rowsShare(c), 3.0
	if share < 1 {
		need = 6
	}
	if v := c["validation"]; v == "holdout" || v == "cv5" {
		share *= 0.8
	}
	return p.MinorityFrac*float64(p.TrainRows)*share >= need
}

// keepsRows says dropping the rows with a missing value (after read.rows
// took its share) leaves at least minRowsLeft rows, or drops none from a
// table smaller than that.
func keepsRows(p *Profile, c choices) bool {
	before := rowsShare(c) * float64(p.TrainRows)
	return p.CompleteFrac*before >= min(minRowsLeft, before)
}

// columnsAllowed masks numeric_only on a table without numbers or dates.
func columnsAllowed(p *Profile, o string) bool {
	return o != "numeric_only" || len(p.Kinds(KindNumeric)) > 0 || p.HasDates()
}

// poolsNB says ensemble=nb_loglinear fits the plan: a classifier with text
// columns it reads as text. Naive Bayes on the word counts is pooled with
// the main model's probabilities: it is over-confident alone, but it sees
// rare words a regularised linear model discounts.
func poolsNB(p *Profile, c choices) bool {
	return classifies(p, c) && typed(c) && p.HasText()
}

// askedBefore places decisions appended to grammar after its first release:
// each is asked just before the named earlier decision.
var askedBefore = map[string]string{
	"target.ordinal":      "model.family",
	"features.series":     "features.scaling",
	"kernel_ridge.kernel": "validation",
	"kernel_ridge.alpha":  "validation",
	"kernel_ridge.gamma":  "validation",
	"pls.n_components":    "validation",
	"ensemble.nb_weight":  "calibration",
	// features.categorical's drop mask counts on these being asked after it.
	"features.text_columns": "features.text",
	"features.dates":        "features.scaling",
	"features.high_card":    "features.scaling",
}

// askOrder is the order the walker asks decisions in (indexes into grammar);
// it differs from grammar's order only where a later-added decision must come
// earlier.
var askOrder = func() []int {
	var order []int
	for i, s := range grammar {
		if _, later := askedBefore[s.name]; later || s.name == improveDecision {
			continue
		}
		for j, t := range grammar { // in grammar order, so appended decisions keep theirs
			if askedBefore[t.name] == s.name {
				order = append(order, j)
			}
		}
		order = append(order, i)
	}
	return order
}()

// DecisionNames are the grammar's decisions; a Decision's ID indexes it.
func DecisionNames() []string {
	out := make([]string, len(grammar))
	for i, s := range grammar {
		out[i] = s.name
	}
	return out
}

// MaxOptions bounds the options of every decision (TestWalkerStepsAndErrors checks it).
// model.family is the widest (15 since kernel_ridge and pls were added).
const MaxOptions = 15

// Walker asks a plan's decisions one at a time. It is not safe for concurrent use.
type Walker struct {
	p       *Profile
	parent  choices // nil for a plan from scratch
	part    string  // improve: the part being re-decided; "" until chosen
	pos     int     // next askOrder index to consider
	chosen  choices
	plan    []Choice
	steps   []Step
	pending *Decision
	done    bool
	prefs   preferences // Default's, for the cost model's completions; made when first needed
	noCost  bool        // a completion's walker: no cost avoidance (it would recurse)
	// flat marks a flat-family walk (Policy.SetFlatFamily): its model
	// family decision avoids only what familyBreaks and, with a time
	// limit, the cost model say, not slowOnText's blanket rule.
	flat bool
}

// NewWalker starts a plan for p. With a parent plan the walk is an "improve"
// action: its first decision picks the part to change, then only that part is
// decided again and everything else is copied from the parent (decisions the
// parent never made, such as a new model family's hyperparameters, are asked).
func NewWalker(p *Profile, parent *Plan) *Walker {
	w := &Walker{p: p, chosen: choices{}}
	if p == nil {
		w.done = true // nothing to decide without a task; Next reports the (empty) plan complete
		return w
	}
	if parent != nil {
		w.parent = choices{}
		for _, c := range parent.Choices {
			w.parent[c.Name] = c.Value
		}
	}
	return w
}

// Next returns the next decision to take, or ok=false when the plan is
// complete. It is idempotent until Choose is called.
func (w *Walker) Next() (Decision, bool) {
	if w.pending != nil {
		return *w.pending, true
	}
	if w.done {
		return Decision{}, false
	}
	if w.parent != nil && w.part == "" && !w.done {
		d := w.decision(0, w.improveParts())
		w.pending = &d
		return d, true
	}
	for ; w.pos < len(askOrder); w.pos++ {
		id := askOrder[w.pos]
		s := grammar[id]
		if !s.applies(w.p, w.chosen) {
			continue
		}
		var opts []string
		for i, o := range s.options {
			if s.offered(w.p, i) && (s.allowed == nil || s.allowed(w.p, w.chosen, o)) {
				opts = append(opts, o)
			}
		}
		if len(opts) == 0 {
			continue
		}
		if w.parent != nil && s.part != w.part {
			if v, ok := w.parent[s.name]; ok && slices.Contains(opts, v) {
				w.set(s.name, v)
				continue
			}
		}
		if len(opts) == 1 {
			w.set(s.name, opts[0])
			continue
		}
		d := w.decision(id, opts)
		risky := s.risky
		if w.flat && s.name == "model.family" {
			risky = familyBreaks
		}
		if risky != nil {
			for i, o := range opts {
				if risky(w.p, w.chosen, o) {
					d.Avoid = append(d.Avoid, i)
				}
			}
		}
		if !w.noCost && w.p.TimeLimit > 0 {
			for _, i := range w.costAvoid(d, d.Avoid) {
				if !slices.Contains(d.Avoid, i) {
					d.Avoid = append(d.Avoid, i)
				}
			}
			slices.Sort(d.Avoid)
		}
		w.pending = &d
		return d, true
	}
	w.done = true
	return Decision{}, false
}

// improveParts are the parts worth changing: hyperparameters only when the
// parent's model family has any.
func (w *Walker) improveParts() []string {
	parts := []string{PartFeatures, PartModel}
	if len(familyHyper[w.parent["model.family"]]) > 0 {
		parts = append(parts, PartHyper)
	}
	return append(parts, PartValidation, PartEnsembling)
}

func (w *Walker) decision(id int, opts []string) Decision {
	d := Decision{ID: id, Name: grammar[id].name, Options: opts}
	for _, o := range opts {
		d.Index = append(d.Index, slices.Index(grammar[id].options, o))
	}
	return d
}

func (w *Walker) set(name, value string) {
	w.chosen[name] = value
	w.plan = append(w.plan, Choice{Name: name, Value: value})
}

// Choose takes option i of the pending decision (an index into its Options).
func (w *Walker) Choose(i int) error {
	if w.pending == nil {
		if _, ok := w.Next(); !ok {
			return errors.New("recipe: Choose called on a complete plan")
		}
	}
	d := *w.pending
	if i < 0 || i >= len(d.Options) {
		return fmt.Errorf("recipe: option %d out of range for decision %s with %d options", i, d.Name, len(d.Options))
	}
	w.pending = nil
	w.steps = append(w.steps, Step{Decision: d.ID, Option: d.Index[i], Chosen: i, Allowed: len(d.Options)})
	if d.ID == 0 {
		w.part = d.Options[i]
		return nil
	}
	w.set(d.Name, d.Options[i])
	w.pos++
	return nil
}

// Steps are the decisions taken so far, in order.
func (w *Walker) Steps() []Step { return slices.Clone(w.steps) }

// Part is the part an improve walk changes ("" for a plan from scratch).
func (w *Walker) Part() string { return w.part }

// Done reports whether the plan is complete.
func (w *Walker) Done() bool {
	_, ok := w.Next()
	return !ok
}

// Plan returns the choices made so far; complete once Next reports ok=false.
func (w *Walker) Plan() *Plan {
	return &Plan{Choices: slices.Clone(w.plan)}
}

// Get returns a choice's value, "" when the plan has none.
func (pl *Plan) Get(name string) string {
	for _, c := range pl.Choices {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// choiceMap is the plan's choices by decision name, as rendering, describing
// and pricing a plan read them.
func (pl *Plan) choiceMap() choices {
	c := make(choices, len(pl.Choices))
	for _, ch := range pl.Choices {
		c[ch.Name] = ch.Value
	}
	return c
}

// Key is the plan's stable identity: equal plans have equal keys.
func (pl *Plan) Key() string {
	var b strings.Builder
	for i, c := range pl.Choices {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(c.Name)
		b.WriteByte('=')
		b.WriteString(c.Value)
	}
	return b.String()
}

// String is the plan's key.
func (pl *Plan) String() string { return pl.Key() }

// MarshalJSON keeps a nil plan's JSON well-formed.
func (pl *Plan) MarshalJSON() ([]byte, error) {
	if pl == nil {
		return []byte("null"), nil
	}
	type plain Plan
	return json.Marshal((*plain)(pl))
}

// Validate checks that the plan is exactly what a walk on p could produce, so a
// plan read from disk or made for another task is refused before rendering.
func (pl *Plan) Validate(p *Profile) error {
	if pl == nil {
		return errors.New("recipe: nil plan")
	}
	want := map[string]string{}
	for _, c := range pl.Choices {
		if _, dup := want[c.Name]; dup {
			return fmt.Errorf("recipe: plan decides %s twice", c.Name)
		}
		want[c.Name] = c.Value
	}
	w := NewWalker(p, nil)
	for d, ok := w.Next(); ok; d, ok = w.Next() {
		v, has := want[d.Name]
		if !has {
			return fmt.Errorf("recipe: plan lacks decision %s", d.Name)
		}
		j := slices.Index(d.Options, v)
		if j < 0 {
			return fmt.Errorf("recipe: %s=%s is not allowed for task %s (options %v)", d.Name, v, p.Name, d.Options)
		}
		if err := w.Choose(j); err != nil {
			return err
		}
	}
	if got := w.Plan().Key(); got != pl.Key() {
		return fmt.Errorf("recipe: plan %q differs from the grammar's walk %q", pl.Key(), got)
	}
	return nil
}

// Random walks the grammar choosing uniformly among the allowed options.
func Random(p *Profile, rng *rand.Rand) *Plan {
	w := NewWalker(p, nil)
	for d, ok := w.Next(); ok; d, ok = w.Next() {
		_ = w.Choose(rng.IntN(len(d.Options)))
	}
	return w.Plan()
}

// RandomImprove edits parent uniformly: a random part, then random values for it.
func RandomImprove(p *Profile, parent *Plan, rng *rand.Rand) *Plan {
	w := NewWalker(p, parent)
	for d, ok := w.Next(); ok; d, ok = w.Next() {
		_ = w.Choose(rng.IntN(len(d.Options)))
	}
	return w.Plan()
}

// defaultPrefs is a sensible quick plan: the first allowed value in each list
// wins. Text goes to a linear model (fast on sparse features), several targets
// to ridge, images to a random forest and other tables to histogram boosting;
// a holdout score is printed.
var defaultPrefs = map[string][]string{
	"read.loader":          {"default"},
	"read.rows":            {"all"},
	"features.columns":     {"typed"},
	"features.missing":     {"median"},
	"features.categorical": {"onehot"},
	"features.text":        {"tfidf_word_1_2"},
	"features.text_max":    {"20000"},
	"features.image":       {"gray_scaled"},
	"features.scaling":     {"standard"},
	"target.transform":     {"none"},
	"model.multioutput":    {"native"},
	"logistic.C":           {"10"},
	"logistic.max_iter":    {"1000"},
	"ridge.alpha":          {"0.1"},
	"forest.n_estimators":  {"200"},
	"forest.max_depth":     {"none"},
	"hgb.max_iter":         {"300"},
	"hgb.learning_rate":    {"0.1"},
	"hgb.max_leaf_nodes":   {"31"},
	"validation":           {"holdout"},
	"ensemble":             {"none"},
	"calibration":          {"none"},
	"features.series":      {"none"},
	"kernel_ridge.kernel":  {"rbf"},
	"kernel_ridge.alpha":   {"cv"},
	"kernel_ridge.gamma":   {"cv"},
	"svm.C":                {"1"},
	"ensemble.nb_weight":   {"0.1"},
	"pls.n_components":     {"10"},
	// Each text column keeps its own vocabulary (what one text column gets);
	// dates as their parts; the mean target per level is dense and one
	// column per level-column, so it suits the boosted trees Default picks
	// for tables as well as linear models.
	"features.text_columns": {"per_column"},
	"features.dates":        {"parts"},
	"features.high_card":    {"target_mean"},
}

// Default is a sensible quick plan for p.
func Default(p *Profile) *Plan {
	if p == nil {
		return &Plan{}
	}
	prefs := defaultsFor(p)
	w := NewWalker(p, nil)
	for d, ok := w.Next(); ok; d, ok = w.Next() {
		_ = w.Choose(prefs.option(d))
	}
	return w.Plan()
}

// preferences are the values Default prefers, per decision, best first.
type preferences map[string][]string

func defaultsFor(p *Profile) preferences {
	prefs := preferences{}
	for k, v := range defaultPrefs {
		prefs[k] = v
	}
	if p.HasText() {
		// Word and character n-grams side by side: characters catch names,
		// spellings and inflections the word vocabulary splits or misses.
		// Naive Bayes on word counts pooled with the classifier (NB-SVM's
		// idea) helped both suite text tasks: log loss 0.387 -> 0.307 on
		// austen-authorship, AUC 0.873 -> 0.877 on fine-food-reviews
		// (testdata/measured.md). Regression on text does not offer it.
		prefs["features.text"] = []string{"tfidf_word_char"}
		prefs["ensemble"] = []string{"nb_loglinear", "none"}
	}
	switch {
	case p.HasText() && p.IsClassification() && p.family().Columns == grade.ColumnPerClass &&
		!calibratable(p, choices{"read.rows": "all", "validation": "holdout"}):
		// Classes too rare to calibrate: a linear SVM has no probabilities
		// of its own, logistic regression has.
		prefs["model.family"] = []string{"logistic"}
	case p.HasText() && p.IsClassification() && p.family().Columns == grade.ColumnPerClass: // log_loss
		// Log loss scores the probabilities themselves: a linear SVM with
		// isotonic calibration is better calibrated than a lightly
		// regularised logistic regression on sparse n-grams, and several
		// times faster (testdata/measured.md).
		prefs["model.family"] = []string{"linear_svm", "logistic"}
		prefs["calibration"] = []string{"isotonic"}
	case p.HasText():
		prefs["model.family"] = []string{"logistic", "ridge"}
	case p.TargetKind == MultiOutput:
		prefs["model.family"] = []string{"ridge"}
	case p.HasImages():
		prefs["model.family"] = []string{"random_forest"}
	default:
		// Ordinal codes keep the matrix dense, which histogram boosting needs.
		prefs["model.family"] = []string{"hist_gb"}
		prefs["features.categorical"] = []string{"ordinal"}
	}
	if p.family().LogScale { // rmsle and its mean-column form
		prefs["target.transform"] = []string{"log1p"}
	}
	if p.HasSeries() {
		// Smoothed derivatives are the usual first pretreatment of spectra and
		// sampled signals (they remove baseline shifts), and "savgol" keeps the
		// series itself too, so a table that only looks like a series loses
		// nothing: the model can still use the raw columns.
		prefs["features.series"] = []string{"savgol"}
	}
	return prefs
}

// option is the index Default takes at d: its first preferred value that d
// offers, else the first option.
func (pr preferences) option(d Decision) int {
	for _, want := range pr[d.Name] {
		if j := slices.Index(d.Options, want); j >= 0 {
			return j
		}
	}
	return 0
}
