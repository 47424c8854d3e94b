package recipe

import "slices"

// Edit is a named change of the default plan: the decisions it fixes take
// its values, every other decision the default's.
type Edit struct {
	Name   string
	Choose map[string]string
}

// Edits are hand-picked edits of the default plan that span the space: fast
// and weak, slow and (often) strong. testdata/measured.md measured them on
// the suite; `mlerl bench record-replay` records them. A task may not allow
// some of them (Apply says so).
func Edits() []Edit { return slices.Clone(edits) }

var edits = []Edit{
	{"default", nil},
	{"fast linear (logistic)", map[string]string{"model.family": "logistic", "logistic.C": "1", "logistic.max_iter": "100", "validation": "none"}},
	{"fast linear (ridge)", map[string]string{"model.family": "ridge", "ridge.alpha": "1", "validation": "none"}},
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
	// Added with the series, kernel ridge and word+char options. The series
	// edits are meant for tables of one ordered signal per row (spectra); on
	// other regression tasks they are the kernel ridge / ridge alone.
	{"series snv+diff1, kernel ridge rbf", map[string]string{"features.series": "snv_diff1", "model.family": "kernel_ridge",
		"kernel_ridge.kernel": "rbf", "kernel_ridge.alpha": "0.0001", "kernel_ridge.gamma": "0.001", "validation": "none"}},
	{"series savgol, kernel ridge rbf", map[string]string{"features.series": "savgol", "model.family": "kernel_ridge",
		"kernel_ridge.kernel": "rbf", "kernel_ridge.alpha": "0.0001", "kernel_ridge.gamma": "0.0001", "validation": "none"}},
	{"series snv+diff1, ridge", map[string]string{"features.series": "snv_diff1", "model.family": "ridge", "ridge.alpha": "0.1", "validation": "none"}},
	{"calibrated linear svm C=1, cased word+char tf-idf on text", map[string]string{"features.text": "tfidf_word_char_cased", "features.text_max": "200000",
		"model.family": "linear_svm", "svm.C": "1", "calibration": "isotonic", "validation": "none"}},
	{"logistic C=10, word+char tf-idf on text", map[string]string{"features.text": "tfidf_word_char", "features.text_max": "200000",
		"model.family": "logistic", "logistic.C": "10", "logistic.max_iter": "1000", "validation": "none"}},
	// Added with the cross-validated kernel ridge and the naive Bayes pool.
	{"series savgol, kernel ridge rbf tuned by cv", map[string]string{"features.series": "savgol", "model.family": "kernel_ridge",
		"kernel_ridge.kernel": "rbf", "kernel_ridge.alpha": "cv", "kernel_ridge.gamma": "cv", "validation": "none"}},
	{"calibrated linear svm C=1 pooled with naive Bayes, cased word+char tf-idf on text", map[string]string{"features.text": "tfidf_word_char_cased",
		"features.text_max": "200000", "model.family": "linear_svm", "svm.C": "1", "calibration": "isotonic",
		"ensemble": "nb_loglinear", "ensemble.nb_weight": "0.1", "validation": "none"}},
}

// Apply walks p taking e's values and the default plan's elsewhere; ok is
// false when one of e's values is not allowed on this task (or none applies).
func (e Edit) Apply(p *Profile) (*Plan, bool) {
	choose := e.Choose
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
		if err := w.Choose(i); err != nil {
			return nil, false
		}
	}
	pl := w.Plan()
	for k, v := range choose {
		if got := pl.Get(k); got != "" && got != v {
			return nil, false
		}
	}
	return pl, used > 0 || len(choose) == 0
}
