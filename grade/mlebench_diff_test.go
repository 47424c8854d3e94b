package grade

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// TestMLEBenchDiffCheck compares with MLE-bench on randomly mutated
// submissions written by testdata/mlebench/diffcheck.py into the folder named
// by MLERL_MLEBENCH_DIFF (skipped without it: the files are not kept).
func TestMLEBenchDiffCheck(t *testing.T) {
	dir := os.Getenv("MLERL_MLEBENCH_DIFF")
	if dir == "" {
		t.Skip("MLERL_MLEBENCH_DIFF is not set (see testdata/mlebench/diffcheck.py)")
	}
	exps, err := filepath.Glob(filepath.Join(dir, "*", "expected.json"))
	if err != nil || len(exps) == 0 {
		t.Fatalf("no expected.json under %s: %v", dir, err)
	}
	total := 0
	for _, exp := range exps {
		id := filepath.Base(filepath.Dir(exp))
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
			total++
			want := cases[name]
			got := a.GradeFile(filepath.Join(filepath.Dir(exp), name+".csv"))
			if got.Valid != want.Valid || (want.Valid && math.Abs(*got.Score-*want.Score) > 1e-9*max(1, math.Abs(*want.Score))) {
				t.Errorf("%s/%s: mlerl %+v; MLE-bench %+v", id, name, got, want)
			}
		}
	}
	t.Logf("%d submissions compared", total)
}
