package grade

import (
	"math"
	"strings"
	"testing"
)

// fuzzFixtures are the answers FuzzGrade grades against; the first input
// byte picks one.
var fuzzFixtures = []string{"auc", "log_loss", "rmse", "rmsle", "mean_column_rmsle", "qwk",
	"accuracy_num", "accuracy_text", "pearson", "jaccard"}

// FuzzGrade: whatever the submission bytes, Grade never panics and returns
// either a valid finite score or an invalid one-line reason; and reading a
// file in several pieces (as large files are, one per core) gives the same
// result as reading it in one.
func FuzzGrade(f *testing.F) {
	f.Add(byte(0), []byte("id,y\na,0.1\nb,0.9\nc,0.5\n"))
	f.Add(byte(1), []byte("id,p,q\r\na,0.3,0.7\r\nb,1,0\r\n"))
	f.Add(byte(9), []byte("t,id\n\"hello, World\",a\nbye,b"))
	answers := make([]*Answers, len(fuzzFixtures))
	for i, name := range fuzzFixtures {
		answers[i] = loadFixture(f, name)
	}
	f.Fuzz(func(t *testing.T, which byte, sub []byte) {
		a := answers[int(which)%len(answers)]
		got := a.Grade(strings.NewReader(string(sub)))
		checkResult(t, got)

		doc, err := splitDoc(sub)
		if err != nil {
			return
		}
		roles, err := columnRoles(a.spec, doc.header)
		if err != nil {
			return
		}
		one := a.gradeDoc(doc, roles, 1)
		three := a.gradeDoc(doc, roles, 3)
		if one.Valid != three.Valid || one.Error != three.Error ||
			one.Valid && math.Abs(*one.Score-*three.Score) > 1e-12 {
			t.Fatalf("one part: %+v %v; three parts: %+v %v", one, scoreOf(one), three, scoreOf(three))
		}
	})
}

func checkResult(t *testing.T, r Result) {
	t.Helper()
	if r.Valid {
		if r.Score == nil || math.IsNaN(*r.Score) || math.IsInf(*r.Score, 0) || r.Error != "" {
			t.Fatalf("valid result with score %v, error %q", scoreOf(r), r.Error)
		}
		return
	}
	if r.Score != nil || r.Error == "" || strings.ContainsAny(r.Error, "\n\r") {
		t.Fatalf("invalid result with score %v, error %q", scoreOf(r), r.Error)
	}
}
