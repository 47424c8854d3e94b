package suite

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template"
)

func TestClassName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Sense & Sensibility", "sense_and_sensibility"},
		{"Pride & Prejudice", "pride_and_prejudice"},
		{"Emma", "emma"},
		{"2-4-d-injury", "2_4_d_injury"},
		{"diaporthe-pod-&-stem-blight", "diaporthe_pod_and_stem_blight"},
		{"  --Trailing--  ", "trailing"},
		{"&", "and"},
		{"***", ""},
	}
	for _, tt := range tests {
		if got := className(tt.in); got != tt.want {
			t.Errorf("className(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLoadAusten(t *testing.T) {
	ds, err := loadAusten("testdata/austen-ok")
	if err != nil {
		t.Fatal(err)
	}
	// Emma has 7 non-empty lines: one passage of 5, two left over are
	// dropped. Persuasion has exactly 5. Whitespace is collapsed.
	want := []struct{ text, book string }{
		{"EMMA one two words three four", "emma"},
		{"PERSUASION a b c d", "persuasion"},
	}
	if len(ds.examples) != len(want) {
		t.Fatalf("%d passages, want %d", len(ds.examples), len(want))
	}
	for i, w := range want {
		e := ds.examples[i]
		if e.features[0] != w.text || e.target[0] != w.book || e.class != w.book {
			t.Errorf("passage %d = %q (%s), want %q (%s)", i, e.features[0], e.target[0], w.text, w.book)
		}
	}
	if !slices.Equal(ds.classes, []string{"emma", "persuasion"}) {
		t.Errorf("classes = %v", ds.classes)
	}

	if _, err := loadAusten("testdata/austen-split"); err == nil || !strings.Contains(err.Error(), "two separate runs") {
		t.Errorf("a book split over two runs of rows gave %v, want an error", err)
	}
	if _, err := loadAusten("testdata/no-such-dir"); err == nil || !strings.Contains(err.Error(), "austen_books.csv") {
		t.Errorf("missing raw file gave %v, want an error naming it", err)
	}
}

func TestLoaderErrorsNameTheProblem(t *testing.T) {
	tests := []struct {
		file, target string
		conv         func([]string) ([]string, string, error)
		want         string
	}{
		{"bad_label.csv", "churn", binary("Yes", "No"), `bad_label.csv row 3: label "Maybe" is neither "Yes" nor "No"`},
		{"bad_number.csv", "Sale_Price", numeric, `bad_number.csv row 3: target "n/a" is not a number`},
		{"bad_number.csv", "price", numeric, `no column "price"`},
	}
	for _, tt := range tests {
		_, err := simpleTable("testdata/bad", tt.file, &dataset{}, []string{tt.target}, tt.conv)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to contain %q", tt.file, err, tt.want)
		}
	}
}

// synthetic makes a classification dataset with a known class balance.
func synthetic(name string, counts map[string]int) *dataset {
	ds := &dataset{name: name, metric: "accuracy", idColumn: "id", features: []string{"x"}, target: []string{"y"}}
	var classes []string
	for c := range counts {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	for _, c := range classes {
		for i := range counts[c] {
			ds.examples = append(ds.examples, example{features: []string{strconv.Itoa(i)}, target: []string{c}, class: c})
		}
	}
	return ds
}

func TestSplitStratifiedAndDeterministic(t *testing.T) {
	counts := map[string]int{"a": 1000, "b": 300, "c": 8}
	ds := synthetic("synthetic", counts)
	test, ids := split(ds)
	test2, ids2 := split(ds)
	if !slices.Equal(test, test2) || !slices.Equal(ids, ids2) {
		t.Fatal("split is not deterministic")
	}
	inTest := map[string]int{}
	for i, e := range ds.examples {
		if test[i] {
			inTest[e.class]++
		}
	}
	for c, n := range counts {
		if want := int(float64(n)*testFraction + 0.5); inTest[c] != want {
			t.Errorf("class %s: %d test rows, want %d", c, inTest[c], want)
		}
	}
	sorted := slices.Sorted(slices.Values(ids))
	for i, id := range sorted {
		if id != i+1 {
			t.Fatalf("ids are not a permutation of 1..%d", len(ids))
		}
	}
	// Another task name gives another split.
	other := synthetic("other", counts)
	if test3, _ := split(other); slices.Equal(test, test3) {
		t.Error("two task names gave the same split")
	}
}

// TestIDsDoNotLeakLabels checks that, within the test set, a class's mean id
// rank is what chance gives: ids must be independent of labels and split.
func TestIDsDoNotLeakLabels(t *testing.T) {
	ds := synthetic("leak-check", map[string]int{"big": 4000, "small": 400})
	test, ids := split(ds)
	var big, small []float64
	for i, e := range ds.examples {
		if !test[i] {
			continue
		}
		if e.class == "big" {
			big = append(big, float64(ids[i]))
		} else {
			small = append(small, float64(ids[i]))
		}
	}
	mean := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	// Uniform ids on 1..4400 have sd ~1270; the mean of 80 small-class ids
	// has sd ~142. Six sd is a bound a leak would cross and chance would not.
	n := float64(len(ds.examples))
	if d := math.Abs(mean(small) - (n+1)/2); d > 6*1270/math.Sqrt(float64(len(small))) {
		t.Errorf("small class mean id %.0f is %.0f from the middle %.0f", mean(small), d, (n+1)/2)
	}
	if d := math.Abs(mean(big) - (n+1)/2); d > 6*1270/math.Sqrt(float64(len(big))) {
		t.Errorf("big class mean id %.0f is %.0f from the middle %.0f", mean(big), d, (n+1)/2)
	}
}

func TestRenderFixedPlacement(t *testing.T) {
	ds := &dataset{name: "fixed", metric: "auc", idColumn: "id", features: []string{"x"}, target: []string{"y"}}
	for i := range 10 {
		p := placeTrain
		if i >= 7 {
			p = placeTest
		}
		ds.examples = append(ds.examples, example{features: []string{fmt.Sprint("row", i)}, target: []string{strconv.Itoa(i % 2)}, class: strconv.Itoa(i % 2), place: p})
	}
	r, err := render(ds, template.Must(template.New("d").Parse("{{.TrainRows}}/{{.TestRows}}\n")))
	if err != nil {
		t.Fatal(err)
	}
	if r.train != 7 || r.test != 3 {
		t.Fatalf("%d train / %d test, want the fixed 7 / 3", r.train, r.test)
	}
	if got := string(r.files["description.md"]); got != "7/3\n" {
		t.Errorf("description = %q", got)
	}
	for _, row := range []string{"row7", "row8", "row9"} {
		if !strings.Contains(string(r.files["public/test.csv"]), row) {
			t.Errorf("%s is not in test.csv:\n%s", row, r.files["public/test.csv"])
		}
	}
}

func TestSampleGuess(t *testing.T) {
	mk := func(metric string, targets ...[]string) (*dataset, []int) {
		ds := &dataset{name: "t", metric: metric, target: []string{"a", "b"}[:len(targets[0])], classes: []string{"x", "y", "z"}}
		var idx []int
		for i, tg := range targets {
			ds.examples = append(ds.examples, example{target: tg})
			idx = append(idx, i)
		}
		return ds, idx
	}
	tests := []struct {
		metric  string
		targets [][]string
		want    []string
	}{
		{"auc", [][]string{{"1"}, {"0"}}, []string{"0.5"}},
		{"accuracy", [][]string{{"b"}, {"a"}, {"b"}}, []string{"b"}},
		{"accuracy", [][]string{{"b"}, {"a"}}, []string{"a"}}, // tie: smallest label
		{"qwk", [][]string{{"3"}, {"0"}, {"0"}}, []string{"0"}},
		{"log_loss", [][]string{{"x"}, {"x"}, {"y"}, {"x"}}, []string{"0.75", "0.25", "0"}},
		{"rmsle", [][]string{{"1"}, {"2"}}, []string{"1.5000"}},
		{"mean_column_rmse", [][]string{{"1", "10"}, {"2", "20"}}, []string{"1.5000", "15.0000"}},
	}
	for _, tt := range tests {
		ds, idx := mk(tt.metric, tt.targets...)
		got, err := sampleGuess(ds, idx)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s %v: got %v, %v; want %v", tt.metric, tt.targets, got, err, tt.want)
		}
	}
	ds, idx := mk("pearson", []string{"1"})
	if _, err := sampleGuess(ds, idx); err == nil || !strings.Contains(err.Error(), `metric "pearson"`) {
		t.Errorf("unsupported metric gave %v", err)
	}
}

func TestTaskYAML(t *testing.T) {
	ds := &dataset{name: "soy", metric: "log_loss", idColumn: "id", source: `a "quoted" source`}
	got := string(taskYAML(ds, []string{"2_4_d_injury", "b"}))
	want := "name: soy\nmetric: log_loss\nid_column: id\ntarget_columns: [\"2_4_d_injury\", \"b\"]\nsource: \"a \\\"quoted\\\" source\"\n"
	if got != want {
		t.Errorf("taskYAML =\n%s\nwant\n%s", got, want)
	}
}
