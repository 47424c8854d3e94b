package grade

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestMetricsAndLowerIsBetter(t *testing.T) {
	want := []string{"accuracy", "auc", "jaccard", "log_loss", "mae", "mean_column_auc", "mean_column_rmse",
		"mean_column_rmsle", "pearson", "qwk", "rmse", "rmsle"}
	if got := Metrics(); !slices.Equal(got, want) {
		t.Fatalf("Metrics() = %v, want %v", got, want)
	}
	lower := map[string]bool{"log_loss": true, "rmse": true, "mae": true, "mean_column_rmse": true, "rmsle": true, "mean_column_rmsle": true}
	for _, m := range want {
		got, err := LowerIsBetter(m)
		if err != nil || got != lower[m] {
			t.Errorf("LowerIsBetter(%q) = %v, %v; want %v", m, got, err, lower[m])
		}
	}
	if _, err := LowerIsBetter("f1"); err == nil || !strings.Contains(err.Error(), `unknown metric "f1"`) {
		t.Errorf("LowerIsBetter(f1) error = %v", err)
	}
}

func TestSpecValidate(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want string // substring of the error; "" means valid
	}{
		{"ok", Spec{"auc", "id", []string{"y"}}, ""},
		{"ok multi", Spec{"log_loss", "id", []string{"a", "b", "c"}}, ""},
		{"unknown metric", Spec{"f1", "id", []string{"y"}}, `unknown metric "f1"`},
		{"no id", Spec{"auc", "", []string{"y"}}, "id column is not set"},
		{"no targets", Spec{"auc", "id", nil}, "no target columns"},
		{"empty target", Spec{"rmse", "id", []string{""}}, "empty target column name"},
		{"target is id", Spec{"mean_column_rmse", "id", []string{"a", "id"}}, `"id" is also the id column`},
		{"repeated target", Spec{"mean_column_auc", "id", []string{"a", "a"}}, `"a" listed twice`},
		{"single-target metric", Spec{"pearson", "id", []string{"a", "b"}}, "exactly one target column"},
		{"log_loss one class", Spec{"log_loss", "id", []string{"a"}}, "at least 2 target columns"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.spec.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tc.want)
			}
		})
	}
}

// fixtures: small answers per metric, used by the invalid-submission table.
var fixtures = map[string]struct {
	spec    Spec
	answers string
}{
	"auc":               {Spec{"auc", "id", []string{"y"}}, "id,y\na,0\nb,1\nc,1\n"},
	"log_loss":          {Spec{"log_loss", "id", []string{"p", "q"}}, "id,p,q\na,1,0\nb,0,1\n"},
	"rmse":              {Spec{"rmse", "id", []string{"y"}}, "id,y\na,1\nb,2\n"},
	"rmsle":             {Spec{"rmsle", "id", []string{"y"}}, "id,y\na,1\nb,2\n"},
	"mean_column_rmsle": {Spec{"mean_column_rmsle", "id", []string{"u", "v"}}, "id,u,v\na,1,1\nb,2,2\n"},
	"qwk":               {Spec{"qwk", "id", []string{"y"}}, "id,y\na,1\nb,2\n"},
	"accuracy_num":      {Spec{"accuracy", "id", []string{"y"}}, "id,y\na,1\nb,2\n"},
	"accuracy_text":     {Spec{"accuracy", "id", []string{"y"}}, "id,y\na,cat\nb,dog\n"},
	"pearson":           {Spec{"pearson", "id", []string{"y"}}, "id,y\na,1\nb,2\nc,4\n"},
	"jaccard":           {Spec{"jaccard", "id", []string{"t"}}, "id,t\na,hello world\nb,bye\n"},
}

func loadFixture(t testing.TB, name string) *Answers {
	t.Helper()
	f, ok := fixtures[name]
	if !ok {
		t.Fatalf("no fixture %q", name)
	}
	a, err := LoadAnswers(f.spec, strings.NewReader(f.answers))
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return a
}

