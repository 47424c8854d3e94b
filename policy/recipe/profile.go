// Package recipe is the decision space of the embedded policy: a grammar of
// ML solutions. A Walker asks a sequence of categorical decisions (how to read
// the files, which columns, missing values, encodings, model family,
// hyperparameters, validation, ensembling), conditioned on what a Profile knows
// of the task; Render turns the finished Plan into a readable Python program
// that trains a model and writes submission.csv.
//
// The space is meant to be searched by RL, so it keeps the phenomena that make
// the search real: durations from under a second to minutes, slower choices
// that are often stronger, and programs that fail at different stages by their
// own nature (a model that cannot take NaN, sparse text fed to a dense-only
// model, a loader option that does not fit the file). Nothing in a rendered
// program raises on purpose. A model without predict_proba where
// probabilities are needed was such a mode until 2026-12-06; its decision
// scores stand in now (renderer.ScoresOnly), because an improve edit keeps
// its parent's ensemble: editing a pooled parent's model family to a linear
// SVM always crashed, and the failure taught the policy to avoid the family,
// not the choice that caused it.
package recipe

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mlerl/mlerl/grade"
	"github.com/mlerl/mlerl/task"
)

// ColumnKind is what a column holds, as far as a program should treat it.
type ColumnKind string

// The column kinds NewProfile tells apart.
const (
	KindID          ColumnKind = "id"
	KindTarget      ColumnKind = "target"
	KindNumeric     ColumnKind = "numeric"
	KindCategorical ColumnKind = "categorical"
	KindText        ColumnKind = "text"
	KindImage       ColumnKind = "image" // a relative path to an image file under data/
	// Added later: a date or date-time string in one strict format
	// (Column.DateFormat), expanded to numbers by features.dates.
	KindDate ColumnKind = "date"
	// A per-row identifier other than the task's id column (a record
	// number, a tweet id): never a feature, whatever pandas reads it as.
	KindIDLike ColumnKind = "id_like"
)

// TargetKind is the learning problem the metric and target columns imply.
type TargetKind string

// The learning problems the recipe grammar writes programs for.
const (
	Binary      TargetKind = "binary"
	Multiclass  TargetKind = "multiclass"
	Regression  TargetKind = "regression"
	MultiOutput TargetKind = "multi_output" // several numeric targets
)

// Column is one column of train.csv.
type Column struct {
	Name        string     `json:"name"`
	Kind        ColumnKind `json:"kind"`
	MissingFrac float64    `json:"missing_frac"`
	Unique      int        `json:"unique"`       // distinct non-missing values in the sample
	MeanLen     float64    `json:"mean_len"`     // mean length in characters of non-missing values
	InTest      bool       `json:"in_test"`      // present in test.csv
	NonASCII    bool       `json:"non_ascii"`    // some value has a byte >= 0x80
	IntegerOnly bool       `json:"integer_only"` // numeric and every value is a whole number
	// HighCardinality marks a categorical column with more than
	// highCardinalityLevels levels: one-hot encoding it makes hundreds of
	// columns, so the grammar encodes it its own way (features.high_card).
	HighCardinality bool    `json:"high_cardinality,omitempty"`
	DateFormat      string  `json:"date_format,omitempty"`    // KindDate: the strptime format every value fits
	PandasNumeric   bool    `json:"pandas_numeric,omitempty"` // pandas reads it as numbers or booleans, though its kind is not numeric
	MeanWords       float64 `json:"mean_words,omitempty"`     // mean count of space-separated tokens of non-missing values
}

