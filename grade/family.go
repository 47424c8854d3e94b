package grade

import "fmt"

// Problem is what a metric asks a model to learn.
type Problem string

const (
	Classification Problem = "classification" // labels or class probabilities
	Regression     Problem = "regression"     // numbers
	TextMatch      Problem = "text"           // free text compared with the answer's
)

// Prediction is what one submitted cell holds.
type Prediction string

const (
	Label       Prediction = "label"       // a class label as written in the training data
	Integer     Prediction = "integer"     // an ordered integer label, scored by its distance to the truth
	Probability Prediction = "probability" // a probability in [0, 1]
	Number      Prediction = "number"      // a real number
	Text        Prediction = "text"        // free text
)

// Columns is how many prediction columns a submission has besides the id.
type Columns string

const (
	OneColumn       Columns = "one"        // a single target column
	ColumnPerClass  Columns = "per_class"  // one probability column per class
	ColumnPerTarget Columns = "per_target" // one column per target, one or more
)

// Family describes a metric for whoever writes submissions for it: what
// kind of problem it scores, what a prediction is, how many columns a
// submission has and which way is better. Programs and prompts consult it
// instead of keeping their own lists of metric names.
type Family struct {
	Metric        string
	LowerIsBetter bool
	Problem       Problem
	Prediction    Prediction
	Columns       Columns
	// LogScale is set when the metric compares log(1 + value): predictions
	// and answers must be greater than -1.
	LogScale bool
	// Note says in one sentence what the metric is and what a valid
	// prediction looks like (the LLM policy's prompt quotes it).
	Note string
}

// Probabilities says the metric scores probabilities rather than labels or values.
func (f Family) Probabilities() bool { return f.Prediction == Probability }

// Ordinal says the labels are ordered integers scored by their distance (qwk).
func (f Family) Ordinal() bool { return f.Prediction == Integer }

// metricFamilies are every metric's Family but its direction, which metricTable keeps.
var metricFamilies = map[string]Family{
	"auc": {Problem: Classification, Prediction: Probability, Columns: OneColumn,
		Note: "It is the ROC AUC of the predicted probability of the positive class: predict a number in [0, 1] per row, not a hard label."},
	"mean_column_auc": {Problem: Classification, Prediction: Probability, Columns: ColumnPerTarget,
		Note: "It is the mean ROC AUC over the target columns: predict a probability in [0, 1] for each column."},
	"accuracy": {Problem: Classification, Prediction: Label, Columns: OneColumn,
		Note: "It is the share of rows whose predicted label equals the true one: predict labels written exactly as in the training data."},
	"log_loss": {Problem: Classification, Prediction: Probability, Columns: ColumnPerClass,
		Note: "It is the multi-class log loss: one probability column per class, each in [0, 1], each row summing to 1."},
	"rmse": {Problem: Regression, Prediction: Number, Columns: OneColumn,
		Note: "It is the root mean squared error of a numeric prediction."},
	"mae": {Problem: Regression, Prediction: Number, Columns: OneColumn,
		Note: "It is the mean absolute error of a numeric prediction."},
	"mean_column_rmse": {Problem: Regression, Prediction: Number, Columns: ColumnPerTarget,
		Note: "It is the root mean squared error averaged over the target columns."},
	"rmsle": {Problem: Regression, Prediction: Number, Columns: OneColumn, LogScale: true,
		Note: "It is the root mean squared logarithmic error: predictions must be greater than -1."},
	"mean_column_rmsle": {Problem: Regression, Prediction: Number, Columns: ColumnPerTarget, LogScale: true,
		Note: "It is the root mean squared logarithmic error averaged over the target columns: predictions must be greater than -1."},
	"qwk": {Problem: Classification, Prediction: Integer, Columns: OneColumn,
		Note: "It is the quadratic weighted kappa between integer labels: predict integers."},
	"pearson": {Problem: Regression, Prediction: Number, Columns: OneColumn,
		Note: "It is the Pearson correlation between prediction and truth."},
	"jaccard": {Problem: TextMatch, Prediction: Text, Columns: OneColumn,
		Note: "It is the mean Jaccard similarity between the sets of lower-cased words predicted and true: predict text."},
}

// FamilyOf describes metric; it is an error for a metric the grader does not know.
func FamilyOf(metric string) (Family, error) {
	m, err := lookupMetric(metric)
	if err != nil {
		return Family{}, err
	}
	f, ok := metricFamilies[metric]
	if !ok {
		return Family{}, fmt.Errorf("metric %q has no family (grade/family.go)", metric)
	}
	f.Metric, f.LowerIsBetter = metric, m.lowerIsBetter
	return f, nil
}