// TestGradeInvalid has one case per validity rule, asserting the reason.
func TestGradeInvalid(t *testing.T) {
	tests := []struct {
		name, fixture, submission, want string
	}{
		{"empty file", "auc", "", "empty file"},
		{"only blank lines", "auc", "\n\r\n\n", "empty file"},
		{"binary garbage", "auc", "\x89PNG\r\n\x1a\n\x00\x00\xff\xd8", "not UTF-8 text (invalid byte at offset 0)"},
		{"header only", "auc", "id,y\n", "no data rows (header only), expected 3"},
		{"missing column", "auc", "id\na\nb\nc\n", `missing column "y"`},
		{"extra column", "auc", "id,y,z\na,0,1\nb,1,1\nc,1,1\n", `unexpected column "z"`},
		{"renamed column", "auc", "id,Y\na,0\nb,1\nc,1\n", `unexpected column "Y"`},
		{"repeated column", "auc", "id,y,y\na,0,0\nb,1,1\nc,1,1\n", `column "y" appears twice in the header`},
		{"short row", "auc", "id,y\na,0\nb\nc,1\n", "row 2: has 1 fields, the header has 2"},
		{"long row", "auc", "id,y\na,0\nb,1,1\nc,1\n", "row 2: has 3 fields, the header has 2"},
		{"too few rows", "auc", "id,y\na,0\nc,1\n", `has 2 rows, expected 3: id "b" is missing`},
		{"duplicated id", "auc", "id,y\na,0\nb,1\nc,1\nb,0\n", `row 4: id "b" appears twice (also row 2)`},
		{"duplicate replaces one", "auc", "id,y\na,0\nb,1\na,1\n", `row 3: id "a" appears twice (also row 1)`},
		{"unknown id", "auc", "id,y\na,0\nzz,1\nc,1\n", `row 2: unknown id "zz"`},
		{"id differs by space", "auc", "id,y\na,0\nb ,1\nc,1\n", `row 2: unknown id "b "`},
		{"NaN", "auc", "id,y\na,0\nb,nan\nc,1\n", `row 2: column "y": "nan" is not a finite number`},
		{"NA word", "auc", "id,y\na,0\nb,NA\nc,1\n", `row 2: column "y": "NA" is not a finite number`},
		{"inf", "rmse", "id,y\na,-inf\nb,1\n", `row 1: column "y": "-inf" is not a finite number`},
		{"overflowing literal", "rmse", "id,y\na,1e999\nb,1\n", `"1e999" is not a finite number`},
		{"not a number", "auc", "id,y\na,0\nb,abc\nc,1\n", `row 2: column "y": "abc" is not a number`},
		{"hex float", "rmse", "id,y\na,0x1p3\nb,1\n", `"0x1p3" is not a number`},
		{"empty number", "auc", "id,y\na,0\nb,\nc,1\n", `row 2: column "y": empty value where a number is needed`},
		{"auc above 1", "auc", "id,y\na,0\nb,1.5\nc,1\n", `row 2: column "y": 1.5 is outside [0, 1]`},
		{"auc below 0", "auc", "id,y\na,-0.1\nb,1\nc,1\n", `row 1: column "y": -0.1 is outside [0, 1]`},
		{"unterminated quote", "auc", "id,y\na,0\n\"b,1\nc,1\n", "row 2: a quoted field is not closed"},
		{"log_loss row sum", "log_loss", "id,p,q\na,0.5,0.6\nb,0,1\n", "row 1: probabilities sum to 1.1, not 1"},
		{"log_loss row sum just outside", "log_loss", "id,p,q\na,0.5,0.50002\nb,0,1\n", "row 1: probabilities sum to 1.00002"},
		{"log_loss value above 1", "log_loss", "id,p,q\na,1.5,-0.5\nb,0,1\n", `row 1: column "p": 1.5 is outside [0, 1]`},
		{"rmsle at -1", "rmsle", "id,y\na,-1\nb,2\n", `row 1: column "y": -1 is not > -1`},
		{"mean_column_rmsle below -1", "mean_column_rmsle", "id,u,v\na,1,1\nb,2,-3\n", `row 2: column "v": -3 is not > -1`},
		{"qwk fraction", "qwk", "id,y\na,1\nb,2.5\n", `row 2: column "y": "2.5" is not an integer label`},
		{"accuracy text for numeric labels", "accuracy_num", "id,y\na,1\nb,two\n", `row 2: column "y": "two" is not a number (the answer labels are numbers)`},
		{"accuracy numbers for text labels", "accuracy_text", "id,y\na,1\nb,2\n", "every submitted label is a number but the answer labels are text"},
		{"accuracy empty label", "accuracy_text", "id,y\na,cat\nb,\n", `row 2: column "y": empty label`},
		{"pearson constant", "pearson", "id,y\na,3\nb,3\nc,3\n", "every prediction is 3; Pearson r of a constant is undefined"},
		{"rmse overflow", "rmse", "id,y\na,1e300\nb,-1e300\n", "score is not finite"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := loadFixture(t, tc.fixture)
			got := a.Grade(strings.NewReader(tc.submission))
			if got.Valid || got.Score != nil {
				t.Fatalf("Grade() = valid %v score %v, want invalid", got.Valid, *got.Score)
			}
			if !strings.Contains(got.Error, tc.want) {
				t.Fatalf("Grade() error = %q, want it to contain %q", got.Error, tc.want)
			}
			if strings.ContainsAny(got.Error, "\n\r") {
				t.Fatalf("error is not one line: %q", got.Error)
			}
		})
	}
}

