package grade

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
)

// RoundScore rounds a score to 5 decimals as MLE-bench's Grader does before
// ranking it: Python's round(score, 5), correctly rounded from the exact
// binary value. (A grader that returns a numpy float64 rounds through numpy,
// rint(score·10⁵)/10⁵, which differs when score·10⁵ lies within an ulp of a
// half; the scikit-learn graders return Python floats.)
func RoundScore(score float64) float64 {
	if math.IsNaN(score) || math.IsInf(score, 0) {
		return score
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(score, 'f', 5, 64), 64)
	return r
}

// Leaderboard is a competition's leaderboard.csv: one row per team, best
// first, with a "score" column.
type Leaderboard struct {
	scores []float64 // in file order; NaN where a team has no score
}

// Rank is where a score would place on a leaderboard, by MLE-bench's rules
// (its Grader.rank_score): medal thresholds from Kaggle's progression system
// by team count, the median of the leaderboard's scores.
type Rank struct {
	Medal           *string `json:"medal"` // "gold", "silver", "bronze" or null
	AboveMedian     bool    `json:"above_median"`
	GoldThreshold   float64 `json:"gold_threshold"`
	SilverThreshold float64 `json:"silver_threshold"`
	BronzeThreshold float64 `json:"bronze_threshold"`
	MedianThreshold float64 `json:"median_threshold"`
	LowerIsBetter   bool    `json:"lower_is_better"`
}

// LoadLeaderboardFile reads a leaderboard.csv.
func LoadLeaderboardFile(path string) (*Leaderboard, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("leaderboard: %w", err)
	}
	lb, err := ParseLeaderboard(raw)
	if err != nil {
		return nil, fmt.Errorf("leaderboard %s: %w", path, err)
	}
	return lb, nil
}

// ParseLeaderboard reads leaderboard CSV text.
func ParseLeaderboard(raw []byte) (*Leaderboard, error) {
	f, err := readFrame(raw)
	if err != nil {
		return nil, err
	}
	c := f.col("score")
	if c == nil {
		return nil, errors.New(`no "score" column`)
	}
	if !c.numeric() {
		return nil, errors.New(`the "score" column is not numeric`)
	}
	if f.n == 0 {
		return nil, errors.New("no teams")
	}
	return &Leaderboard{scores: slices.Clone(c.nums)}, nil
}

// LowerIsBetter is MLE-bench's guess from the leaderboard: the top score is
// below the bottom one.
func (l *Leaderboard) LowerIsBetter() bool { return l.scores[0] < l.scores[len(l.scores)-1] }

// Rank places score (nil: no valid submission), after rounding it to 5
// decimals as MLE-bench does.
func (l *Leaderboard) Rank(score *float64) Rank {
	n := len(l.scores)
	at := func(pos int) float64 { return l.scores[max(1, min(pos, n))-1] }
	frac := func(f float64) int { return max(1, int(float64(n)*f)) }
	var gold, silver, bronze float64
	switch {
	case n < 100:
		gold, silver, bronze = at(frac(0.1)), at(frac(0.2)), at(frac(0.4))
	case n < 250:
		gold, silver, bronze = at(10), at(frac(0.2)), at(frac(0.4))
	case n < 1000:
		gold, silver, bronze = at(10+int(float64(n)*0.002)), at(50), at(100)
	default:
		gold, silver, bronze = at(10+int(float64(n)*0.002)), at(frac(0.05)), at(frac(0.1))
	}
	r := Rank{GoldThreshold: gold, SilverThreshold: silver, BronzeThreshold: bronze,
		MedianThreshold: median(l.scores), LowerIsBetter: l.LowerIsBetter()}
	if score == nil {
		return r
	}
	s := RoundScore(*score)
	beats := func(th float64) bool {
		if r.LowerIsBetter {
			return s <= th
		}
		return s >= th
	}
	var medal string
	switch {
	case beats(gold):
		medal = "gold"
	case beats(silver):
		medal = "silver"
	case beats(bronze):
		medal = "bronze"
	}
	if medal != "" {
		r.Medal = &medal
	}
	if r.LowerIsBetter {
		r.AboveMedian = s < r.MedianThreshold
	} else {
		r.AboveMedian = s > r.MedianThreshold
	}
	return r
}

// median is pandas' Series.median: NaN skipped, the mean of the middle two
// for an even count.
func median(v []float64) float64 {
	s := make([]float64, 0, len(v))
	for _, x := range v {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return math.NaN()
	}
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
