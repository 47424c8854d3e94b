package grade

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestRankGolden places scores on made-up leaderboards of every Kaggle
// team-count band and compares with MLE-bench's own Grader.rank_score
// (testdata/mlebench_rank/rank_golden.py).
func TestRankGolden(t *testing.T) {
	dir := filepath.Join("testdata", "mlebench_rank")
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var boards map[string][]struct {
		Score           *float64 `json:"score"`
		Medal           *string  `json:"medal"`
		AboveMedian     bool     `json:"above_median"`
		GoldThreshold   float64  `json:"gold_threshold"`
		SilverThreshold float64  `json:"silver_threshold"`
		BronzeThreshold float64  `json:"bronze_threshold"`
		MedianThreshold float64  `json:"median_threshold"`
		LowerIsBetter   bool     `json:"lower_is_better"`
	}
	if err := json.Unmarshal(raw, &boards); err != nil {
		t.Fatal(err)
	}
	if len(boards) < 10 {
		t.Fatalf("only %d leaderboards", len(boards))
	}
	str := func(s *string) string {
		if s == nil {
			return "null"
		}
		return *s
	}
	for name, queries := range boards {
		lb, err := LoadLeaderboardFile(filepath.Join(dir, name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range queries {
			r := lb.Rank(q.Score)
			where := name + " score "
			if q.Score == nil {
				where += "null"
			} else {
				where += fmtFloat(*q.Score)
			}
			if str(r.Medal) != str(q.Medal) || r.AboveMedian != q.AboveMedian || r.LowerIsBetter != q.LowerIsBetter {
				t.Errorf("%s: medal %s above_median %v lower %v; MLE-bench %s %v %v", where, str(r.Medal), r.AboveMedian, r.LowerIsBetter,
					str(q.Medal), q.AboveMedian, q.LowerIsBetter)
			}
			for _, th := range [][2]float64{{r.GoldThreshold, q.GoldThreshold}, {r.SilverThreshold, q.SilverThreshold},
				{r.BronzeThreshold, q.BronzeThreshold}, {r.MedianThreshold, q.MedianThreshold}} {
				if math.Abs(th[0]-th[1]) > 1e-12 {
					t.Errorf("%s: thresholds %+v; MLE-bench gold %v silver %v bronze %v median %v", where, r,
						q.GoldThreshold, q.SilverThreshold, q.BronzeThreshold, q.MedianThreshold)
					break
				}
			}
		}
	}
}

func fmtFloat(v float64) string { return pyFloatRepr(v) }

func TestLeaderboardErrors(t *testing.T) {
	for _, text := range []string{"team,points\na,1\n", "team,score\n", "team,score\na,high\n", ""} {
		if _, err := ParseLeaderboard([]byte(text)); err == nil {
			t.Errorf("%q: accepted", text)
		}
	}
}
