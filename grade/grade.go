// Package grade validates submissions and scores them with MLE-bench's semantics
// (CONTRACT.md §1). It knows nothing of tasks on disk, sandboxes or RL.
//
// The trainer grades thousands of submissions against one answers file, so the
// answers are parsed once (LoadAnswers) and each submission is read by a CSV
// reader built for the common case: unquoted fields are split in place, on all
// cores, without a per-cell allocation; files with quotes or lone CR line ends
// go through a slower, sequential reader with the same semantics.
//
// Where MLE-bench's behaviour comes from pandas' type inference rather than from
// a rule, this package picks one documented rule instead:
//
//   - Columns are compared as a set: order does not matter, extra, missing or
//     repeated columns make the submission invalid. Header names are exact
//     (no trimming); a UTF-8 byte order mark is skipped.
//   - Ids are exact strings ("7" and "007" are different ids).
//   - Numbers are decimal literals with optional surrounding spaces or tabs, as
//     pandas' C parser reads them ("0.5", " 1e-3", ".5", "5."); they are rounded
//     exactly as pandas' float_precision="round_trip" does. Empty cells and the
//     words pandas reads as NaN or infinity are "not a finite number".
//   - Blank lines are skipped (pandas' skip_blank_lines); a line with a different
//     number of fields than the header makes the submission invalid.
//   - Row numbers in messages count data rows from 1 (the header is row 0).
//   - Scores are not rounded (MLE-bench rounds to 5 decimals for leaderboards;
//     a learner wants the unrounded number).
//
// Metric-specific rules are documented on Metrics' table below (metricTable).
//
// Imported MLE-bench competitions (task.yaml "grader: mlebench/<id>") do not
// follow these rules: each has a rule set reproducing its own grade.py, on a
// pandas-like reading of the files (mlebench.go, frame.go, docs/mlebench.md).
// Rank places a score on a competition's leaderboard by MLE-bench's medal rules.
package grade

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Spec is what a grader needs to know about a task.
type Spec struct {
	Metric        string
	IDColumn      string
	TargetColumns []string
}

// Result is a grade: valid with a score, or invalid with a one-line reason.
type Result struct {
	Valid bool     `json:"valid"`
	Score *float64 `json:"score"`
	Error string   `json:"error"`
}

// valueKind says how a target cell is read.
type valueKind int

const (
	kindFloat  valueKind = iota // a finite number
	kindInt                     // a finite number with an integer value (qwk)
	kindString                  // any text (accuracy, jaccard)
)

type metricInfo struct {
	name          string
	lowerIsBetter bool
	singleTarget  bool
	minTargets    int
	kind          valueKind
	// doc is the rule set, kept next to the code that enforces it.
	doc string
}

