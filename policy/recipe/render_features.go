package recipe

import (
	"fmt"
	"strconv"
	"strings"
)

// featureColumns is which typed columns a plan uses and how.
type featureColumns struct {
	Categorical    []string // the task's categorical columns of few levels
	HighCard       []string // the task's categorical columns of many levels
	Text           []string // the text columns the pipeline vectorises (one joined column, when joined)
	TextSources    []string // the task's text columns
	NotNumeric     []string // columns pandas reads as numbers that are ids or labels, not quantities
	Labels         []string // the categorical ones among them, used as features: turned into strings
	Dummies        bool     // categorical columns one-hot encoded by pandas before the split
	UseCategorical bool     // categorical columns encoded in the pipeline
	UseHighCard    bool     // high-cardinality columns encoded in the pipeline
	UseText        bool     // text columns vectorised in the pipeline
	Joined         bool     // the text columns joined into one before vectorising
	Imputing       bool     // missing values imputed
	Selected       string   // the Python expression listing X's columns
}

// Columns works out the feature columns of a plan that does not use raw columns.
func (r *renderer) Columns() featureColumns {
	typed := r.c["features.columns"] == "typed"
	impute := r.c["features.missing"]
	catMode := r.c["features.categorical"]
	f := featureColumns{
		Categorical: r.P.Categorical(false),
		HighCard:    r.P.Categorical(true),
		Text:        r.TextColumns(),
		TextSources: r.P.Kinds(KindText),
		NotNumeric:  r.notNumeric(),
		Joined:      r.c["features.text_columns"] == "joined",
		Imputing:    impute == "mean" || impute == "median" || impute == "most_frequent",
	}
	useCats := typed && len(f.Categorical) > 0 && catMode != "drop"
	f.Dummies = useCats && catMode == "get_dummies" // then they are numeric columns
	f.UseCategorical = useCats && !f.Dummies
	f.UseHighCard = typed && len(f.HighCard) > 0 && r.c["features.high_card"] != "drop"
	f.UseText = typed && len(f.Text) > 0
	for _, c := range r.P.Columns {
		used := !c.HighCardinality && useCats || c.HighCardinality && f.UseHighCard
		if c.PandasNumeric && c.Kind == KindCategorical && used {
			f.Labels = append(f.Labels, c.Name)
		}
	}
	f.Selected = "numeric_columns"
	if f.UseCategorical {
		f.Selected += " + categorical_columns"
	}
	if f.UseHighCard {
		f.Selected += " + high_card_columns"
	}
	if f.UseText {
		f.Selected += " + text_columns"
	}
	if r.HasImages() {
		f.Selected += ` + ["image_path"]`
	}
	return f
}

// notNumeric are the columns pandas reads as numbers or booleans whose kind
// is not numeric (ids, id-like labels, TRUE/FALSE categories): left to the
// dtype, they would be numeric features, and a categorical one selected
// twice.
func (r *renderer) notNumeric() []string {
	var out []string
	for _, c := range r.P.Columns {
		if c.PandasNumeric && c.Kind != KindNumeric && c.Kind != KindID && c.Kind != KindTarget {
			out = append(out, c.Name)
		}
	}
	return out
}

// DateFormats is the Python dict of the date columns and their strptime
// formats when the plan turns dates into numbers, "" otherwise.
func (r *renderer) DateFormats() string {
	if r.Raw() || r.c["features.dates"] != "parts" {
		return ""
	}
	var items []string
	for _, c := range r.P.Columns {
		if c.Kind == KindDate {
			items = append(items, py(c.Name)+": "+py(c.DateFormat))
		}
	}
	return "{" + strings.Join(items, ", ") + "}"
}

// Preprocess lists the ColumnTransformer's parts: numeric columns, then
// categorical, text and image columns when f uses them.
func (r *renderer) Preprocess(f featureColumns) []string {
	r.use("sklearn.compose", "ColumnTransformer")
	var num []string
	if f.Imputing {
		r.use("sklearn.impute", "SimpleImputer")
		num = append(num, fmt.Sprintf("SimpleImputer(strategy=%s)", py(r.c["features.missing"])))
	}
	if r.c["features.scaling"] == "standard" {
		r.use("sklearn.preprocessing", "StandardScaler")
		num = append(num, "StandardScaler()")
	}
	numeric := r.pipe(num)
	if len(num) == 0 {
		// Not "passthrough": scikit-learn 1.2 passes an empty selection
		// through as an object-typed block, which fails a sparse output
		// (text n-grams with no numeric column: "For a sparse output, all
		// columns should be a numeric"); an identity transformer is skipped
		// when it selects nothing, as any estimator is.
		r.use("sklearn.preprocessing", "FunctionTransformer")
		numeric = "FunctionTransformer()"
	}
	parts := []string{fmt.Sprintf("(\"numeric\", %s, numeric_columns)", numeric)}
	if f.UseCategorical {
		parts = append(parts, fmt.Sprintf("(\"categorical\", %s, categorical_columns)", r.pipe(r.categoricalSteps(f))))
	}
	if f.UseHighCard {
		parts = append(parts, fmt.Sprintf("(\"high_cardinality\", %s, high_card_columns)", r.pipe(r.highCardSteps(f))))
	}
	if f.UseText {
		vec := r.textVectoriser()
		for _, t := range f.Text {
			parts = append(parts, fmt.Sprintf("(%s, %s, %s)", py("text_"+t), vec, py(t)))
		}
	}
	if r.HasImages() {
		r.use("sklearn.preprocessing", "FunctionTransformer")
		steps := []string{"FunctionTransformer(load_images)"}
		if r.c["features.scaling"] == "standard" {
			steps = append(steps, "StandardScaler()")
		}
		parts = append(parts, fmt.Sprintf("(\"image\", %s, \"image_path\")", r.pipe(steps)))
	}
	return parts
}