// TestGradeFormats: the same submission written the ways real files are
// written must always get the same score.
func TestGradeFormats(t *testing.T) {
	// answers a,b,c = 0,1,1; predictions 0.2, 0.7, 0.2 → AUC = (1 + 0.5) / 2.
	const want = 0.75
	tests := []struct{ name, submission string }{
		{"plain", "id,y\na,0.2\nb,0.7\nc,0.2\n"},
		{"no final newline", "id,y\na,0.2\nb,0.7\nc,0.2"},
		{"CRLF", "id,y\r\na,0.2\r\nb,0.7\r\nc,0.2\r\n"},
		{"lone CR", "id,y\ra,0.2\rb,0.7\rc,0.2\r"},
		{"BOM", "\ufeffid,y\na,0.2\nb,0.7\nc,0.2\n"},
		{"columns swapped", "y,id\n0.2,a\n0.7,b\n0.2,c\n"},
		{"rows shuffled", "id,y\nc,0.2\na,0.2\nb,0.7\n"},
		{"blank lines", "\nid,y\n\na,0.2\n\nb,0.7\nc,0.2\n\n\n"},
		{"quoted fields", "\"id\",\"y\"\n\"a\",\"0.2\"\n\"b\",0.7\nc,\"0.2\"\n"},
		{"quoted CRLF", "\"id\",y\r\n\"a\",0.2\r\nb,0.7\r\nc,0.2"},
		{"spaces around numbers", "id,y\na, 0.2\nb,0.7 \nc,\t0.2\n"},
		{"number spellings", "id,y\na,.2\nb,7e-1\nc,+2.0E-01\n"},
	}
	a := loadFixture(t, "auc")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := a.Grade(strings.NewReader(tc.submission))
			if !got.Valid {
				t.Fatalf("invalid: %s", got.Error)
			}
			if *got.Score != want {
				t.Fatalf("score %v, want %v", *got.Score, want)
			}
		})
	}
}

func TestQuotedFieldsWithCommasAndNewlines(t *testing.T) {
	spec := Spec{"jaccard", "id", []string{"text"}}
	answers := "id,text\n\"x,1\",\"hello, world\"\n\"y\n2\",\"say \"\"hi\"\"\"\n"
	a, err := LoadAnswers(spec, strings.NewReader(answers))
	if err != nil {
		t.Fatal(err)
	}
	if got := a.IDs(); !slices.Equal(got, []string{"x,1", "y\n2"}) {
		t.Fatalf("IDs() = %q", got)
	}
	// Row 1: {"hello,", "world"} vs {"hello,", "world"} = 1; row 2: {"say", "\"hi\""} vs {"say"} = 1/2.
	sub := "text,id\r\n\"HELLO, World\",\"x,1\"\r\nsay,\"y\n2\"\r\n"
	got := a.Grade(strings.NewReader(sub))
	if !got.Valid || *got.Score != 0.75 {
		t.Fatalf("Grade() = %+v (score %v), want 0.75", got, scoreOf(got))
	}
}