// Profile is what a solution writer knows of a task after looking at its public
// files: computed once per task by NewProfile.
type Profile struct {
	Task      *task.Task `json:"-"`
	Name      string     `json:"name"`
	Metric    string     `json:"metric"`
	IDColumn  string     `json:"id_column"`
	TrainRows int        `json:"train_rows"`
	TestRows  int        `json:"test_rows"`
	Columns   []Column   `json:"columns"` // train.csv columns in file order

	// TrainTargets are the train.csv columns a model learns (train columns
	// absent from test.csv); SubmissionColumns the sample submission's
	// columns after the id, in its order.
	TrainTargets      []string   `json:"train_targets"`
	SubmissionColumns []string   `json:"submission_columns"`
	TargetKind        TargetKind `json:"target_kind"`
	Classes           []string   `json:"classes,omitempty"`        // label values seen in train, sorted
	PositiveClass     string     `json:"positive_class,omitempty"` // binary: the label whose probability is submitted
	MinorityFrac      float64    `json:"minority_frac"`            // classification: share of the rarest class

	// ImagesByID is set when public/images/<id><ImageExt> exists for the
	// training ids and no column names the image files.
	ImagesByID bool   `json:"images_by_id"`
	ImageExt   string `json:"image_ext,omitempty"`

	NonASCII    bool    `json:"non_ascii"`    // train.csv or test.csv has bytes >= 0x80
	MissingFrac float64 `json:"missing_frac"` // share of missing feature cells in train
	// CompleteFrac is the share of sampled train rows with no missing cell:
	// what features.missing=drop_rows keeps.
	CompleteFrac float64 `json:"complete_frac"`

	// TimeLimit is the wall-clock limit the task's programs run under (the
	// job's timeout), when the policy was told it (Policy.SetTimeLimit): the
	// cost model's avoidance uses it (cost.go). 0: unknown, nothing avoided
	// for time.
	TimeLimit time.Duration `json:"time_limit_ns,omitempty"`
	// Grid is the grid of hyperparameter values plans take (GridStandard
	// when empty; Policy.SetGrid).
	Grid string `json:"grid,omitempty"`
}

// pandasNA are the strings pandas 1.5's read_csv turns into NaN by default; the
// profile must see missing values the way the rendered program will.
var pandasNA = map[string]bool{
	"": true, "#N/A": true, "#N/A N/A": true, "#NA": true, "-1.#IND": true, "-1.#QNAN": true,
	"-NaN": true, "-nan": true, "1.#IND": true, "1.#QNAN": true, "<NA>": true, "N/A": true,
	"NA": true, "NULL": true, "NaN": true, "n/a": true, "nan": true, "null": true,
}

var imageExts = []string{".png", ".jpg", ".jpeg", ".bmp", ".gif"}

// profileSampleRows bounds the rows whose values are inspected per column;
// counting rows still reads the whole file.
const profileSampleRows = 5000

// NewProfile reads the task's public files (train.csv fully for the row count,
// its first rows for column kinds, test.csv's header and rows,
// sample_submission.csv's header) and works out the learning problem.
func NewProfile(t *task.Task) (*Profile, error) {
	if t == nil {
		return nil, errors.New("recipe: nil task")
	}
	p := &Profile{Task: t, Name: t.Name, Metric: t.Metric, IDColumn: t.IDColumn}
	pub := t.PublicDir()

	trainHeader, trainRows, trainN, trainNonASCII, err := readCSVSample(filepath.Join(pub, "train.csv"), profileSampleRows)
	if err != nil {
		return nil, err
	}
	testHeader, _, testN, testNonASCII, err := readCSVSample(filepath.Join(pub, "test.csv"), 0)
	if err != nil {
		return nil, err
	}
	sampleHeader, _, _, _, err := readCSVSample(filepath.Join(pub, "sample_submission.csv"), 0)
	if err != nil {
		return nil, err
	}
	p.TrainRows, p.TestRows = trainN, testN
	p.NonASCII = trainNonASCII || testNonASCII

	if len(sampleHeader) < 2 || sampleHeader[0] != t.IDColumn {
		return nil, fmt.Errorf("recipe: %s: sample_submission.csv header %v must start with id column %q and name targets",
			t.Name, sampleHeader, t.IDColumn)
	}
	p.SubmissionColumns = append([]string(nil), sampleHeader[1:]...)

	inTest := map[string]bool{}
	for _, c := range testHeader {
		inTest[c] = true
	}
	if !inTest[t.IDColumn] {
		return nil, fmt.Errorf("recipe: %s: test.csv has no id column %q", t.Name, t.IDColumn)
	}
	idIdx := -1
	for i, name := range trainHeader {
		col := Column{Name: name, InTest: inTest[name]}
		switch {
		case name == t.IDColumn:
			col.Kind = KindID
			idIdx = i
		case !inTest[name]:
			col.Kind = KindTarget
			p.TrainTargets = append(p.TrainTargets, name)
		}
		summarise(&col, trainRows, i)
		p.Columns = append(p.Columns, col)
	}
	if idIdx < 0 {
		return nil, fmt.Errorf("recipe: %s: train.csv has no id column %q", t.Name, t.IDColumn)
	}
	if len(p.TrainTargets) == 0 {
		return nil, fmt.Errorf("recipe: %s: every train.csv column is also in test.csv, so no target to learn", t.Name)
	}

	var missing, cells float64
	for _, c := range p.Columns {
		if c.Kind == KindID || c.Kind == KindTarget || c.Kind == KindIDLike {
			continue
		}
		missing += c.MissingFrac
		cells++
	}
	if cells > 0 {
		p.MissingFrac = missing / cells
	}
	p.CompleteFrac = completeFrac(trainRows, len(trainHeader))

	if err := p.findImagesByID(trainRows, idIdx); err != nil {
		return nil, err
	}
	if err := p.targetKind(trainHeader, trainRows); err != nil {
		return nil, err
	}
	return p, nil
}

