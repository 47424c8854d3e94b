package suite

import (
	"bytes"
	"encoding/csv"
	"image/png"
	"io/fs"
	"math"
	"path"
	"slices"
	"strconv"
	"testing"

	"go.yaml.in/yaml/v3"
)

type csvFile struct {
	header []string
	rows   [][]string
}

func readCSV(t *testing.T, fsys fs.FS, p string) csvFile {
	t.Helper()
	b, err := fs.ReadFile(fsys, p)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	if len(recs) < 2 {
		t.Fatalf("%s: %d records, want a header and rows", p, len(recs))
	}
	return csvFile{recs[0], recs[1:]}
}

func (c csvFile) column(t *testing.T, name string) []string {
	t.Helper()
	i := slices.Index(c.header, name)
	if i < 0 {
		t.Fatalf("no column %q in %v", name, c.header)
	}
	out := make([]string, len(c.rows))
	for k, r := range c.rows {
		out[k] = r[i]
	}
	return out
}

type taskYAMLFile struct {
	Name          string   `yaml:"name"`
	Metric        string   `yaml:"metric"`
	IDColumn      string   `yaml:"id_column"`
	TargetColumns []string `yaml:"target_columns"`
	Source        string   `yaml:"source"`
}

// TestTaskStructure checks every committed task the way a grader and an
// agent will meet it: the yaml, the row counts, that test.csv hides the
// target, that ids line up across test, answers and sample submission, and
// that the split is stratified.
func TestTaskStructure(t *testing.T) {
	tests := []struct {
		name       string
		metric     string
		total      int
		test       int    // exact test rows
		trainLabel string // the label column in train.csv
		classes    int    // number of classes (0 for regression)
	}{
		{"ames-housing", "rmsle", 2930, 586, "Sale_Price", 0},
		{"austen-authorship", "log_loss", 12454, 2490, "book", 6},
		{"digit-images", "accuracy", 1797, 359, "digit", 10},
		{"fine-food-reviews", "auc", 5000, 1000, "great", 2},
		{"hpc-job-class", "qwk", 4331, 866, "class", 4},
		{"letter-recognition", "accuracy", 20000, 4002, "lettr", 26},
		{"meats-composition", "mean_column_rmse", 215, 43, "water", 0},
		{"soybean-disease", "log_loss", 683, 137, "Class", 19},
		{"stackoverflow-remote", "auc", 5594, 1119, "Remote", 2},
		{"telco-churn", "auc", 7043, 1409, "churn", 2},
	}
	root := tasks()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task, err := fs.Sub(root, tt.name)
			if err != nil {
				t.Fatal(err)
			}
			y := checkTaskYAML(t, task, tt.name, tt.metric)
			train := readCSV(t, task, "public/train.csv")
			test := readCSV(t, task, "public/test.csv")
			sample := readCSV(t, task, "public/sample_submission.csv")
			answers := readCSV(t, task, "private/answers.csv")

			if len(train.rows)+len(test.rows) != tt.total || len(test.rows) != tt.test {
				t.Errorf("%d train + %d test rows, want %d total with %d test", len(train.rows), len(test.rows), tt.total, tt.test)
			}
			checkHeaders(t, y, tt.trainLabel, train, test, sample, answers)
			checkIDs(t, y, train, test, sample, answers)

			labels := train.column(t, tt.trainLabel)
			checkAnswers(t, y, tt.metric, tt.classes, labels, answers, sample)
			if tt.classes > 0 && tt.name != "fine-food-reviews" {
				checkStratified(t, labels, answerLabels(t, y, answers))
			}
			if tt.name == "digit-images" {
				checkImages(t, task, train, test)
			}
		})
	}
}

// checkTaskYAML decodes the task's task.yaml strictly, checks its name,
// metric, source and id column, and that the task's files are all there.
func checkTaskYAML(t *testing.T, task fs.FS, name, metric string) taskYAMLFile {
	t.Helper()
	raw, err := fs.ReadFile(task, "task.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var y taskYAMLFile
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&y); err != nil {
		t.Fatalf("task.yaml: %v", err)
	}
	if y.Name != name || y.Metric != metric || y.Source == "" || y.IDColumn == "" {
		t.Fatalf("task.yaml = %+v", y)
	}
	for _, f := range []string{"description.md", "public/train.csv", "public/test.csv", "public/sample_submission.csv", "private/answers.csv"} {
		if _, err := fs.Stat(task, f); err != nil {
			t.Fatalf("missing %s: %v", f, err)
		}
	}
	return y
}

// checkHeaders checks the CSV headers: answers and sample are the id and
// the target columns, the id comes first, and test.csv is train.csv minus
// the targets (trainLabel among them).
func checkHeaders(t *testing.T, y taskYAMLFile, trainLabel string, train, test, sample, answers csvFile) {
	t.Helper()
	submission := append([]string{y.IDColumn}, y.TargetColumns...)
	if !slices.Equal(answers.header, submission) || !slices.Equal(sample.header, submission) {
		t.Errorf("answers %v / sample %v headers, want %v", answers.header, sample.header, submission)
	}
	if test.header[0] != y.IDColumn || train.header[0] != y.IDColumn {
		t.Errorf("id column %q is not first in train %v / test %v", y.IDColumn, train.header[:1], test.header[:1])
	}
	// test.csv is train.csv minus the targets.
	targets := train.header[len(test.header):]
	if !slices.Equal(train.header[:len(test.header)], test.header) || !slices.Contains(targets, trainLabel) {
		t.Errorf("train header %v is not test header %v plus targets", train.header, test.header)
	}
	for _, c := range append(slices.Clone(targets), y.TargetColumns...) {
		if slices.Contains(test.header, c) {
			t.Errorf("test.csv has target column %q", c)
		}
	}
}