func scoreOf(r Result) any {
	if r.Score == nil {
		return nil
	}
	return *r.Score
}

func TestMetricValues(t *testing.T) {
	// Hand-checked values, independent of the Python reference.
	tests := []struct {
		name    string
		spec    Spec
		answers string
		sub     string
		want    float64
	}{
		{"accuracy numeric 3.0 is 3", Spec{"accuracy", "id", []string{"y"}}, "id,y\na,3\nb,4\n", "id,y\na,3.0\nb, 5\n", 0.5},
		{"accuracy text exact", Spec{"accuracy", "id", []string{"y"}}, "id,y\na,cat\nb,dog\n", "id,y\na,cat\nb,dog \n", 0.5},
		{"rmse", Spec{"rmse", "id", []string{"y"}}, "id,y\na,0\nb,0\n", "id,y\na,3\nb,4\n", math.Sqrt(12.5)},
		{"mae", Spec{"mae", "id", []string{"y"}}, "id,y\na,0\nb,0\n", "id,y\na,3\nb,-4\n", 3.5},
		{"mean_column_rmse", Spec{"mean_column_rmse", "id", []string{"u", "v"}}, "id,u,v\na,0,0\nb,0,0\n", "id,u,v\na,1,3\nb,1,3\n", 2},
		{"rmsle", Spec{"rmsle", "id", []string{"y"}}, "id,y\na,0\n", "id,y\na,1.718281828459045\n", 1},
		{"log_loss perfect clipped", Spec{"log_loss", "id", []string{"p", "q"}}, "id,p,q\na,1,0\n", "id,p,q\na,1,0\n", -math.Log(1 - 0x1p-52)},
		{"log_loss zero on truth", Spec{"log_loss", "id", []string{"p", "q"}}, "id,p,q\na,1,0\n", "id,p,q\na,0,1\n", -math.Log(0x1p-52)},
		{"qwk perfect", Spec{"qwk", "id", []string{"y"}}, "id,y\na,1\nb,5\n", "id,y\na,1\nb,5\n", 1},
		{"qwk uses ranks not values", Spec{"qwk", "id", []string{"y"}}, "id,y\na,1\nb,2\nc,9\n", "id,y\na,1\nb,9\nc,9\n", 0.8}, // on label values it would be 0.495
		{"pearson two rows is sign", Spec{"pearson", "id", []string{"y"}}, "id,y\na,1\nb,2\n", "id,y\na,5\nb,-3\n", -1},
		{"jaccard final sigma", Spec{"jaccard", "id", []string{"t"}}, "id,t\na,ΟΔΟΣ\n", "id,t\na,οδος\n", 1},
		{"jaccard empty prediction", Spec{"jaccard", "id", []string{"t"}}, "id,t\na,x y\n", "id,t\na,\n", 0},
		{"auc all ties", Spec{"auc", "id", []string{"y"}}, "id,y\na,0\nb,1\n", "id,y\na,0.5\nb,0.5\n", 0.5},
		{"mean_column_auc", Spec{"mean_column_auc", "id", []string{"u", "v"}}, "id,u,v\na,0,1\nb,1,0\n", "id,u,v\na,0,0\nb,1,1\n", 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := LoadAnswers(tc.spec, strings.NewReader(tc.answers))
			if err != nil {
				t.Fatal(err)
			}
			got := a.Grade(strings.NewReader(tc.sub))
			if !got.Valid {
				t.Fatalf("invalid: %s", got.Error)
			}
			if math.Abs(*got.Score-tc.want) > 1e-12 {
				t.Fatalf("score %.17g, want %.17g", *got.Score, tc.want)
			}
		})
	}
}