// summarise fills a column's statistics from sample rows and, unless the
// column is the id or a target, its kind (see classify).
func summarise(c *Column, rows [][]string, i int) {
	st := columnStats(rows, i)
	if len(rows) > 0 {
		c.MissingFrac = float64(len(rows)-st.present) / float64(len(rows))
	}
	c.Unique = len(st.seen)
	c.NonASCII = st.nonASCII
	if st.present > 0 {
		c.MeanLen = float64(st.totalLen) / float64(st.present)
		c.MeanWords = float64(st.words) / float64(st.present)
	}
	c.IntegerOnly = st.numeric && st.integer && st.present > 0
	if c.Kind != "" {
		return
	}
	classify(c, st)
}

// completeFrac is the share of rows with every one of width cells present
// (a short row lacks cells), 1 without rows.
func completeFrac(rows [][]string, width int) float64 {
	if len(rows) == 0 {
		return 1
	}
	complete := 0
	for _, r := range rows {
		if len(r) >= width && !slices.ContainsFunc(r, func(v string) bool { return pandasNA[v] }) {
			complete++
		}
	}
	return float64(complete) / float64(len(rows))
}

func utf8ValidASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// findImagesByID detects images stored as public/images/<id>.<ext> when no
// column holds their paths.
func (p *Profile) findImagesByID(rows [][]string, idIdx int) error {
	for _, c := range p.Columns {
		if c.Kind == KindImage {
			return nil
		}
	}
	dir := filepath.Join(p.Task.PublicDir(), "images")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || len(rows) == 0 || idIdx >= len(rows[0]) {
		return nil
	}
	id := rows[0][idIdx]
	for _, ext := range imageExts {
		if _, err := os.Stat(filepath.Join(dir, id+ext)); err == nil {
			p.ImagesByID, p.ImageExt = true, ext
			return nil
		}
	}
	return nil
}

