package recipe

import (
	"fmt"
	"strings"
)

// family is how one model family renders.
type family struct {
	describe       string
	classifier     string // constructor name; "" when the family has none
	regressor      string
	classifierMod  string
	regressorMod   string
	hasPredictProb bool // the classifier has predict_proba as rendered
}

var families = map[string]family{
	"logistic":          {"logistic regression", "LogisticRegression", "", "sklearn.linear_model", "", true},
	"ridge":             {"ridge", "RidgeClassifier", "Ridge", "sklearn.linear_model", "sklearn.linear_model", false},
	"linear":            {"ordinary least squares", "", "LinearRegression", "", "sklearn.linear_model", false},
	"random_forest":     {"random forest", "RandomForestClassifier", "RandomForestRegressor", "sklearn.ensemble", "sklearn.ensemble", true},
	"extra_trees":       {"extra-trees forest", "ExtraTreesClassifier", "ExtraTreesRegressor", "sklearn.ensemble", "sklearn.ensemble", true},
	"hist_gb":           {"histogram gradient boosting", "HistGradientBoostingClassifier", "HistGradientBoostingRegressor", "sklearn.ensemble", "sklearn.ensemble", true},
	"gradient_boosting": {"gradient boosting", "GradientBoostingClassifier", "GradientBoostingRegressor", "sklearn.ensemble", "sklearn.ensemble", true},
	"xgboost":           {"XGBoost", "XGBClassifier", "XGBRegressor", "xgboost", "xgboost", true},
	"knn":               {"k-nearest-neighbours", "KNeighborsClassifier", "KNeighborsRegressor", "sklearn.neighbors", "sklearn.neighbors", true},
	"linear_svm":        {"linear SVM", "LinearSVC", "LinearSVR", "sklearn.svm", "sklearn.svm", false},
	"svm_rbf":           {"RBF-kernel SVM", "SVC", "SVR", "sklearn.svm", "sklearn.svm", true},
	"mlp":               {"multi-layer perceptron", "MLPClassifier", "MLPRegressor", "sklearn.neural_network", "sklearn.neural_network", true},
	"naive_bayes":       {"naive Bayes", "GaussianNB", "", "sklearn.naive_bayes", "", true},
	"kernel_ridge":      {"kernel ridge", "", "KernelRidge", "", "sklearn.kernel_ridge", false},
	"pls":               {"partial least squares", "", "PLSRegression", "", "sklearn.cross_decomposition", false},
}

// naiveBayes are the nb.variant options' classes (gaussian: the family's own).
var naiveBayes = map[string]string{"multinomial": "MultinomialNB", "bernoulli": "BernoulliNB", "complement": "ComplementNB"}

// Estimator is the model's constructor, with calibration or a per-target
// wrapper when the plan asks.
func (r *renderer) Estimator() string {
	return r.wrapEstimator(r.estimator(r.c["model.family"], r.c))
}

// SecondEstimator is the ensemble's second model (ensemble=average).
func (r *renderer) SecondEstimator() string {
	return r.wrapEstimator(r.estimator(r.secondFamily(), secondHyper))
}

// estimator renders a constructor call for a family with hyperparameters hp.
func (r *renderer) estimator(fam string, hp choices) string {
	f := families[fam]
	name, mod := f.regressor, f.regressorMod
	if r.Cls {
		name, mod = f.classifier, f.classifierMod
	}
	if nb, ok := naiveBayes[hp["nb.variant"]]; ok && fam == "naive_bayes" {
		name = nb
	}
	args := r.estimatorArgs(fam, hp)
	if fam == "kernel_ridge" {
		if grid := kernelRidgeGrid(hp); grid != "" {
			// Searched inside the per-target wrapper, so each target gets its own values.
			r.use(mod, name)
			r.use("sklearn.model_selection", "GridSearchCV", "KFold")
			return fmt.Sprintf(`GridSearchCV(%s(%s), {%s}, cv=KFold(n_splits=5, shuffle=True, random_state=0), scoring="neg_mean_squared_error")`,
				name, strings.Join(args, ", "), grid)
		}
	}
	r.use(mod, name)
	expr := name + "(" + strings.Join(args, ", ") + ")"
	if fam == "xgboost" && !r.Cls {
		// XGBoost 1.7 (Debian 12's) starts every regression at base_score
		// 0.5, whatever the target: 100 trees at learning rate 0.03 leave
		// 0.97^100 ≈ 5% of the distance to the target's mean, so on
		// ames-housing's log prices (about 12) the RMSLE is 0.59 instead of
		// 0.13. Centring the target starts it at the mean, as scikit-learn's
		// boosting and XGBoost 2 do by default.
		r.use("sklearn.compose", "TransformedTargetRegressor")
		r.use("sklearn.preprocessing", "StandardScaler")
		expr = fmt.Sprintf("TransformedTargetRegressor(regressor=%s, transformer=StandardScaler(with_std=False))", expr)
	}
	return expr
}