// categoricalSteps impute (when the plan imputes) and encode categorical columns.
func (r *renderer) categoricalSteps(f featureColumns) []string {
	var steps []string
	if f.Imputing {
		steps = append(steps, `SimpleImputer(strategy="most_frequent")`)
	}
	if r.c["features.categorical"] == "ordinal" {
		r.use("sklearn.preprocessing", "OrdinalEncoder")
		return append(steps, `OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)`)
	}
	r.use("sklearn.preprocessing", "OneHotEncoder")
	return append(steps, `OneHotEncoder(handle_unknown="ignore")`)
}

// highCardSteps encode the high-cardinality columns as features.high_card says.
func (r *renderer) highCardSteps(f featureColumns) []string {
	var steps []string
	mode := r.c["features.high_card"]
	if f.Imputing && mode != "target_mean" { // the mean target per level treats missing as a level
		steps = append(steps, `SimpleImputer(strategy="most_frequent")`)
	}
	switch mode {
	case "onehot_grouped":
		r.use("sklearn.preprocessing", "OneHotEncoder")
		return append(steps, `OneHotEncoder(min_frequency=5, handle_unknown="infrequent_if_exist")`)
	case "ordinal":
		r.use("sklearn.preprocessing", "OrdinalEncoder")
		return append(steps, `OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)`)
	}
	steps = append(steps, fmt.Sprintf("TargetMeanEncoder(per_class=%s)", pyBool(r.Cls)))
	if r.c["features.scaling"] == "standard" {
		r.use("sklearn.preprocessing", "StandardScaler")
		steps = append(steps, "StandardScaler()")
	}
	return steps
}

// TargetMean says the program defines TargetMeanEncoder.
func (r *renderer) TargetMean() bool {
	return !r.Raw() && r.c["features.columns"] == "typed" && r.P.HasHighCardinality() && r.c["features.high_card"] == "target_mean"
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
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

// vectorisers are the features.text options' constructors; %[1]s is
// features.text_max. Case kept (cased): capitalised names and spelling habits
// tell authors and sources apart; plain character n-grams also see
// punctuation runs.
var vectorisers = map[string]string{
	"tfidf_word":     "TfidfVectorizer(max_features=%[1]s, sublinear_tf=True)",
	"tfidf_word_1_2": "TfidfVectorizer(ngram_range=(1, 2), max_features=%[1]s, sublinear_tf=True)",
	"tfidf_char":     `TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), max_features=%[1]s, sublinear_tf=True)`,
	"counts":         "CountVectorizer(max_features=%[1]s)",
	"tfidf_word_char": `make_union(TfidfVectorizer(ngram_range=(1, 2), max_features=%[1]s, sublinear_tf=True), ` +
		`TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), max_features=%[1]s, sublinear_tf=True))`,
	"tfidf_word_char_cased": `make_union(TfidfVectorizer(ngram_range=(1, 2), lowercase=False, max_features=%[1]s, sublinear_tf=True), ` +
		`TfidfVectorizer(analyzer="char", ngram_range=(1, 5), lowercase=False, max_features=%[1]s, sublinear_tf=True))`,
}

// hashingBits is the hashing vectoriser's log2 feature count for a
// features.text_max of n: the next power of two (the cost model prices the
// same count).
func hashingBits(n int) int {
	bits := 1
	for 1<<bits < n {
		bits++
	}
	return bits
}

// textVectoriser is the constructor turning one text column into features.
func (r *renderer) textVectoriser() string {
	maxF := r.c["features.text_max"]
	format, ok := vectorisers[r.c["features.text"]]
	if !ok { // hashing: the feature count is the next power of two
		r.use("sklearn.feature_extraction.text", "HashingVectorizer")
		n, _ := strconv.Atoi(maxF)
		return fmt.Sprintf("HashingVectorizer(n_features=2**%d, alternate_sign=False)", hashingBits(n))
	}
	for _, name := range []string{"TfidfVectorizer", "CountVectorizer"} {
		if strings.Contains(format, name+"(") {
			r.use("sklearn.feature_extraction.text", name)
		}
	}
	if strings.HasPrefix(format, "make_union(") {
		r.use("sklearn.pipeline", "make_union")
	}
	return fmt.Sprintf(format, maxF)
}