// targetKind decides the learning problem from the metric's family
// (grade.FamilyOf) and the targets.
func (p *Profile) targetKind(header []string, rows [][]string) error {
	f := p.family()
	if !supported(f) {
		return fmt.Errorf("recipe: %s: metric %q is not in the recipe grammar (supported: %s)",
			p.Name, p.Metric, strings.Join(supportedMetrics(), ", "))
	}
	if f.Problem == grade.Regression {
		p.TargetKind = Regression
		if len(p.TrainTargets) > 1 {
			p.TargetKind = MultiOutput
		}
		return nil
	}
	if len(p.TrainTargets) != 1 {
		return fmt.Errorf("recipe: %s: metric %s needs one label column in train.csv, found %v", p.Name, p.Metric, p.TrainTargets)
	}
	ti := -1
	for i, h := range header {
		if h == p.TrainTargets[0] {
			ti = i
		}
	}
	counts := map[string]int{}
	n := 0
	for _, r := range rows {
		if ti < len(r) && !pandasNA[r[ti]] {
			counts[normaliseLabel(r[ti])]++
			n++
		}
	}
	for c := range counts {
		p.Classes = append(p.Classes, c)
	}
	sortLabels(p.Classes)
	if len(p.Classes) < 2 {
		return fmt.Errorf("recipe: %s: target %q has fewer than two classes in train.csv", p.Name, p.TrainTargets[0])
	}
	minC := n
	for _, k := range counts {
		minC = min(minC, k)
	}
	p.MinorityFrac = float64(minC) / float64(max(n, 1))
	p.TargetKind = Multiclass
	if len(p.Classes) == 2 {
		p.TargetKind = Binary
	}
	if f.Probabilities() && f.Columns == grade.OneColumn {
		if len(p.Classes) != 2 {
			return fmt.Errorf("recipe: %s: %s needs a binary target, %q has %d classes", p.Name, p.Metric, p.TrainTargets[0], len(p.Classes))
		}
		p.PositiveClass = positiveClass(p.Classes)
	}
	if f.Columns == grade.ColumnPerClass {
		// The program maps predict_proba's classes to the sample's columns by
		// name; every class must have a column or the submission is invalid.
		have := map[string]bool{}
		for _, c := range p.SubmissionColumns {
			have[c] = true
		}
		for _, c := range p.Classes {
			if !have[c] {
				return fmt.Errorf("recipe: %s: class %q of %s has no column in sample_submission.csv", p.Name, c, p.TrainTargets[0])
			}
		}
	}
	return nil
}

// normaliseLabel renders "3.0" as "3": pandas reads integer labels with NaNs
// elsewhere in the file as floats, the program's labels are strings of ints.
func normaliseLabel(s string) string {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return s
}

// sortLabels orders numerically when every label is a number, else as strings:
// the order scikit-learn's LabelEncoder will see after the program's casting.
func sortLabels(ls []string) {
	sort.Strings(ls)
}

// positiveClass picks the label whose probability an AUC submission carries:
// the conventional "yes"-like label, else the larger of two numbers, else the
// second in sorted order (scikit-learn's convention for pos_label).
func positiveClass(classes []string) string {
	for _, c := range classes {
		switch strings.ToLower(c) {
		case "1", "yes", "y", "true", "t", "pos", "positive":
			return c
		}
	}
	return classes[len(classes)-1]
}

// readCSVSample reads a CSV file's header, up to keep data rows (all rows are
// counted), and whether any byte is non-ASCII.
func readCSVSample(path string, keep int) (header []string, rows [][]string, n int, nonASCII bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, false, fmt.Errorf("recipe: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(&asciiWatch{r: f, seen: &nonASCII})
	r.FieldsPerRecord = -1
	r.ReuseRecord = false
	header, err = r.Read()
	if err != nil {
		return nil, nil, 0, false, fmt.Errorf("recipe: %s: reading header: %w", path, err)
	}
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, 0, false, fmt.Errorf("recipe: %s: %w", path, err)
		}
		if n < keep {
			rows = append(rows, rec)
		}
		n++
	}
	return header, rows, n, nonASCII, nil
}

// asciiWatch notes whether any byte read is >= 0x80 (an ascii loader fails on it).
type asciiWatch struct {
	r    io.Reader
	seen *bool
}

// Read reads from the underlying reader, noting any byte >= 0x80.
func (a *asciiWatch) Read(b []byte) (int, error) {
	n, err := a.r.Read(b)
	if !*a.seen {
		for _, c := range b[:n] {
			if c >= 0x80 {
				*a.seen = true
				break
			}
		}
	}
	return n, err
}

// Kinds returns the names of the feature columns of a kind, in file order.
func (p *Profile) Kinds(k ColumnKind) []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, c := range p.Columns {
		if c.Kind == k {
			out = append(out, c.Name)
		}
	}
	return out
}

// HasText says the task has text columns. It, HasImages and HasCategorical
// mask the grammar's options.
func (p *Profile) HasText() bool { return len(p.Kinds(KindText)) > 0 }