// estimatorArgs are a family's constructor arguments for hyperparameters hp.
func (r *renderer) estimatorArgs(fam string, hp choices) []string {
	switch fam {
	case "logistic":
		return []string{"C=" + hp["logistic.C"], "max_iter=" + hp["logistic.max_iter"]}
	case "ridge":
		return []string{"alpha=" + hp["ridge.alpha"]}
	case "random_forest", "extra_trees":
		depth := hp["forest.max_depth"]
		if depth == "none" {
			depth = "None"
		}
		return []string{"n_estimators=" + hp["forest.n_estimators"], "max_depth=" + depth, "n_jobs=N_JOBS", "random_state=0"}
	case "hist_gb":
		return []string{"max_iter=" + hp["hgb.max_iter"], "learning_rate=" + hp["hgb.learning_rate"],
			"max_leaf_nodes=" + hp["hgb.max_leaf_nodes"], "random_state=0"}
	case "gradient_boosting":
		return []string{"n_estimators=" + hp["gb.n_estimators"], "learning_rate=" + hp["gb.learning_rate"],
			"max_depth=" + hp["gb.max_depth"], "random_state=0"}
	case "xgboost":
		return []string{"n_estimators=" + hp["xgb.n_estimators"], "learning_rate=" + hp["xgb.learning_rate"],
			"max_depth=" + hp["xgb.max_depth"], "subsample=" + hp["xgb.subsample"], `tree_method="hist"`, "n_jobs=N_JOBS", "random_state=0"}
	case "knn":
		return []string{"n_neighbors=" + hp["knn.n_neighbors"], "weights=" + py(hp["knn.weights"]), "n_jobs=N_JOBS"}
	case "linear_svm":
		return []string{"C=" + hp["svm.C"]}
	case "svm_rbf":
		if r.NeedsProba() { // a probability metric, or pooled with a second model
			// Platt scaling inside SVC: five extra internal fits, but probabilities.
			return []string{"C=" + hp["svm.C"], "probability=True", "random_state=0"}
		}
		return []string{"C=" + hp["svm.C"]}
	case "mlp":
		hidden := map[string]string{"64": "(64,)", "256": "(256,)", "256_128": "(256, 128)"}[hp["mlp.hidden"]]
		return []string{"hidden_layer_sizes=" + hidden, "max_iter=" + hp["mlp.max_iter"], "random_state=0"}
	case "kernel_ridge":
		return kernelRidgeArgs(hp)
	case "pls":
		// scale=False: the features are standardised (or not) by the plan's own scaling.
		return []string{"n_components=" + hp["pls.n_components"], "scale=False"}
	}
	return nil
}

// kernelRidgeArgs are kernel ridge's kernel and the values not chosen by cv.
func kernelRidgeArgs(hp choices) []string {
	args := []string{`kernel="rbf"`}
	if hp["kernel_ridge.kernel"] == "poly2" {
		args = []string{`kernel="poly"`, "degree=2"}
	}
	for _, h := range []string{"alpha", "gamma"} {
		if v := hp["kernel_ridge."+h]; v != "cv" {
			args = append(args, h+"="+v)
		}
	}
	return args
}

// kernelRidgeGrid is GridSearchCV's search space over the "cv" values, ""
// when there are none.
func kernelRidgeGrid(hp choices) string {
	var grid []string
	for _, h := range []string{"alpha", "gamma"} {
		if hp["kernel_ridge."+h] == "cv" {
			grid = append(grid, py(h)+": "+krrGrid[h])
		}
	}
	return strings.Join(grid, ", ")
}

