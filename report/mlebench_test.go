package report

import (
	"bytes"
	"strings"
	"testing"
)

// A competition's row comes from its run's summary.json (best score, rank)
// and episodes (valid rate, cancelled ones left out); the totals are
// percentages of competitions; a run without a rank is an error.
func TestMLEBenchTable(t *testing.T) {
	run := Run{
		Summary: map[string]any{"best_score": 0.25, "rank": map[string]any{"medal": "silver", "above_median": true,
			"gold_threshold": 0.2, "silver_threshold": 0.3, "bronze_threshold": 0.35, "median_threshold": 0.4, "lower_is_better": true}},
		Episodes: []Episode{{Valid: true}, {Valid: false}, {Valid: true}, {Valid: true}, {Cancelled: true}},
	}
	a, err := MLEBenchRowOf("a", "runs/a", run)
	if err != nil {
		t.Fatal(err)
	}
	if a.BestScore == nil || *a.BestScore != 0.25 || a.Episodes != 4 || a.ValidRate != 0.75 || a.Medal == nil || *a.Medal != "silver" ||
		!a.AboveMedian || a.Rank.SilverThreshold != 0.3 || !a.Rank.LowerIsBetter {
		t.Errorf("row: %+v", a)
	}
	b, err := MLEBenchRowOf("b", "runs/b", Run{Summary: map[string]any{"best_score": nil, "rank": map[string]any{"medal": nil}}})
	if err != nil || b.BestScore != nil || b.Medal != nil || b.AboveMedian {
		t.Errorf("row without a valid program: %+v, %v", b, err)
	}
	if _, err := MLEBenchRowOf("c", "runs/c", Run{Summary: map[string]any{"best_score": 1.0}}); err == nil {
		t.Error("a run without a rank made a row")
	}
	table, err := NewMLEBenchTable([]MLEBenchRow{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if table.ValidPct != 50 || table.AboveMedianPct != 50 || table.AnyMedalPct != 50 || table.SilverPct != 50 || table.GoldPct != 0 {
		t.Errorf("totals: %+v", table)
	}
	var out bytes.Buffer
	if err := table.Print(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"a  ", "0.25", "75% of 4", "silver", "none", "2 competitions: valid submission 50.0%, above median 50.0%, any medal 50.0%"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := NewMLEBenchTable(nil); err == nil {
		t.Error("an empty table")
	}
}