// HasImages says the task has images, named by a column or found by id.
func (p *Profile) HasImages() bool { return p != nil && (p.ImagesByID || len(p.Kinds(KindImage)) > 0) }

// HasCategorical says the task has categorical columns of few levels.
func (p *Profile) HasCategorical() bool { return len(p.Categorical(false)) > 0 }

// HasHighCardinality says the task has categorical columns of many levels.
func (p *Profile) HasHighCardinality() bool { return len(p.Categorical(true)) > 0 }

// HasDates says the task has date columns.
func (p *Profile) HasDates() bool { return len(p.Kinds(KindDate)) > 0 }

// Categorical names the categorical columns of many levels (high) or of
// few, in file order.
func (p *Profile) Categorical(high bool) []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, c := range p.Columns {
		if c.Kind == KindCategorical && c.HighCardinality == high {
			out = append(out, c.Name)
		}
	}
	return out
}

// minSeriesColumns is the fewest stem-numbered columns that make a series.
const minSeriesColumns = 20

// Series finds one ordered signal per row stored across many columns (a
// spectrum, a sampled curve): at least minSeriesColumns numeric feature
// columns named stem+number (x_001, x_002, ...) whose numbers rise in file
// order, and no id, target or non-numeric column of that form. It returns the
// stem and the columns in file order, or "" and nil.
func (p *Profile) Series() (stem string, cols []string) {
	if p == nil {
		return "", nil
	}
	type group struct {
		cols    []string
		last    int
		ordered bool
		bad     bool
	}
	groups := map[string]*group{}
	var stems []string
	for _, c := range p.Columns {
		st, num, ok := splitNumberSuffix(c.Name)
		if !ok {
			continue
		}
		g := groups[st]
		if g == nil {
			g = &group{ordered: true, last: -1}
			groups[st] = g
			stems = append(stems, st)
		}
		if c.Kind != KindNumeric {
			g.bad = true
			continue
		}
		if num <= g.last {
			g.ordered = false
		}
		g.last = num
		g.cols = append(g.cols, c.Name)
	}
	for _, st := range stems {
		g := groups[st]
		if !g.bad && g.ordered && len(g.cols) >= minSeriesColumns && len(g.cols) > len(cols) {
			stem, cols = st, g.cols
		}
	}
	return stem, cols
}

// HasSeries says the table holds an ordered series (see Series).
func (p *Profile) HasSeries() bool {
	_, cols := p.Series()
	return cols != nil
}

// splitNumberSuffix splits "x_012" into "x_" and 12; ok is false without a
// non-empty stem and a numeric suffix.
func splitNumberSuffix(name string) (stem string, num int, ok bool) {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i == 0 || i == len(name) || len(name)-i > 9 {
		return "", 0, false
	}
	n, err := strconv.Atoi(name[i:])
	if err != nil {
		return "", 0, false
	}
	return name[:i], n, true
}

// OrdinalIntegers says the target is ordered integer classes scored by qwk, so
// it can also be learned as a number and rounded.
func (p *Profile) OrdinalIntegers() bool {
	if p == nil || !p.family().Ordinal() || len(p.Classes) < 2 {
		return false
	}
	for _, c := range p.Classes {
		if _, err := strconv.Atoi(c); err != nil {
			return false
		}
	}
	return true
}

// IsClassification says the model predicts labels or class probabilities.
func (p *Profile) IsClassification() bool {
	return p != nil && (p.TargetKind == Binary || p.TargetKind == Multiclass)
}

// NeedsProba says the submission holds probabilities (auc, log_loss).
func (p *Profile) NeedsProba() bool { return p != nil && p.family().Probabilities() }

// family is the metric's grade.Family; the zero Family for a metric the
// grader does not know (task.Load refuses those).
func (p *Profile) family() grade.Family {
	f, _ := grade.FamilyOf(p.Metric)
	return f
}

// supported says the recipe grammar writes programs for the metric family:
// regression on one or more targets, and classification into one column of
// labels or one probability per class (not several binary label columns,
// nor free text).
func supported(f grade.Family) bool {
	return f.Problem == grade.Regression || f.Problem == grade.Classification && f.Columns != grade.ColumnPerTarget
}