// checkIDs checks that test, answers and sample list the same ids, and
// that every id is a unique integer.
func checkIDs(t *testing.T, y taskYAMLFile, train, test, sample, answers csvFile) {
	t.Helper()
	testIDs := test.column(t, y.IDColumn)
	if !slices.Equal(answers.column(t, y.IDColumn), testIDs) || !slices.Equal(sample.column(t, y.IDColumn), testIDs) {
		t.Errorf("answers, sample submission and test.csv list different ids")
	}
	seen := map[string]bool{}
	for _, id := range append(train.column(t, y.IDColumn), testIDs...) {
		if _, err := strconv.Atoi(id); err != nil || seen[id] {
			t.Fatalf("id %q is not a unique integer", id)
		}
		seen[id] = true
	}
}

// answerLabels is each answer row's class: the label column, or for
// log_loss the name of the one-hot column set to 1.
func answerLabels(t *testing.T, y taskYAMLFile, answers csvFile) []string {
	t.Helper()
	var out []string
	for _, r := range answers.rows {
		if len(y.TargetColumns) == 1 {
			out = append(out, r[1])
			continue
		}
		i := slices.Index(r[1:], "1")
		out = append(out, y.TargetColumns[i])
	}
	return out
}

// checkAnswers checks the answers and sample submission values against the
// metric and the train labels.
func checkAnswers(t *testing.T, y taskYAMLFile, metric string, classes int, trainLabels []string, answers, sample csvFile) {
	t.Helper()
	switch metric {
	case "log_loss":
		checkLogLossAnswers(t, y, classes, trainLabels, answers, sample)
	case "auc":
		for _, r := range answers.rows {
			if r[1] != "0" && r[1] != "1" {
				t.Fatalf("auc answer %q is not 0/1", r[1])
			}
		}
		for _, l := range trainLabels {
			if l != "0" && l != "1" {
				t.Fatalf("train label %q is not 0/1", l)
			}
		}
	case "accuracy", "qwk":
		checkClassAnswers(t, metric, classes, trainLabels, answers, sample)
	case "rmsle", "mean_column_rmse":
		for _, r := range append(slices.Clone(answers.rows), sample.rows...) {
			for _, v := range r[1:] {
				if x := finiteNumber(t, v); metric == "rmsle" && x <= -1 {
					t.Fatalf("rmsle value %v <= -1", x)
				}
			}
		}
	}
}

// finiteNumber parses s, failing the test unless it is a finite number.
func finiteNumber(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		t.Fatalf("value %q is not a finite number", s)
	}
	return v
}

// checkLogLossAnswers checks a log-loss task: one class column per class,
// train labels among them, one-hot answers, sample rows summing to 1.
func checkLogLossAnswers(t *testing.T, y taskYAMLFile, classes int, trainLabels []string, answers, sample csvFile) {
	t.Helper()
	if len(y.TargetColumns) != classes {
		t.Fatalf("%d class columns, want %d", len(y.TargetColumns), classes)
	}
	for _, l := range trainLabels {
		if !slices.Contains(y.TargetColumns, l) {
			t.Fatalf("train label %q is not a class column %v", l, y.TargetColumns)
		}
	}
	for _, r := range answers.rows {
		ones := 0
		for _, v := range r[1:] {
			switch v {
			case "1":
				ones++
			case "0":
			default:
				t.Fatalf("answer value %q is not 0/1", v)
			}
		}
		if ones != 1 {
			t.Fatalf("answer row %v is not one-hot", r)
		}
	}
	for _, r := range sample.rows {
		sum := 0.0
		for _, v := range r[1:] {
			sum += finiteNumber(t, v)
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("sample row sums to %v", sum)
		}
	}
}

// checkClassAnswers checks an accuracy or qwk task: classes distinct train
// labels, answers and sample drawn from them (qwk: integers 0..3).
func checkClassAnswers(t *testing.T, metric string, classes int, trainLabels []string, answers, sample csvFile) {
	t.Helper()
	set := map[string]bool{}
	for _, l := range trainLabels {
		set[l] = true
	}
	if len(set) != classes {
		t.Fatalf("%d distinct train labels, want %d", len(set), classes)
	}
	for _, r := range append(slices.Clone(answers.rows), sample.rows...) {
		if !set[r[1]] {
			t.Fatalf("label %q in answers or sample is not a train label", r[1])
		}
		if metric == "qwk" {
			if k, err := strconv.Atoi(r[1]); err != nil || k < 0 || k > 3 {
				t.Fatalf("qwk label %q is not an integer 0..3", r[1])
			}
		}
	}
}

// checkStratified asserts each class's test share is 20% to within one row.
func checkStratified(t *testing.T, train, test []string) {
	t.Helper()
	count := func(ls []string) map[string]int {
		m := map[string]int{}
		for _, l := range ls {
			m[l]++
		}
		return m
	}
	tr, te := count(train), count(test)
	for c, n := range tr {
		total := n + te[c]
		want := float64(total) * testFraction
		if math.Abs(float64(te[c])-want) > 1 {
			t.Errorf("class %s: %d of %d rows in test, want about %.1f", c, te[c], total, want)
		}
	}
}

func checkImages(t *testing.T, task fs.FS, train, test csvFile) {
	t.Helper()
	files := append(train.column(t, "image"), test.column(t, "image")...)
	entries, err := fs.ReadDir(task, "public/images")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(files) {
		t.Errorf("%d files in images/, %d rows", len(entries), len(files))
	}
	for _, f := range files {
		b, err := fs.ReadFile(task, path.Join("public", f))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if r := img.Bounds(); r.Dx() != 8 || r.Dy() != 8 {
			t.Fatalf("%s is %dx%d, want 8x8", f, r.Dx(), r.Dy())
		}
	}
}
