package recipe

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Render writes plan pl for the task p as a Python program. The program runs
// with data/ holding the public files, writes ./submission.csv and uses at most
// two threads. Its main steps are plain top-level statements (train =
// pd.read_csv(...), estimator = XGBClassifier(...), model.fit(X, y), proba =
// model.predict_proba(X_test)) so the AST instrumenter can find them.
//
// The first line is "# plan: KEY" with the plan's Key, the same string a
// replay table (rl/replay) keys its recorded outcomes by, so a replay Env
// recognises the program's plan without parsing it (replay.KeyOf).
func Render(p *Profile, pl *Plan) (string, error) {
	if p == nil || len(p.TrainTargets) == 0 || p.IDColumn == "" || p.TargetKind == "" {
		return "", fmt.Errorf("recipe: render: profile without id column, targets or target kind (use NewProfile)")
	}
	if err := pl.Validate(p); err != nil {
		return "", fmt.Errorf("recipe: render %s: %w", p.Name, err)
	}
	r := &renderer{p: p, c: choices{}, imports: map[string]map[string]bool{}}
	for _, ch := range pl.Choices {
		r.c[ch.Name] = ch.Value
	}
	r.cls = classifies(p, r.c)
	r.ordReg = p.IsClassification() && !r.cls
	return r.program(pl), nil
}

type renderer struct {
	p       *Profile
	cls     bool // the plan predicts classes (see classifies)
	ordReg  bool // an ordinal target learned as a number and rounded
	c       choices
	imports map[string]map[string]bool // module -> names; "" -> plain "import x"
	body    []string
}

func (r *renderer) use(module string, names ...string) {
	if r.imports[module] == nil {
		r.imports[module] = map[string]bool{}
	}
	for _, n := range names {
		r.imports[module][n] = true
	}
}

// line appends one line of Python at the given indentation (4 spaces a level).
func (r *renderer) line(indent int, format string, args ...any) {
	r.body = append(r.body, strings.Repeat("    ", indent)+fmt.Sprintf(format, args...))
}

func (r *renderer) blank() { r.body = append(r.body, "") }

func py(s string) string { return strconv.Quote(s) }