// supportedMetrics are the grader's metrics the recipe grammar supports, sorted.
func supportedMetrics() []string {
	var out []string
	for _, m := range grade.Metrics() {
		if f, _ := grade.FamilyOf(m); supported(f) {
			out = append(out, m)
		}
	}
	return out
}

// featureNames documents Features(), index by index.
var featureNames = [...]string{
	"log10(train rows)/6",
	"log10(test rows)/6",
	"log10(feature columns+1)/3",
	"fraction numeric columns",
	"fraction categorical columns",
	"fraction text columns",
	"images present (by column or by id)",
	"fraction missing feature cells",
	"fraction feature columns with missing values",
	"target binary",
	"target multiclass",
	"target regression",
	"target multi-output",
	"log(classes)/log(100)",
	"log2(target columns)/5",
	"metric auc",
	"metric log_loss",
	"metric accuracy or qwk",
	"metric regression error (rmse, mae, rmsle and mean-column forms)",
	"metric correlation (pearson)",
	"lower is better",
	"minority class fraction (classification)",
	"non-ASCII bytes in the data files",
	"ordinal labels (qwk)",
	"log10(mean text length+1)/4",
	"fraction integer-only numeric columns",
}

// NumFeatures is the length of Features().
const NumFeatures = len(featureNames)

// Features is the fixed-length task feature vector the policy net conditions
// on; each entry is roughly in [0,1]. featureNames documents them.
func (p *Profile) Features() []float64 {
	f := make([]float64, NumFeatures)
	if p == nil {
		return f
	}
	var feat, num, cat, txt, withMissing, integer float64
	var textLen, textCols float64
	for _, c := range p.Columns {
		switch c.Kind {
		case KindID, KindTarget, KindIDLike:
			continue
		case KindNumeric:
			num++
			if c.IntegerOnly {
				integer++
			}
		case KindCategorical:
			cat++
		case KindText:
			txt++
			textLen += c.MeanLen
			textCols++
		}
		feat++
		if c.MissingFrac > 0 {
			withMissing++
		}
	}
	frac := func(x float64) float64 {
		if feat == 0 {
			return 0
		}
		return x / feat
	}
	f[0] = math.Log10(float64(p.TrainRows)+1) / 6
	f[1] = math.Log10(float64(p.TestRows)+1) / 6
	f[2] = math.Log10(feat+1) / 3
	f[3], f[4], f[5] = frac(num), frac(cat), frac(txt)
	if p.HasImages() {
		f[6] = 1
	}
	f[7] = p.MissingFrac
	f[8] = frac(withMissing)
	switch p.TargetKind {
	case Binary:
		f[9] = 1
	case Multiclass:
		f[10] = 1
	case Regression:
		f[11] = 1
	case MultiOutput:
		f[12] = 1
	}
	if len(p.Classes) > 1 {
		f[13] = math.Log(float64(len(p.Classes))) / math.Log(100)
	}
	f[14] = math.Log2(float64(len(p.SubmissionColumns))) / 5
	metricFeatures(f, p.family())
	if p.IsClassification() {
		f[21] = p.MinorityFrac
	}
	if p.NonASCII {
		f[22] = 1
	}
	if textCols > 0 {
		f[24] = math.Log10(textLen/textCols+1) / 4
	}
	if num > 0 {
		f[25] = integer / num
	}
	return f
}

// metricFeatures sets the features that describe the metric (15-20, 23).
func metricFeatures(f []float64, m grade.Family) {
	switch {
	case m.Probabilities() && m.Columns == grade.OneColumn: // auc
		f[15] = 1
	case m.Columns == grade.ColumnPerClass: // log_loss
		f[16] = 1
	case m.Problem == grade.Classification && m.Columns == grade.OneColumn: // accuracy, qwk
		f[17] = 1
	case m.Problem == grade.Regression && m.LowerIsBetter: // an error: rmse, mae, rmsle and mean-column forms
		f[18] = 1
	case m.Problem == grade.Regression: // a correlation: pearson
		f[19] = 1
	}
	if m.LowerIsBetter {
		f[20] = 1
	}
	if m.Ordinal() {
		f[23] = 1
	}
}