// metricTable lists every metric of CONTRACT.md §1 and the MLE-bench grader it follows.
var metricTable = []metricInfo{
	{name: "auc", singleTarget: true, minTargets: 1, kind: kindFloat,
		doc: "sklearn roc_auc_score (ties count one half, as sklearn's trapezoid does); answers 0/1 with both classes; predictions finite and in [0,1] (MLE-bench prepare_for_auroc_metric)"},
	{name: "mean_column_auc", minTargets: 1, kind: kindFloat,
		doc: "mean of roc_auc_score per target column (MLE-bench plant-pathology-2020-fgvc7); answers 0/1 with both classes in every column; predictions finite (no range check, as in MLE-bench)"},
	{name: "accuracy", singleTarget: true, minTargets: 1, kind: kindString,
		doc: "sklearn accuracy_score on labels: when every answer label is a number, labels compare as numbers (\"3\", \"3.0\" and \" 3\" match, as pandas' numeric columns do) and a non-numeric submitted label is invalid; otherwise labels compare as exact strings (no trimming, as pandas keeps whitespace in text columns) and a submission whose labels are all numbers is invalid (sklearn's 'mix of label input types'); empty labels are invalid"},
	{name: "log_loss", lowerIsBetter: true, minTargets: 2, kind: kindFloat,
		doc: "scikit-learn >= 1.5 log_loss, as MLE-bench runs it: clip to [eps, 1-eps] with eps = float64 machine epsilon (2.220446049250313e-16), rows not renormalised, mean of -log p(true class); answers one-hot with exactly one 1 per row; each prediction in [0,1] and each row sum within numpy.isclose(sum, 1, atol=1e-6) i.e. |sum-1| <= 1e-6 + 1e-5 (MLE-bench spooky-author-identification, leaf-classification)"},
	{name: "rmse", lowerIsBetter: true, singleTarget: true, minTargets: 1, kind: kindFloat,
		doc: "sklearn mean_squared_error(squared=False)"},
	{name: "mae", lowerIsBetter: true, singleTarget: true, minTargets: 1, kind: kindFloat,
		doc: "sklearn mean_absolute_error"},
	{name: "mean_column_rmse", lowerIsBetter: true, minTargets: 1, kind: kindFloat,
		doc: "mean over target columns of each column's RMSE (sklearn multioutput uniform_average with squared=False)"},
	{name: "rmsle", lowerIsBetter: true, singleTarget: true, minTargets: 1, kind: kindFloat,
		doc: "RMSE of log1p values (sklearn root_mean_squared_log_error); answers and predictions must be > -1 (scikit-learn 1.2.1's mean_squared_log_error also rejects values in (-1, 0); the contract allows them)"},
	{name: "mean_column_rmsle", lowerIsBetter: true, minTargets: 1, kind: kindFloat,
		doc: "mean over target columns of each column's RMSLE (MLE-bench nomad2018-predict-transparent-conductors); values must be > -1"},
	{name: "qwk", singleTarget: true, minTargets: 1, kind: kindInt,
		doc: "sklearn cohen_kappa_score(weights=\"quadratic\"): weights are squared differences of label ranks in the sorted union of labels; labels must be integers (3.0 is 3; 3.5 is invalid); answers need two distinct labels"},
	{name: "pearson", singleTarget: true, minTargets: 1, kind: kindFloat,
		doc: "scipy.stats.pearsonr statistic; answers need two distinct values; constant predictions are invalid (scipy returns NaN)"},
	{name: "jaccard", singleTarget: true, minTargets: 1, kind: kindString,
		doc: "mean Jaccard of the sets of Python str.lower().split() words (MLE-bench tweet-sentiment-extraction); every answer has at least one word; an empty prediction scores 0 for its row"},
}

func lookupMetric(name string) (metricInfo, error) {
	for _, m := range metricTable {
		if m.name == name {
			return m, nil
		}
	}
	return metricInfo{}, fmt.Errorf("unknown metric %q (known: %s)", name, strings.Join(Metrics(), ", "))
}

// Metrics returns the known metric names, sorted.
func Metrics() []string {
	names := make([]string, len(metricTable))
	for i, m := range metricTable {
		names[i] = m.name
	}
	sort.Strings(names)
	return names
}

// LowerIsBetter reports whether a lower score is better for metric.
func LowerIsBetter(metric string) (bool, error) {
	m, err := lookupMetric(metric)
	if err != nil {
		return false, err
	}
	return m.lowerIsBetter, nil
}

// Direction says, in words, which way a metric's scores improve: how tables,
// listings and the programs' docstrings put it.
func Direction(lowerIsBetter bool) string {
	if lowerIsBetter {
		return "lower is better"
	}
	return "higher is better"
}

// Validate checks that the spec names a known metric and a usable set of columns.
func (s Spec) Validate() error {
	m, err := s.validateColumns()
	if err != nil {
		return err
	}
	if m.singleTarget && len(s.TargetColumns) != 1 {
		return fmt.Errorf("metric %s takes exactly one target column, got %d", m.name, len(s.TargetColumns))
	}
	if len(s.TargetColumns) < m.minTargets {
		return fmt.Errorf("metric %s needs at least %d target columns (one per class), got %d", m.name, m.minTargets, len(s.TargetColumns))
	}
	return nil
}

// validateColumns checks the metric name and the column names, not how many
// target columns the metric takes (an imported competition's rules decide).
func (s Spec) validateColumns() (metricInfo, error) {
	m, err := lookupMetric(s.Metric)
	if err != nil {
		return m, err
	}
	if s.IDColumn == "" {
		return m, errors.New("id column is not set")
	}
	if len(s.TargetColumns) == 0 {
		return m, errors.New("no target columns")
	}
	seen := make(map[string]bool, len(s.TargetColumns))
	for _, c := range s.TargetColumns {
		if c == "" {
			return m, errors.New("empty target column name")
		}
		if c == s.IDColumn {
			return m, fmt.Errorf("target column %q is also the id column", c)
		}
		if seen[c] {
			return m, fmt.Errorf("target column %q listed twice", c)
		}
		seen[c] = true
	}
	return m, nil
}