func pyList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = py(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func (r *renderer) program(pl *Plan) string {
	p, c := r.p, r.c
	cls := r.cls
	multi := p.TargetKind == MultiOutput
	r.use("", "numpy as np")
	r.use("", "pandas as pd")

	r.line(0, "ID_COLUMN = %s", py(p.IDColumn))
	if multi {
		r.line(0, "TARGETS = %s", pyList(p.TrainTargets))
	} else {
		r.line(0, "TARGET = %s", py(p.TrainTargets[0]))
	}
	r.line(0, "started = time.time()")
	r.blank()

	if r.hasImages() {
		r.imageLoader()
	}

	// Loading.
	read := r.readExpr()
	r.line(0, "# Load the data.")
	r.line(0, "train = %s", fmt.Sprintf(read, py("data/train.csv")))
	r.line(0, "test = %s", fmt.Sprintf(read, py("data/test.csv")))
	r.line(0, "sample_submission = %s", fmt.Sprintf(read, py("data/sample_submission.csv")))
	r.line(0, `print(f"train {train.shape}, test {test.shape}")`)
	switch c["read.rows"] {
	case "half":
		r.line(0, "# Train on a random half of the rows: faster, at some cost in accuracy.")
		r.line(0, "train = train.sample(frac=0.5, random_state=0).reset_index(drop=True)")
	case "fifth":
		r.line(0, "# Train on a random fifth of the rows: much faster, at some cost in accuracy.")
		r.line(0, "train = train.sample(frac=0.2, random_state=0).reset_index(drop=True)")
	}
	if c["features.missing"] == "drop_rows" {
		r.line(0, "# Drop training rows with any missing value (the test rows keep theirs).")
		r.line(0, "train = train.dropna().reset_index(drop=True)")
		r.line(0, `print(f"{len(train)} training rows without missing values")`)
	}
	r.blank()

	// The target.
	if cls {
		r.use("sklearn.preprocessing", "LabelEncoder")
		r.line(0, "# Labels as strings (whole numbers without a trailing .0), encoded 0..n-1 for the model.")
		r.line(0, "labels = train[TARGET]")
		r.line(0, "if pd.api.types.is_float_dtype(labels):")
		r.line(1, "labels = labels.map(lambda v: str(int(v)) if float(v).is_integer() else str(v))")
		r.line(0, "label_encoder = LabelEncoder()")
		r.line(0, "y = label_encoder.fit_transform(labels.astype(str))")
		r.line(0, "class_names = list(label_encoder.classes_)")
		r.line(0, "n_classes = len(class_names)")
		r.line(0, `print(f"{n_classes} classes, counts: {np.bincount(y).tolist()[:30]}")`)
		if p.Metric == "auc" {
			r.line(0, "positive = class_names.index(%s)  # the class whose probability is submitted", py(p.PositiveClass))
		}
	} else if r.ordReg {
		r.line(0, "# The classes are ordered whole numbers: learn them as a number and round the predictions.")
		r.line(0, "target_values = train[TARGET].to_numpy(dtype=float)")
		r.line(0, "y = target_values")
		r.line(0, "label_min, label_max = target_values.min(), target_values.max()")
	} else {
		tv := "train[TARGET].to_numpy(dtype=float)"
		if multi {
			tv = "train[TARGETS].to_numpy(dtype=float)"
		}
		r.line(0, "target_values = %s", tv)
		if c["target.transform"] == "log1p" {
			r.line(0, "# Learn log(1 + target): errors on large values stop dominating, as in the metric.")
			r.line(0, "y = np.log1p(target_values)")
		} else {
			r.line(0, "y = target_values")
		}
	}
	r.blank()

	r.features()
	r.model()
	r.validation()

	// Final fit on every row.
	r.line(0, "# Fit on every training row.")
	r.line(0, "fit_started = time.time()")
	r.line(0, "model.fit(X, y)")
	if r.hasSecond() {
		r.line(0, "second_model.fit(X, y)")
	}
	r.line(0, `print(f"fitted on {len(X)} rows in {time.time() - fit_started:.1f}s")`)
	r.blank()
	r.line(0, "# Score on rows the model has seen: optimistic, but shows whether it learned anything.")
	r.line(0, "seen = np.random.RandomState(0).permutation(len(X))[:2000]")
	r.line(0, "X_train_sample, y_train_sample = X.iloc[seen], y[seen]")
	r.predict(0, "X_train_sample", "train_sample_pred")
	r.line(0, "train_score = %s", r.metricExpr("y_train_sample", "train_sample_pred"))
	r.line(0, `print(f"training %s: {train_score:.5f}")`, p.Metric)
	r.blank()

	r.line(0, "# Predict the test rows and write the submission in the sample's format.")
	r.predict(0, "X_test", "test_pred")
	r.submission()

	var out strings.Builder
	out.WriteString(PlanLine(pl))
	out.WriteString(r.docstring(pl))
	out.WriteString("import os\nimport time\n\n")
	out.WriteString("# The threads this program may use (the runner sets OMP_NUM_THREADS to its share\n")
	out.WriteString("# of the cores); more threads than cores make OpenMP threads wait on each other.\n")
	out.WriteString("os.environ.setdefault(\"OMP_NUM_THREADS\", \"2\")\n")
	out.WriteString("N_JOBS = int(os.environ[\"OMP_NUM_THREADS\"])\n\n")
	out.WriteString(r.importBlock())
	out.WriteString("\n")
	for _, l := range r.body {
		out.WriteString(strings.TrimRight(l, " "))
		out.WriteByte('\n')
	}
	return out.String()
}

// PlanLine is a rendered program's first line: "# plan: " and the plan's key.
func PlanLine(pl *Plan) string { return "# plan: " + pl.Key() + "\n" }

func (r *renderer) docstring(pl *Plan) string {
	better := "higher is better"
	if lowerIsBetter(r.p.Metric) {
		better = "lower is better"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\"\"\"Solution for task %s (metric: %s, %s).\n\n", r.p.Name, r.p.Metric, better)
	b.WriteString(wrap(pl.describe(), 88))
	b.WriteString("\n\nPlan key: ")
	b.WriteString(wrap(strings.ReplaceAll(pl.Key(), ";", "; "), 88))
	b.WriteString("\n\"\"\"\n")
	return b.String()
}

// wrap breaks text into lines of at most width characters at spaces.
func wrap(s string, width int) string {
	var lines []string
	var cur strings.Builder
	for _, w := range strings.Fields(s) {
		if cur.Len() > 0 && cur.Len()+1+len(w) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return strings.Join(lines, "\n")
}

func (r *renderer) importBlock() string {
	var plain, from []string
	for mod, names := range r.imports {
		ns := make([]string, 0, len(names))
		for n := range names {
			ns = append(ns, n)
		}
		sort.Strings(ns)
		if mod == "" {
			for _, n := range ns {
				plain = append(plain, "import "+n)
			}
			continue
		}
		from = append(from, "from "+mod+" import "+strings.Join(ns, ", "))
	}
	sort.Strings(plain)
	sort.Strings(from)
	// time first, then third-party plain imports, then from-imports: the usual grouping.
	return strings.Join(plain, "\n") + "\n" + strings.Join(from, "\n") + "\n"
}

func (r *renderer) readExpr() string {
	switch r.c["read.loader"] {
	case "sniff":
		return `pd.read_csv(%s, sep=None, engine="python")`
	case "ascii":
		return `pd.read_csv(%s, encoding="ascii")`
	case "semicolon":
		return `pd.read_csv(%s, sep=";")`
	}
	return "pd.read_csv(%s)"
}

func (r *renderer) hasImages() bool {
	return r.c["features.columns"] == "typed" && r.p.HasImages()
}

func (r *renderer) imageLoader() {
	r.use("PIL", "Image")
	mode, scale, what := "L", " / 255.0", "grayscale, scaled to [0, 1]"
	switch r.c["features.image"] {
	case "gray_raw":
		scale, what = "", "grayscale, raw 0-255 values"
	case "rgb_scaled":
		mode, what = "RGB", "three colour channels, scaled to [0, 1]"
	}
	r.line(0, "def load_images(paths):")
	r.line(1, `"""Reads image files into one row of pixels each (%s)."""`, what)
	r.line(1, "rows = [np.asarray(Image.open(path).convert(%s), dtype=np.float32).ravel()%s for path in np.ravel(paths)]", py(mode), scale)
	r.line(1, "return np.stack(rows)")
	r.blank()
	r.blank()
}

// features writes the column selection and the preprocessing transformer.
func (r *renderer) features() {
	p, c := r.p, r.c
	exclude := "[ID_COLUMN, TARGET]"
	if p.TargetKind == MultiOutput {
		exclude = "[ID_COLUMN] + TARGETS"
	}
	switch c["features.columns"] {
	case "raw":
		r.line(0, "# Every column as it comes, no preprocessing.")
		r.line(0, "X = train.drop(columns=%s)", exclude)
		r.line(0, "X_test = test.drop(columns=[ID_COLUMN])")
		r.line(0, `print(f"features: {X.shape[1]} columns")`)
		r.blank()
		return
	}
	isTyped := c["features.columns"] == "typed"
	impute := c["features.missing"]
	imputing := impute == "mean" || impute == "median" || impute == "most_frequent"
	cats := p.Kinds(KindCategorical)
	texts := p.Kinds(KindText)
	catMode := c["features.categorical"]
	useCats := isTyped && len(cats) > 0 && catMode != "drop"
	useTexts := isTyped && len(texts) > 0

	if useCats && catMode == "get_dummies" {
		r.line(0, "# One-hot encode categorical columns with pandas, on each frame separately.")
		r.line(0, "categorical_columns = %s", pyList(cats))
		r.line(0, "train = pd.get_dummies(train, columns=categorical_columns, dtype=float)")
		r.line(0, "test = pd.get_dummies(test, columns=categorical_columns, dtype=float)")
		useCats = false // they are numeric columns now
	}
	if r.hasImages() {
		if p.ImagesByID {
			r.line(0, "# Each row's picture is data/images/<id>%s.", p.ImageExt)
			r.line(0, `train["image_path"] = "data/images/" + train[ID_COLUMN].astype(str) + %s`, py(p.ImageExt))
			r.line(0, `test["image_path"] = "data/images/" + test[ID_COLUMN].astype(str) + %s`, py(p.ImageExt))
		} else {
			col := p.Kinds(KindImage)[0]
			r.line(0, "# Image paths are relative to the data folder.")
			r.line(0, `train["image_path"] = "data/" + train[%s].astype(str)`, py(col))
			r.line(0, `test["image_path"] = "data/" + test[%s].astype(str)`, py(col))
		}
	}
	r.seriesFeatures()
	r.line(0, "numeric_columns = [c for c in train.columns if c not in %s and pd.api.types.is_numeric_dtype(train[c])]", exclude)
	var parts []string
	featureCols := "numeric_columns"
	if useCats {
		r.line(0, "categorical_columns = %s", pyList(cats))
		featureCols += " + categorical_columns"
	}
	if useTexts {
		r.line(0, "text_columns = %s", pyList(texts))
		featureCols += " + text_columns"
		if imputing {
			r.line(0, `train[text_columns] = train[text_columns].fillna("")`)
			r.line(0, `test[text_columns] = test[text_columns].fillna("")`)
		}
	}
	if r.hasImages() {
		featureCols += ` + ["image_path"]`
	}
	r.line(0, "X = train[%s]", featureCols)
	r.line(0, "X_test = test[%s]", featureCols)
	r.line(0, `print(f"features: {len(numeric_columns)} numeric%s%s%s")`,
		ifs(useCats, ", {len(categorical_columns)} categorical", ""),
		ifs(useTexts, ", {len(text_columns)} text", ""),
		ifs(r.hasImages(), ", images", ""))
	r.blank()

	// Preprocessing, fitted inside the model pipeline so validation is honest.
	r.use("sklearn.compose", "ColumnTransformer")
	var numSteps []string
	if imputing {
		r.use("sklearn.impute", "SimpleImputer")
		numSteps = append(numSteps, fmt.Sprintf("SimpleImputer(strategy=%s)", py(impute)))
	}
	if c["features.scaling"] == "standard" {
		r.use("sklearn.preprocessing", "StandardScaler")
		numSteps = append(numSteps, "StandardScaler()")
	}
	r.line(0, "# Preprocessing is part of the model, so it is fitted on training rows only.")
	r.line(0, "preprocess = ColumnTransformer([")
	parts = append(parts, fmt.Sprintf("(\"numeric\", %s, numeric_columns)", r.pipe(numSteps)))
	if useCats {
		var steps []string
		if imputing {
			steps = append(steps, `SimpleImputer(strategy="most_frequent")`)
		}
		if catMode == "ordinal" {
			r.use("sklearn.preprocessing", "OrdinalEncoder")
			steps = append(steps, `OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)`)
		} else {
			r.use("sklearn.preprocessing", "OneHotEncoder")
			steps = append(steps, `OneHotEncoder(handle_unknown="ignore")`)
		}
		parts = append(parts, fmt.Sprintf("(\"categorical\", %s, categorical_columns)", r.pipe(steps)))
	}
	if useTexts {
		vec := r.textVectoriser()
		for _, t := range texts {
			parts = append(parts, fmt.Sprintf("(%s, %s, %s)", py("text_"+t), vec, py(t)))
		}
	}
	if r.hasImages() {
		r.use("sklearn.preprocessing", "FunctionTransformer")
		steps := []string{"FunctionTransformer(load_images)"}
		if c["features.scaling"] == "standard" {
			steps = append(steps, "StandardScaler()")
		}
		parts = append(parts, fmt.Sprintf("(\"image\", %s, \"image_path\")", r.pipe(steps)))
	}
	for _, part := range parts {
		r.line(1, "%s,", part)
	}
	r.line(0, "])")
	r.blank()
}

// seriesFeatures replaces the columns of an ordered series (Profile.Series)
// by the transformation features.series chose, on both frames. Nothing in it
// is fitted, so doing it before validation splits is honest.
func (r *renderer) seriesFeatures() {
	mode := r.c["features.series"]
	if mode == "" || mode == "none" {
		return
	}
	stem, _ := r.p.Series()
	what := map[string]string{
		"diff1":     "its first differences (removes baseline shifts)",
		"diff2":     "its second differences (removes baseline shifts and slopes)",
		"snv_diff1": "the first differences of the row centred and scaled to unit variance (standard normal variate: removes scatter and baseline shifts)",
		"savgol":    "the series itself plus its Savitzky-Golay smoothed first and second derivatives (window 11, quadratic)",
	}[mode]
	r.line(0, "# The %s<n> columns are one ordered series per row (a spectrum or signal), in file order.", stem)
	r.line(0, "series_columns = [c for c in train.columns if c.startswith(%s) and c[%d:].isdigit()]", py(stem), len(stem))
	r.blank()
	r.blank()
	r.line(0, "def series_features(frame):")
	r.line(1, `"""Replaces each row's series by %s."""`, what)
	r.line(1, "values = frame[series_columns].to_numpy(dtype=float)")
	switch mode {
	case "diff1":
		r.line(1, "derived = np.diff(values, axis=1)")
	case "diff2":
		r.line(1, "derived = np.diff(values, n=2, axis=1)")
	case "snv_diff1":
		r.line(1, "centred = values - values.mean(axis=1, keepdims=True)")
		r.line(1, "scaled = centred / np.maximum(values.std(axis=1, keepdims=True), 1e-12)")
		r.line(1, "derived = np.diff(scaled, axis=1)")
	case "savgol":
		r.use("scipy.signal", "savgol_filter")
		r.line(1, "first = savgol_filter(values, window_length=11, polyorder=2, deriv=1, axis=1)")
		r.line(1, "second = savgol_filter(values, window_length=11, polyorder=2, deriv=2, axis=1)")
		r.line(1, "derived = np.hstack([values, first, second])")
	}
	r.line(1, `names = [f"series_{i}" for i in range(derived.shape[1])]`)
	r.line(1, "return pd.concat([frame.drop(columns=series_columns), pd.DataFrame(derived, columns=names, index=frame.index)], axis=1)")
	r.blank()
	r.blank()
	r.line(0, "train = series_features(train)")
	r.line(0, "test = series_features(test)")
	r.line(0, `print(f"{len(series_columns)} series columns -> {sum(c.startswith('series_') for c in train.columns)} derived")`)
}

func ifs(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

// pipe renders a list of steps as one transformer.
func (r *renderer) pipe(steps []string) string {
	switch len(steps) {
	case 0:
		return `"passthrough"`
	case 1:
		return steps[0]
	}
	r.use("sklearn.pipeline", "make_pipeline")
	return "make_pipeline(" + strings.Join(steps, ", ") + ")"
}

func (r *renderer) textVectoriser() string {
	maxF := r.c["features.text_max"]
	switch r.c["features.text"] {
	case "tfidf_word":
		r.use("sklearn.feature_extraction.text", "TfidfVectorizer")
		return fmt.Sprintf("TfidfVectorizer(max_features=%s, sublinear_tf=True)", maxF)
	case "tfidf_word_1_2":
		r.use("sklearn.feature_extraction.text", "TfidfVectorizer")
		return fmt.Sprintf("TfidfVectorizer(ngram_range=(1, 2), max_features=%s, sublinear_tf=True)", maxF)
	case "tfidf_char":
		r.use("sklearn.feature_extraction.text", "TfidfVectorizer")
		return fmt.Sprintf(`TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), max_features=%s, sublinear_tf=True)`, maxF)
	case "counts":
		r.use("sklearn.feature_extraction.text", "CountVectorizer")
		return fmt.Sprintf("CountVectorizer(max_features=%s)", maxF)
	case "tfidf_word_char":
		r.use("sklearn.feature_extraction.text", "TfidfVectorizer")
		r.use("sklearn.pipeline", "make_union")
		return fmt.Sprintf(`make_union(TfidfVectorizer(ngram_range=(1, 2), max_features=%s, sublinear_tf=True), `+
			`TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), max_features=%s, sublinear_tf=True))`, maxF, maxF)
	case "tfidf_word_char_cased":
		// Case kept: capitalised names and spelling habits tell authors and
		// sources apart; plain character n-grams also see punctuation runs.
		r.use("sklearn.feature_extraction.text", "TfidfVectorizer")
		r.use("sklearn.pipeline", "make_union")
		return fmt.Sprintf(`make_union(TfidfVectorizer(ngram_range=(1, 2), lowercase=False, max_features=%s, sublinear_tf=True), `+
			`TfidfVectorizer(analyzer="char", ngram_range=(1, 5), lowercase=False, max_features=%s, sublinear_tf=True))`, maxF, maxF)
	default: // hashing: the feature count is the next power of two
		r.use("sklearn.feature_extraction.text", "HashingVectorizer")
		n, _ := strconv.Atoi(maxF)
		bits := 1
		for 1<<bits < n {
			bits++
		}
		return fmt.Sprintf("HashingVectorizer(n_features=2**%d, alternate_sign=False)", bits)
	}
}

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

// estimator renders a constructor call for a family with hyperparameters hp.
func (r *renderer) estimator(fam string, hp choices) string {
	cls := r.cls
	f := families[fam]
	name, mod := f.regressor, f.regressorMod
	if cls {
		name, mod = f.classifier, f.classifierMod
	}
	var args []string
	switch fam {
	case "logistic":
		args = []string{"C=" + hp["logistic.C"], "max_iter=" + hp["logistic.max_iter"]}
	case "ridge":
		args = []string{"alpha=" + hp["ridge.alpha"]}
	case "random_forest", "extra_trees":
		depth := hp["forest.max_depth"]
		if depth == "none" {
			depth = "None"
		}
		args = []string{"n_estimators=" + hp["forest.n_estimators"], "max_depth=" + depth, "n_jobs=N_JOBS", "random_state=0"}
	case "hist_gb":
		args = []string{"max_iter=" + hp["hgb.max_iter"], "learning_rate=" + hp["hgb.learning_rate"],
			"max_leaf_nodes=" + hp["hgb.max_leaf_nodes"], "random_state=0"}
	case "gradient_boosting":
		args = []string{"n_estimators=" + hp["gb.n_estimators"], "learning_rate=" + hp["gb.learning_rate"],
			"max_depth=" + hp["gb.max_depth"], "random_state=0"}
	case "xgboost":
		args = []string{"n_estimators=" + hp["xgb.n_estimators"], "learning_rate=" + hp["xgb.learning_rate"],
			"max_depth=" + hp["xgb.max_depth"], "subsample=" + hp["xgb.subsample"], `tree_method="hist"`, "n_jobs=N_JOBS", "random_state=0"}
	case "knn":
		args = []string{"n_neighbors=" + hp["knn.n_neighbors"], "weights=" + py(hp["knn.weights"]), "n_jobs=N_JOBS"}
	case "linear_svm":
		args = []string{"C=" + hp["svm.C"]}
	case "svm_rbf":
		args = []string{"C=" + hp["svm.C"]}
		if cls && r.p.NeedsProba() {
			// Platt scaling inside SVC: five extra internal fits, but probabilities.
			args = append(args, "probability=True", "random_state=0")
		}
	case "mlp":
		hidden := map[string]string{"64": "(64,)", "256": "(256,)", "256_128": "(256, 128)"}[hp["mlp.hidden"]]
		args = []string{"hidden_layer_sizes=" + hidden, "max_iter=" + hp["mlp.max_iter"], "random_state=0"}
	case "naive_bayes":
		switch hp["nb.variant"] {
		case "multinomial":
			name = "MultinomialNB"
		case "bernoulli":
			name = "BernoulliNB"
		case "complement":
			name = "ComplementNB"
		}
	case "kernel_ridge":
		args = []string{`kernel="rbf"`}
		if hp["kernel_ridge.kernel"] == "poly2" {
			args = []string{`kernel="poly"`, "degree=2"}
		}
		var grid []string // the "cv" values' search space
		for _, h := range []string{"alpha", "gamma"} {
			if v := hp["kernel_ridge."+h]; v != "cv" {
				args = append(args, h+"="+v)
			} else {
				grid = append(grid, py(h)+": "+krrGrid[h])
			}
		}
		if len(grid) > 0 {
			// Searched inside the per-target wrapper, so each target gets its own values.
			r.use(mod, name)
			r.use("sklearn.model_selection", "GridSearchCV")
			r.use("sklearn.model_selection", "KFold")
			return fmt.Sprintf(`GridSearchCV(%s(%s), {%s}, cv=KFold(n_splits=5, shuffle=True, random_state=0), scoring="neg_mean_squared_error")`,
				name, strings.Join(args, ", "), strings.Join(grid, ", "))
		}
	case "pls":
		// scale=False: the features are standardised (or not) by the plan's own scaling.
		args = []string{"n_components=" + hp["pls.n_components"], "scale=False"}
	}
	r.use(mod, name)
	return name + "(" + strings.Join(args, ", ") + ")"
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
		if r.cls {
			return "logistic"
		}
		return "ridge"
	}
	return fam
}

func (r *renderer) ensemble() bool { return r.c["ensemble"] == "average" }

// pooled says naive Bayes on word counts is pooled with the model's
// probabilities (ensemble=nb_loglinear).
func (r *renderer) pooled() bool { return r.c["ensemble"] == "nb_loglinear" }

// hasSecond says a second model is fitted beside the first.
func (r *renderer) hasSecond() bool { return r.ensemble() || r.pooled() }

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

func (r *renderer) model() {
	raw := r.c["features.columns"] == "raw"
	if raw {
		r.line(0, "# The model.")
	} else {
		r.line(0, "# The model: preprocessing followed by the estimator.")
	}
	r.line(0, "estimator = %s", r.wrapEstimator(r.estimator(r.c["model.family"], r.c)))
	if raw {
		r.line(0, "model = estimator")
	} else {
		r.use("sklearn.pipeline", "make_pipeline")
		r.line(0, "model = make_pipeline(preprocess, estimator)")
	}
	if r.pooled() {
		r.use("sklearn.feature_extraction.text", "CountVectorizer")
		r.use("sklearn.naive_bayes", "MultinomialNB")
		r.line(0, "# Multinomial naive Bayes on word 1-2-gram counts (case kept), its class probabilities pooled")
		r.line(0, "# log-linearly with the model's: over-confident alone, it adds the evidence of rare words.")
		r.line(0, "second_model = make_pipeline(ColumnTransformer([")
		for _, t := range r.p.Kinds(KindText) {
			r.line(1, `(%s, CountVectorizer(ngram_range=(1, 2), lowercase=False), %s),`, py("counts_"+t), py(t))
		}
		r.line(0, "]), MultinomialNB(alpha=0.1))")
		r.line(0, "nb_weight = %s", r.c["ensemble.nb_weight"])
	}
	if r.ensemble() {
		r.line(0, "# A second, different model; the two predictions are averaged.")
		r.line(0, "second_estimator = %s", r.wrapEstimator(r.estimator(r.secondFamily(), secondHyper)))
		if raw {
			r.line(0, "second_model = second_estimator")
		} else {
			r.use("sklearn.base", "clone")
			r.line(0, "second_model = make_pipeline(clone(preprocess), second_estimator)")
		}
	}
	r.blank()
}

// needsProba says predictions are made through predict_proba: probability
// metrics, and averaging two classifiers.
func (r *renderer) needsProba() bool {
	return r.cls && (r.p.NeedsProba() || r.hasSecond())
}

// predict writes the statements that turn fitted model(s) and features xVar
// into out, in the submission's form (encoded labels, the positive class's
// probability, a full probability matrix, or target values).
func (r *renderer) predict(indent int, xVar, out string) {
	p := r.p
	if r.cls {
		if r.needsProba() {
			mat := out + "_proba"
			r.line(indent, "proba = model.predict_proba(%s)", xVar)
			r.line(indent, "%s = np.zeros((len(proba), n_classes))", mat)
			share := ""
			if r.ensemble() {
				share = " / 2"
			}
			r.line(indent, "%s[:, model.classes_] += proba%s", mat, share)
			if r.ensemble() {
				r.line(indent, "second_proba = second_model.predict_proba(%s)", xVar)
				r.line(indent, "%s[:, second_model.classes_] += second_proba / 2", mat)
			}
			if r.pooled() {
				r.line(indent, "nb_proba = np.zeros((len(proba), n_classes))")
				r.line(indent, "nb_proba[:, second_model.classes_] = second_model.predict_proba(%s)", xVar)
				r.line(indent, "log_pool = (1 - nb_weight) * np.log(np.clip(%s, 1e-15, 1)) + nb_weight * np.log(np.clip(nb_proba, 1e-15, 1))", mat)
				r.line(indent, "%s = np.exp(log_pool - log_pool.max(axis=1, keepdims=True))", mat)
				if p.Metric == "log_loss" {
					r.line(indent, "# Pooling sharpens: keep every class at least 1e-4 so one confident miss costs at most log(1e4).")
					r.line(indent, "%s = np.clip(%s / %s.sum(axis=1, keepdims=True), 1e-4, 1)", mat, mat, mat)
				}
				r.line(indent, "%s /= %s.sum(axis=1, keepdims=True)", mat, mat)
			}
			switch p.Metric {
			case "auc":
				r.line(indent, "%s = %s[:, positive]", out, mat)
			case "log_loss":
				r.line(indent, "%s = %s", out, mat)
			default:
				r.line(indent, "%s = %s.argmax(axis=1)", out, mat)
			}
			return
		}
		r.line(indent, "%s = model.predict(%s)", out, xVar)
		return
	}
	r.line(indent, "%s = model.predict(%s)", out, xVar)
	if r.c["model.family"] == "pls" && p.TargetKind != MultiOutput {
		r.line(indent, "%s = np.ravel(%s)  # PLSRegression predicts a column", out, out)
	}
	if r.ensemble() {
		r.line(indent, "second_pred = second_model.predict(%s)", xVar)
		r.line(indent, "%s = (%s + second_pred) / 2", out, out)
	}
	if r.c["target.transform"] == "log1p" {
		r.line(indent, "%s = np.expm1(%s)", out, out)
	}
	if p.Metric == "rmsle" || p.Metric == "mean_column_rmsle" {
		r.line(indent, "%s = np.clip(%s, 0, None)  # the metric takes log(1 + prediction)", out, out)
	}
	if r.ordReg {
		r.line(indent, "%s = np.clip(np.rint(%s), label_min, label_max).astype(int)", out, out)
	}
}

// metricExpr is the task's metric on encoded truth yVar and prediction out.
func (r *renderer) metricExpr(yVar, out string) string {
	truth := yVar
	if !r.p.IsClassification() && r.c["target.transform"] == "log1p" {
		truth = "np.expm1(" + yVar + ")"
	}
	switch r.p.Metric {
	case "auc":
		r.use("sklearn.metrics", "roc_auc_score")
		return fmt.Sprintf("roc_auc_score(%s == positive, %s)", yVar, out)
	case "log_loss":
		r.use("sklearn.metrics", "log_loss")
		return fmt.Sprintf("log_loss(%s, %s, labels=np.arange(n_classes))", yVar, out)
	case "accuracy":
		r.use("sklearn.metrics", "accuracy_score")
		return fmt.Sprintf("accuracy_score(%s, %s)", yVar, out)
	case "qwk":
		r.use("sklearn.metrics", "cohen_kappa_score")
		if r.ordReg {
			return fmt.Sprintf(`cohen_kappa_score(%s.astype(int), %s, weights="quadratic")`, yVar, out)
		}
		// Kappa on the original labels: the encoded order is string order.
		return fmt.Sprintf(`cohen_kappa_score(label_encoder.classes_[%s].astype(float), label_encoder.classes_[%s].astype(float), weights="quadratic")`, yVar, out)
	case "rmse":
		r.use("sklearn.metrics", "mean_squared_error")
		return fmt.Sprintf("np.sqrt(mean_squared_error(%s, %s))", truth, out)
	case "mae":
		r.use("sklearn.metrics", "mean_absolute_error")
		return fmt.Sprintf("mean_absolute_error(%s, %s)", truth, out)
	case "rmsle":
		r.use("sklearn.metrics", "mean_squared_log_error")
		return fmt.Sprintf("np.sqrt(mean_squared_log_error(%s, %s))", truth, out)
	case "mean_column_rmse":
		r.use("sklearn.metrics", "mean_squared_error")
		return fmt.Sprintf(`np.mean(np.sqrt(mean_squared_error(%s, %s, multioutput="raw_values")))`, truth, out)
	case "mean_column_rmsle":
		r.use("sklearn.metrics", "mean_squared_log_error")
		return fmt.Sprintf(`np.mean(np.sqrt(mean_squared_log_error(%s, %s, multioutput="raw_values")))`, truth, out)
	case "pearson":
		return fmt.Sprintf("np.corrcoef(%s, %s)[0, 1]", truth, out)
	}
	return "float('nan')"
}

func (r *renderer) validation() {
	metric := r.p.Metric
	switch r.c["validation"] {
	case "holdout":
		r.use("sklearn.model_selection", "train_test_split")
		r.line(0, "# Hold out a fifth of the training rows to estimate the test score.")
		r.line(0, "X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.2, random_state=0)")
		r.line(0, "model.fit(X_train, y_train)")
		if r.hasSecond() {
			r.line(0, "second_model.fit(X_train, y_train)")
		}
		r.predict(0, "X_valid", "valid_pred")
		r.line(0, "valid_score = %s", r.metricExpr("y_valid", "valid_pred"))
		r.line(0, `print(f"validation %s: {valid_score:.5f}")`, metric)
		r.blank()
	case "cv5":
		split := "KFold"
		if r.cls {
			split = "StratifiedKFold"
		}
		r.use("sklearn.model_selection", split)
		r.line(0, "# 5-fold cross-validation to estimate the test score.")
		r.line(0, "folds = %s(n_splits=5, shuffle=True, random_state=0)", split)
		r.line(0, "fold_scores = []")
		r.line(0, "for fold, (train_index, valid_index) in enumerate(folds.split(X, y)):")
		r.line(1, "X_train, X_valid = X.iloc[train_index], X.iloc[valid_index]")
		r.line(1, "y_train, y_valid = y[train_index], y[valid_index]")
		r.line(1, "model.fit(X_train, y_train)")
		if r.hasSecond() {
			r.line(1, "second_model.fit(X_train, y_train)")
		}
		r.predict(1, "X_valid", "valid_pred")
		r.line(1, "fold_score = %s", r.metricExpr("y_valid", "valid_pred"))
		r.line(1, "fold_scores.append(fold_score)")
		r.line(1, `print(f"fold {fold + 1}: %s {fold_score:.5f}")`, metric)
		r.line(0, `print(f"cross-validated %s: {np.mean(fold_scores):.5f} +/- {np.std(fold_scores):.5f}")`, metric)
		r.blank()
	}
}

func (r *renderer) submission() {
	p := r.p
	r.line(0, "submission = pd.DataFrame({ID_COLUMN: test[ID_COLUMN]})")
	switch {
	case p.Metric == "log_loss":
		r.line(0, "# One probability column per class, in the sample submission's order.")
		r.line(0, "for column in sample_submission.columns[1:]:")
		r.line(1, "submission[column] = test_pred[:, class_names.index(column)] if column in class_names else 0.0")
	case p.Metric == "auc", r.ordReg:
		r.line(0, "submission[sample_submission.columns[1]] = test_pred")
	case p.IsClassification():
		r.line(0, "submission[sample_submission.columns[1]] = label_encoder.inverse_transform(test_pred)")
	case p.TargetKind == MultiOutput:
		r.line(0, "for i, column in enumerate(TARGETS):")
		r.line(1, "submission[column] = test_pred[:, i]")
		r.line(0, "submission = submission[list(sample_submission.columns)]")
	default:
		r.line(0, "submission[sample_submission.columns[1]] = test_pred")
	}
	r.line(0, `submission.to_csv("submission.csv", index=False)`)
	r.line(0, `print(f"wrote submission.csv: {len(submission)} rows, {time.time() - started:.1f}s in all")`)
}

// Describe is the plan in 3-5 English sentences, without task context.
func (pl *Plan) Describe() string { return pl.describe() }

func (pl *Plan) describe() string {
	c := choices{}
	for _, ch := range pl.Choices {
		c[ch.Name] = ch.Value
	}
	var s []string

	loader := map[string]string{
		"default": "with pandas' default settings", "sniff": "with pandas' python engine sniffing the separator",
		"ascii": "as ASCII text", "semicolon": "with ';' as the separator",
	}[c["read.loader"]]
	rows := map[string]string{"all": "all training rows", "half": "a random half of the training rows", "fifth": "a random fifth of the training rows"}[c["read.rows"]]
	s = append(s, fmt.Sprintf("Read the CSV files %s and train on %s.", loader, rows))

	switch c["features.columns"] {
	case "raw":
		s = append(s, "Give the model every column as it comes, without preprocessing.")
	default:
		var f []string
		what := "Use the numeric columns"
		if c["features.columns"] == "numeric_only" {
			what = "Use only the numeric columns"
		}
		missing := map[string]string{
			"none": "leaving missing values as they are", "drop_rows": "dropping training rows with missing values",
			"mean": "imputing missing values with the mean", "median": "imputing missing values with the median",
			"most_frequent": "imputing missing values with the most frequent value",
		}[c["features.missing"]]
		f = append(f, what+" ("+missing+")")
		if v := c["features.categorical"]; v != "" {
			f = append(f, map[string]string{
				"onehot": "one-hot encode categorical columns", "get_dummies": "one-hot encode categorical columns with pandas' get_dummies on each file",
				"ordinal": "encode categorical columns as integers", "drop": "drop categorical columns",
			}[v])
		}
		if v := c["features.text"]; v != "" {
			f = append(f, fmt.Sprintf("turn text into %s (at most %s features)", map[string]string{
				"tfidf_word": "TF-IDF word unigrams", "tfidf_word_1_2": "TF-IDF word unigrams and bigrams",
				"tfidf_char": "TF-IDF character 2-5-grams", "counts": "word counts", "hashing": "hashed word counts",
				"tfidf_word_char":       "TF-IDF word 1-2-grams and character 2-5-grams side by side",
				"tfidf_word_char_cased": "case-sensitive TF-IDF word 1-2-grams and character 1-5-grams side by side",
			}[v], c["features.text_max"]))
		}
		if v := c["features.series"]; v != "" && v != "none" {
			f = append(f, map[string]string{
				"diff1":     "replace the ordered series columns by their first differences",
				"diff2":     "replace the ordered series columns by their second differences",
				"snv_diff1": "replace the ordered series columns by first differences of each row standardised (SNV)",
				"savgol":    "add Savitzky-Golay first and second derivatives of the ordered series columns",
			}[v])
		}
		if v := c["features.image"]; v != "" {
			f = append(f, map[string]string{
				"gray_scaled": "read images as grayscale pixels in [0, 1]", "gray_raw": "read images as raw grayscale pixel values",
				"rgb_scaled": "read images as RGB pixels in [0, 1]",
			}[v])
		}
		if c["features.scaling"] == "standard" {
			f = append(f, "standardise the features")
		}
		s = append(s, joinClauses(f)+".")
	}

	fam := c["model.family"]
	m := "Train " + article(families[fam].describe) + " " + families[fam].describe + " model" + hyperText(fam, c)
	if c["model.multioutput"] == "per_target" {
		m += ", one per target"
	}
	if v := c["calibration"]; v == "sigmoid" || v == "isotonic" {
		m += ", with " + v + " probability calibration"
	}
	if c["target.transform"] == "log1p" {
		m += ", on log(1 + target)"
	}
	if c["target.ordinal"] == "regression" {
		m += ", as a regression on the class number with rounded predictions"
	}
	s = append(s, m+".")
	if c["ensemble"] == "average" {
		second := c["ensemble.second"]
		name := "a linear model"
		if second != "linear" {
			name = article(families[second].describe) + " " + families[second].describe + " model"
		}
		s = append(s, "Average its predictions with those of "+name+".")
	}
	if c["ensemble"] == "nb_loglinear" {
		s = append(s, "Pool its class probabilities log-linearly with those of a multinomial naive Bayes model on word 1-2-gram counts (weight "+c["ensemble.nb_weight"]+").")
	}
	switch c["validation"] {
	case "holdout":
		s = append(s, "Print a score on a 20% holdout, then refit on all rows and write submission.csv.")
	case "cv5":
		s = append(s, "Print a 5-fold cross-validated score, then refit on all rows and write submission.csv.")
	default:
		s = append(s, "Skip validation and write submission.csv.")
	}
	return strings.Join(s, " ")
}

func joinClauses(f []string) string {
	switch len(f) {
	case 0:
		return ""
	case 1:
		return f[0]
	}
	return strings.Join(f[:len(f)-1], ", ") + " and " + f[len(f)-1]
}

func article(w string) string {
	if w != "" && strings.ContainsRune("aeiouAEIOUX", rune(w[0])) { // "an XGBoost": said "ex"
		return "an"
	}
	return "a"
}

func hyperText(fam string, c choices) string {
	hp := familyHyper[fam]
	if len(hp) == 0 {
		return ""
	}
	if fam == "naive_bayes" {
		return " (" + c["nb.variant"] + ")"
	}
	var parts []string
	for _, h := range hp {
		name := strings.ReplaceAll(h[strings.IndexByte(h, '.')+1:], "_", " ")
		if c[h] == "cv" {
			parts = append(parts, name+" chosen by 5-fold cross-validation")
			continue
		}
		parts = append(parts, name+" "+c[h])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