// krrGrid are the log grids kernel ridge's "cv" values search.
var krrGrid = map[string]string{
	"alpha": "[1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0]",
	"gamma": "[1e-5, 1e-4, 1e-3, 1e-2, 1e-1]",
}

// secondHyper are the fixed settings of the ensemble's second model.
var secondHyper = choices{
	"logistic.C": "1", "logistic.max_iter": "1000", "ridge.alpha": "1",
	"forest.n_estimators": "300", "forest.max_depth": "none",
	"hgb.max_iter": "300", "hgb.learning_rate": "0.1", "hgb.max_leaf_nodes": "31",
	"xgb.n_estimators": "400", "xgb.learning_rate": "0.1", "xgb.max_depth": "6", "xgb.subsample": "0.8",
	"knn.n_neighbors": "15", "knn.weights": "distance",
}

func (r *renderer) secondFamily() string {
	fam := r.c["ensemble.second"]
	if fam == "linear" {
		if r.Cls {
			return "logistic"
		}
		return "ridge"
	}
	return fam
}

// wrapEstimator adds calibration or per-target fitting around a constructor.
func (r *renderer) wrapEstimator(expr string) string {
	switch r.c["calibration"] {
	case "sigmoid", "isotonic":
		r.use("sklearn.calibration", "CalibratedClassifierCV")
		expr = fmt.Sprintf("CalibratedClassifierCV(%s, method=%s, cv=3)", expr, py(r.c["calibration"]))
	}
	if r.c["model.multioutput"] == "per_target" {
		r.use("sklearn.multioutput", "MultiOutputRegressor")
		expr = fmt.Sprintf("MultiOutputRegressor(%s)", expr)
	}
	return expr
}

// scorer is how a program computes a metric: a format of the truth (%[1]s)
// and the prediction (%[2]s), and the sklearn.metrics function it imports.
type scorer struct{ function, format string }

// scorers are the metrics' Python spellings: how the program computes a
// score, which only the renderer knows (grade.FamilyOf says the rest). qwk
// is scored on the original labels (the encoded order is string order)
// unless the classes are learned as numbers (see Score).
var scorers = map[string]scorer{
	"auc":               {"roc_auc_score", "roc_auc_score(%[1]s == positive, %[2]s)"},
	"log_loss":          {"log_loss", "log_loss(%[1]s, %[2]s, labels=np.arange(n_classes))"},
	"accuracy":          {"accuracy_score", "accuracy_score(%[1]s, %[2]s)"},
	"qwk":               {"cohen_kappa_score", `cohen_kappa_score(label_encoder.classes_[%[1]s].astype(float), label_encoder.classes_[%[2]s].astype(float), weights="quadratic")`},
	"rmse":              {"mean_squared_error", "np.sqrt(mean_squared_error(%[1]s, %[2]s))"},
	"mae":               {"mean_absolute_error", "mean_absolute_error(%[1]s, %[2]s)"},
	"rmsle":             {"mean_squared_log_error", "np.sqrt(mean_squared_log_error(%[1]s, %[2]s))"},
	"mean_column_rmse":  {"mean_squared_error", `np.mean(np.sqrt(mean_squared_error(%[1]s, %[2]s, multioutput="raw_values")))`},
	"mean_column_rmsle": {"mean_squared_log_error", `np.mean(np.sqrt(mean_squared_log_error(%[1]s, %[2]s, multioutput="raw_values")))`},
	"pearson":           {"", "np.corrcoef(%[1]s, %[2]s)[0, 1]"},
}

// Score is the task's metric on encoded truth yVar and prediction out.
func (r *renderer) Score(yVar, out string) string {
	s, ok := scorers[r.P.Metric]
	if !ok {
		return "float('nan')"
	}
	if r.OrdReg { // qwk on classes learned as numbers
		s.format = `cohen_kappa_score(%[1]s.astype(int), %[2]s, weights="quadratic")`
	}
	if s.function != "" {
		r.use("sklearn.metrics", s.function)
	}
	truth := yVar
	if !r.P.IsClassification() && r.c["target.transform"] == "log1p" {
		truth = "np.expm1(" + yVar + ")"
	}
	return fmt.Sprintf(s.format, truth, out)
}
