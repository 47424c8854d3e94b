package grade

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// mlebenchExpected is one case of testdata/mlebench/<id>/expected.json, as
// MLE-bench's own grade.py graded it (testdata/mlebench/golden.py).
type mlebenchExpected struct {
	Valid   bool     `json:"valid"`
	Score   *float64 `json:"score"`
	Rounded *float64 `json:"rounded"`
	Error   string   `json:"error"`
}

func loadGoldenAnswers(t *testing.T, id string) *Answers {
	t.Helper()
	path := filepath.Join("testdata", "mlebench", id, "answers.csv")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := readFrame(raw)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := MLEBenchSpec("mlebench/"+id, fr.names())
	if err != nil {
		t.Fatal(err)
	}
	a, err := LoadMLEBenchAnswers("mlebench/"+id, spec, bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("answers: %v", err)
	}
	return a
}

// TestMLEBenchGolden grades every golden case of every imported competition
// and compares validity and score with what MLE-bench's grade.py returned.
func TestMLEBenchGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "mlebench", "*", "expected.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	covered := map[string]bool{}
	for _, exp := range dirs {
		id := filepath.Base(filepath.Dir(exp))
		covered[id] = true
		t.Run(id, func(t *testing.T) {
			raw, err := os.ReadFile(exp)
			if err != nil {
				t.Fatal(err)
			}
			var cases map[string]mlebenchExpected
			if err := json.Unmarshal(raw, &cases); err != nil {
				t.Fatal(err)
			}
			a := loadGoldenAnswers(t, id)
			names := make([]string, 0, len(cases))
			for n := range cases {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, name := range names {
				want := cases[name]
				t.Run(name, func(t *testing.T) {
					got := a.GradeFile(filepath.Join(filepath.Dir(exp), name+".csv"))
					if got.Valid != want.Valid {
						t.Fatalf("valid = %v (%s), MLE-bench: %v (%s)", got.Valid, got.Error, want.Valid, want.Error)
					}
					if !want.Valid {
						if got.Error == "" || strings.Contains(got.Error, "\n") {
							t.Errorf("error %q: want one non-empty line", got.Error)
						}
						return
					}
					if d := math.Abs(*got.Score - *want.Score); d > 1e-9*max(1, math.Abs(*want.Score)) {
						t.Errorf("score %.17g, MLE-bench %.17g", *got.Score, *want.Score)
					}
					if r := RoundScore(*got.Score); r != *want.Rounded {
						t.Errorf("rounded score %v, MLE-bench %v", r, *want.Rounded)
					}
				})
			}
		})
	}
	for _, id := range MLEBenchCompetitions() {
		if !covered[id] {
			t.Errorf("rule set %s has no golden cases", id)
		}
	}
}

func TestMLEBenchSpecAndGraderErrors(t *testing.T) {
	if _, err := MLEBenchSpec("mlebench/no-such-competition", nil); err == nil || !strings.Contains(err.Error(), "unknown grader") {
		t.Errorf("unknown competition: %v", err)
	}
	if _, err := MLEBenchSpec("kaggle/leaf-classification", nil); err == nil {
		t.Error("a grader without the mlebench/ prefix was accepted")
	}
	s, err := MLEBenchSpec("mlebench/spooky-author-identification", []string{"id", "EAP", "HPL", "MWS"})
	if err != nil || s.Metric != "log_loss" || s.IDColumn != "id" || strings.Join(s.TargetColumns, ",") != "EAP,HPL,MWS" {
		t.Errorf("spooky spec %+v, %v", s, err)
	}
	bad := Spec{Metric: "auc", IDColumn: "id", TargetColumns: []string{"EAP", "HPL"}}
	if err := CheckMLEBenchSpec("mlebench/spooky-author-identification", bad); err == nil {
		t.Error("a spec with the wrong metric was accepted")
	}
	// Answers that break grade.py's asserts are a broken task, not an invalid submission.
	_, err = LoadMLEBenchAnswers("mlebench/random-acts-of-pizza",
		Spec{Metric: "auc", IDColumn: "request_id", TargetColumns: []string{"requester_received_pizza"}},
		strings.NewReader("request_id,requester_received_pizza\nt3_a,1\nt3_b,1\n"))
	if err == nil || !strings.Contains(err.Error(), "one class") {
		t.Errorf("single-class answers: %v", err)
	}
}

func TestPyFloatRepr(t *testing.T) {
	a, b := 0.1, 0.2
	for _, c := range []struct {
		v    float64
		want string
	}{
		{1.5, "1.5"}, {1, "1.0"}, {1e16, "1e+16"}, {1e15, "1000000000000000.0"}, {0.0001, "0.0001"},
		{0.00001, "1e-05"}, {math.Copysign(0, -1), "-0.0"}, {123456789.125, "123456789.125"}, {1.5e-7, "1.5e-07"},
		{math.Inf(1), "inf"}, {a + b, "0.30000000000000004"},
	} {
		v, want := c.v, c.want
		if got := pyFloatRepr(v); got != want {
			t.Errorf("pyFloatRepr(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestReadFrameTypes(t *testing.T) {
	f, err := readFrame([]byte("a,b,c,d,a,,e\n 5 ,1e3,True,x,1,2,NA\n+6,2,false,,2,3,null\n\n  \n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]colType{"a": colInt, "b": colFloat, "c": colBool, "d": colObject, "a.1": colInt, "Unnamed: 5": colInt, "e": colFloat}
	for name, typ := range want {
		c := f.col(name)
		if c == nil {
			t.Fatalf("no column %q in %q", name, f.names())
		}
		if c.typ != typ {
			t.Errorf("column %q: %v, want %v", name, c.typ, typ)
		}
	}
	if f.n != 2 || f.col("a").ints[1] != 6 || !f.col("d").na[1] || !math.IsNaN(f.col("e").nums[0]) {
		t.Errorf("frame read wrong: n=%d %+v", f.n, f)
	}
	if _, err := readFrame([]byte("a,b\n1,2,3\n")); err == nil {
		t.Error("a row longer than the header was accepted")
	}
}

// An imported competition's answers are shared by concurrent grades (the
// trainer grades episodes in parallel); the answers' sort is cached once.
func TestMLEBenchConcurrentGrades(t *testing.T) {
	const id = "tabular-playground-series-may-2022"
	a := loadGoldenAnswers(t, id)
	raw, err := os.ReadFile(filepath.Join("testdata", "mlebench", id, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases map[string]mlebenchExpected
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	want := *cases["ok_shuffled"].Score
	path := filepath.Join("testdata", "mlebench", id, "ok_shuffled.csv")
	errs := make(chan string, 16)
	for g := 0; g < 16; g++ {
		go func() {
			r := a.GradeFile(path)
			if !r.Valid || *r.Score != want {
				errs <- r.Error
				return
			}
			errs <- ""
		}()
	}
	for g := 0; g < 16; g++ {
		if e := <-errs; e != "" {
			t.Errorf("concurrent grade: %s", e)
		}
	}
}