func TestLoadAnswersErrors(t *testing.T) {
	tests := []struct {
		name    string
		spec    Spec
		answers string
		want    string
	}{
		{"bad spec", Spec{"f1", "id", []string{"y"}}, "id,y\na,1\n", `spec: unknown metric "f1"`},
		{"empty", Spec{"rmse", "id", []string{"y"}}, "", "empty file"},
		{"no rows", Spec{"rmse", "id", []string{"y"}}, "id,y\n", "no rows"},
		{"missing column", Spec{"rmse", "id", []string{"y"}}, "id\na\n", `missing column "y"`},
		{"duplicate id", Spec{"rmse", "id", []string{"y"}}, "id,y\na,1\nb,2\na,3\n", `row 3: id "a" appears twice (also row 1)`},
		{"empty id", Spec{"rmse", "id", []string{"y"}}, "id,y\na,1\n,2\n", "row 2: empty id"},
		{"bad value", Spec{"rmse", "id", []string{"y"}}, "id,y\na,1\nb,x\n", `row 2: column "y": "x" is not a number`},
		{"auc not binary", Spec{"auc", "id", []string{"y"}}, "id,y\na,1\nb,2\n", `row 2: column "y": 2 is not 0 or 1`},
		{"auc one class", Spec{"auc", "id", []string{"y"}}, "id,y\na,1\nb,1\n", `column "y": all 2 answers are 1; ROC AUC needs both classes`},
		{"mean_column_auc one class", Spec{"mean_column_auc", "id", []string{"u", "v"}}, "id,u,v\na,1,0\nb,0,0\n", `column "v": all 2 answers are 0`},
		{"log_loss two ones", Spec{"log_loss", "id", []string{"p", "q"}}, "id,p,q\na,1,1\n", "row 1: has 2 classes set to 1"},
		{"log_loss no one", Spec{"log_loss", "id", []string{"p", "q"}}, "id,p,q\na,0,0\n", "row 1: has 0 classes set to 1"},
		{"qwk one label", Spec{"qwk", "id", []string{"y"}}, "id,y\na,1\nb,1\n", "all answers are 1; quadratic weighted kappa needs two labels"},
		{"qwk fraction", Spec{"qwk", "id", []string{"y"}}, "id,y\na,1.5\n", `row 1: column "y": "1.5" is not an integer label`},
		{"pearson constant", Spec{"pearson", "id", []string{"y"}}, "id,y\na,1\nb,1\n", "Pearson r is undefined"},
		{"rmsle at -1", Spec{"rmsle", "id", []string{"y"}}, "id,y\na,-1\n", `row 1: column "y": -1 is not > -1`},
		{"jaccard no words", Spec{"jaccard", "id", []string{"t"}}, "id,t\na,\" \"\n", `row 1: column "t": no words`},
		{"accuracy empty label", Spec{"accuracy", "id", []string{"y"}}, "id,y\na,\n", `row 1: column "y": empty label`},
		{"ragged row", Spec{"rmse", "id", []string{"y"}}, "id,y\na,1,2\n", "row 1: has 3 fields, the header has 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadAnswers(tc.spec, strings.NewReader(tc.answers))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadAnswers() error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	spec := fixtures["auc"].spec
	ap := filepath.Join(dir, "answers.csv")
	if err := os.WriteFile(ap, []byte("id,y\na,0\nb,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadAnswersFile(spec, ap); err == nil || !strings.Contains(err.Error(), ap+": row 2") {
		t.Fatalf("LoadAnswersFile error = %v, want it to name the path and row", err)
	}
	if _, err := LoadAnswersFile(spec, filepath.Join(dir, "none.csv")); err == nil {
		t.Fatal("LoadAnswersFile on a missing file: no error")
	}
	if err := os.WriteFile(ap, []byte(fixtures["auc"].answers), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := LoadAnswersFile(spec, ap)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.IDs(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("IDs() = %q", got)
	}
	sp := filepath.Join(dir, "submission.csv")
	if err := os.WriteFile(sp, []byte("id,y\na,0.1\nb,0.9\nc,0.8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := a.GradeFile(sp); !got.Valid || *got.Score != 1 {
		t.Fatalf("GradeFile = %+v", got)
	}
	for _, p := range []string{filepath.Join(dir, "missing.csv"), dir} {
		got := a.GradeFile(p)
		if got.Valid || !strings.HasPrefix(got.Error, "cannot read submission") {
			t.Fatalf("GradeFile(%s) = %+v, want invalid 'cannot read submission'", p, got)
		}
	}
}

// TestParallelErrorsAreDeterministic: a large file is read by several
// goroutines; the reported problem must still be the first in file order.
func TestParallelErrorsAreDeterministic(t *testing.T) {
	const n = 100000
	var ans, sub strings.Builder
	ans.WriteString("id,y\n")
	sub.WriteString("id,y\n")
	for i := 0; i < n; i++ {
		ans.WriteString("r" + itoa(i) + "," + itoa(i%2) + "\n")
		v := "0.5"
		switch i {
		case 70000:
			v = "bad"
		case 90000:
			v = "2"
		}
		sub.WriteString("r" + itoa(i) + "," + v + "\n")
	}
	a, err := LoadAnswers(fixtures["auc"].spec, strings.NewReader(ans.String()))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		got := a.Grade(strings.NewReader(sub.String()))
		if want := `row 70001: column "y": "bad" is not a number`; got.Error != want {
			t.Fatalf("Grade() error = %q, want %q", got.Error, want)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestConcurrentGrades: one Answers serves many graders at once (the trainer
// grades episodes in parallel); run with -race.
func TestConcurrentGrades(t *testing.T) {
	a := loadFixture(t, "auc")
	subs := []struct {
		sub   string
		valid bool
	}{
		{"id,y\na,0.1\nb,0.9\nc,0.8\n", true},
		{"id,y\nc,0.2\na,0.2\nb,0.7\n", true},
		{"id,y\na,0.1\nb,0.9\n", false},
		{"\"id\",y\r\na,0\r\nb,1\r\nc,1\r\n", true},
	}
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func() {
			for i := 0; i < 200; i++ {
				s := subs[(g+i)%len(subs)]
				if r := a.Grade(strings.NewReader(s.sub)); r.Valid != s.valid {
					done <- fmt.Errorf("%q: %+v", s.sub, r)
					return
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// TestLogLossSklearn15Golden checks log_loss against numbers written by
// testdata/logloss_sklearn15.py (scikit-learn >= 1.5's formula in numpy).
func TestLogLossSklearn15Golden(t *testing.T) {
	raw, err := os.ReadFile("testdata/logloss_sklearn15.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name, Answers, Submission string
		Score                     float64
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		header := strings.SplitN(c.Answers, "\n", 2)[0]
		cols := strings.Split(header, ",")
		a, err := LoadAnswers(Spec{"log_loss", cols[0], cols[1:]}, strings.NewReader(c.Answers))
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		r := a.Grade(strings.NewReader(c.Submission))
		if !r.Valid {
			t.Errorf("%s: invalid: %s", c.Name, r.Error)
			continue
		}
		if d := math.Abs(*r.Score - c.Score); d > 1e-12*max(1, math.Abs(c.Score)) {
			t.Errorf("%s: score %.17g, scikit-learn 1.5 formula %.17g", c.Name, *r.Score, c.Score)
		}
	}
}

func TestDirection(t *testing.T) {
	for _, tc := range []struct{ metric, want string }{{"rmse", "lower is better"}, {"log_loss", "lower is better"}, {"auc", "higher is better"}, {"qwk", "higher is better"}} {
		lower, err := LowerIsBetter(tc.metric)
		if got := Direction(lower); err != nil || got != tc.want {
			t.Errorf("%s: %q (%v), want %q", tc.metric, got, err, tc.want)
		}
	}
}
