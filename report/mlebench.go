package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/mlerl/mlerl/grade"
)

// MLEBenchRow is one competition of `mlerl bench mlebench`, in the shape of
// the MLE-bench paper's Table 1, read from the competition's finished run
// folder: the best score and its rank are summary.json's (train ranks it);
// the valid-submission rate counts the episodes that finished.
type MLEBenchRow struct {
	Competition string     `json:"competition"`
	Run         string     `json:"run"`
	BestScore   *float64   `json:"best_score"` // nil: no valid submission
	Episodes    int        `json:"episodes"`   // completed (cancelled ones left out)
	ValidRate   float64    `json:"valid_submission_rate"`
	Medal       *string    `json:"medal"` // "gold", "silver", "bronze" or null
	AboveMedian bool       `json:"above_median"`
	Rank        grade.Rank `json:"rank"`
}

// MLEBenchRowOf reads competition id's row from its run r (Load of the run
// folder dir). A run without a rank was not trained on an imported task (no
// leaderboard.csv) or has not finished.
func MLEBenchRowOf(id, dir string, r Run) (MLEBenchRow, error) {
	row := MLEBenchRow{Competition: id, Run: dir}
	raw, ok := r.Summary["rank"]
	if !ok {
		return row, fmt.Errorf("%s: summary.json has no rank (is the task folder an imported competition with leaderboard.csv?)", dir)
	}
	b, _ := json.Marshal(raw)
	if err := json.Unmarshal(b, &row.Rank); err != nil {
		return row, fmt.Errorf("%s: summary.json rank: %w", dir, err)
	}
	row.Medal, row.AboveMedian = row.Rank.Medal, row.Rank.AboveMedian
	if s, ok := r.Summary["best_score"].(float64); ok {
		row.BestScore = &s
	}
	valid := 0
	for _, e := range r.Episodes {
		if e.Cancelled {
			continue
		}
		row.Episodes++
		if e.Valid {
			valid++
		}
	}
	if row.Episodes > 0 {
		row.ValidRate = float64(valid) / float64(row.Episodes)
	}
	return row, nil
}

// MLEBenchTable is the rows and the paper's totals, each the percentage of
// competitions: with a valid submission, above the median, per medal, any.
type MLEBenchTable struct {
	Competitions   []MLEBenchRow `json:"competitions"`
	ValidPct       float64       `json:"valid_submission_pct"`
	AboveMedianPct float64       `json:"above_median_pct"`
	BronzePct      float64       `json:"bronze_pct"`
	SilverPct      float64       `json:"silver_pct"`
	GoldPct        float64       `json:"gold_pct"`
	AnyMedalPct    float64       `json:"any_medal_pct"`
}

// NewMLEBenchTable totals rows.
func NewMLEBenchTable(rows []MLEBenchRow) (MLEBenchTable, error) {
	t := MLEBenchTable{Competitions: rows}
	if len(rows) == 0 {
		return t, errors.New("no competitions")
	}
	pct := func(n int) float64 { return 100 * float64(n) / float64(len(rows)) }
	var valid, above, medals int
	perMedal := map[string]int{}
	for _, r := range rows {
		if r.BestScore != nil {
			valid++
		}
		if r.AboveMedian {
			above++
		}
		if r.Medal != nil {
			medals++
			perMedal[*r.Medal]++
		}
	}
	t.ValidPct, t.AboveMedianPct, t.AnyMedalPct = pct(valid), pct(above), pct(medals)
	t.BronzePct, t.SilverPct, t.GoldPct = pct(perMedal["bronze"]), pct(perMedal["silver"]), pct(perMedal["gold"])
	return t, nil
}

// Print writes the table as aligned text.
func (t MLEBenchTable) Print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "competition\tbest score\tvalid submissions\tmedal\tabove median")
	for _, r := range t.Competitions {
		best, medal := "none", "-"
		if r.BestScore != nil {
			best = fmt.Sprintf("%.6g", *r.BestScore)
		}
		if r.Medal != nil {
			medal = *r.Medal
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f%% of %d\t%s\t%v\n", r.Competition, best, 100*r.ValidRate, r.Episodes, medal, r.AboveMedian)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d competitions: valid submission %.1f%%, above median %.1f%%, any medal %.1f%% (gold %.1f%%, silver %.1f%%, bronze %.1f%%)\n",
		len(t.Competitions), t.ValidPct, t.AboveMedianPct, t.AnyMedalPct, t.GoldPct, t.SilverPct, t.BronzePct)
	return err
}
