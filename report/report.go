// Package report renders a run folder's records into DIR/report.html: a page a
// person reads offline (no scripts, no fonts, no CDN — the charts are inline
// SVG generated here) with four charts: best score and mean reward over time,
// execution time over time, where programs fail, and the reward distribution.
//
// It reads only the contract's files (metrics.jsonl, episodes.jsonl,
// summary.json), not the learner's types, so it can render any run folder,
// including one whose writer died mid-line.
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mlerl/mlerl/rl/runfolder"
)

// metric is the part of a metrics.jsonl line the report draws.
type metric struct {
	Update        int      `json:"update"`
	TimeS         float64  `json:"time_s"`
	Episodes      int      `json:"episodes"`
	MeanReward    float64  `json:"mean_reward"`
	BestScore     *float64 `json:"best_score"`
	MeanDurationS float64  `json:"mean_duration_s"`
	WeightsMean   float64  `json:"weights_mean"`
	DurationAware *bool    `json:"duration_aware"`
}

// ep is the part of an episodes.jsonl line the report draws.
type ep struct {
	Episode   string   `json:"episode"`
	Kind      string   `json:"kind"`
	DurationS float64  `json:"duration_s"`
	Stages    []string `json:"stages"`
	Valid     bool     `json:"valid"`
	Score     *float64 `json:"score"`
	Reward    float64  `json:"reward"`
	TimedOut  bool     `json:"timed_out"`
	DoneS     *float64 `json:"completed_s"`
}

// The instrumenter's stages in program order (SPEC.md §2).
var stageOrder = []string{"imported packages", "loaded data", "defined model", "training loss", "trained model", "test loss", "predicted test labels"}

// Write renders DIR/report.html from DIR's records.
func Write(dir string) error {
	ms, _, err := runfolder.ReadJSONL[metric](filepath.Join(dir, "metrics.jsonl"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("report: %w", err)
	}
	eps, _, err := runfolder.ReadJSONL[ep](filepath.Join(dir, "episodes.jsonl"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("report: %w", err)
	}
	var summary map[string]any
	if b, err := os.ReadFile(filepath.Join(dir, "summary.json")); err == nil {
		_ = json.Unmarshal(b, &summary) // a missing or broken summary only loses the header line
	}
	page := render(filepath.Base(filepath.Clean(dir)), ms, eps, summary)
	tmp := filepath.Join(dir, ".report.html.tmp")
	if err := os.WriteFile(tmp, []byte(page), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "report.html")); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

func render(name string, ms []metric, eps []ep, summary map[string]any) string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/>
<title>mlerl run ` + html.EscapeString(name) + `</title>
<style>
body{font-family:sans-serif;max-width:980px;margin:24px auto;color:#222;background:#fff}
h1{font-size:22px} h2{font-size:17px;margin:28px 0 4px} p.note{color:#555;font-size:13px;margin:2px 0 8px}
table.facts{border-collapse:collapse;font-size:14px} table.facts td{padding:2px 14px 2px 0}
svg.chart{display:block;border:1px solid #ddd;background:#fff}
svg text{font-family:sans-serif}
</style></head><body>
`)
	fmt.Fprintf(&b, "<h1>Training run: %s</h1>\n", html.EscapeString(name))
	b.WriteString(facts(ms, eps, summary))

	b.WriteString("<h2>1. Best score and mean reward over time</h2>\n")
	b.WriteString(`<p class="note">Best score: the highest grader score of any valid program so far (left axis). Mean reward: the average reward of each update's batch (right axis; failures earn −10 + 0.1 per stage reached).</p>` + "\n")
	b.WriteString(scoreChart(ms))

	b.WriteString("<h2>2. Execution time over time</h2>\n")
	b.WriteString(`<p class="note">Line: mean execution time of each update's batch. Dots: single episodes at the time they completed. A falling line means the policy is drifting to faster programs.</p>` + "\n")
	b.WriteString(durationChart(ms, eps))

	b.WriteString("<h2>3. Where programs fail</h2>\n")
	b.WriteString(`<p class="note">Every episode once: valid submissions, and for the others the last progress stage the instrumentation saw before the program stopped.</p>` + "\n")
	b.WriteString(failureChart(eps))

	b.WriteString("<h2>4. Reward distribution</h2>\n")
	b.WriteString(`<p class="note">Rewards of all episodes. Failed programs (left panel) earn −10 + 0.1 per stage; valid ones (right panel) earn their score (negated when lower is better).</p>` + "\n")
	b.WriteString(rewardChart(eps))
	b.WriteString("</body></html>\n")
	return b.String()
}

func facts(ms []metric, eps []ep, summary map[string]any) string {
	var b strings.Builder
	b.WriteString(`<table class="facts">`)
	row := func(k, v string) {
		fmt.Fprintf(&b, "<tr><td>%s</td><td><b>%s</b></td></tr>", html.EscapeString(k), html.EscapeString(v))
	}
	valid := 0
	for _, e := range eps {
		if e.Valid {
			valid++
		}
	}
	row("episodes recorded", fmt.Sprintf("%d (%d valid)", len(eps), valid))
	row("policy updates", fmt.Sprint(len(ms)))
	if len(ms) > 0 {
		last := ms[len(ms)-1]
		row("run time at last update", humanDuration(last.TimeS))
		if last.BestScore != nil {
			row("best score", fmt.Sprintf("%.4f", *last.BestScore))
		}
		if last.DurationAware != nil {
			row("duration-aware updates", fmt.Sprint(*last.DurationAware))
		}
	}
	for _, k := range []string{"dispatched", "completed", "redelivered", "abandoned_at_stop", "reused", "isolation", "stopped"} {
		if v, ok := summary[k]; ok {
			row(k, fmt.Sprint(v))
		}
	}
	b.WriteString("</table>\n")
	return b.String()
}

func humanDuration(s float64) string {
	switch {
	case s >= 7200:
		return fmt.Sprintf("%.1f h", s/3600)
	case s >= 120:
		return fmt.Sprintf("%.1f min", s/60)
	default:
		return fmt.Sprintf("%.1f s", s)
	}
}

// timeUnit picks the unit of a time axis that ends at maxS seconds.
func timeUnit(maxS float64) (float64, string) {
	switch {
	case maxS >= 3*3600:
		return 3600, "h"
	case maxS >= 180:
		return 60, "min"
	default:
		return 1, "s"
	}
}

func scoreChart(ms []metric) string {
	if len(ms) == 0 {
		return empty("no policy updates recorded yet")
	}
	div, unit := timeUnit(ms[len(ms)-1].TimeS)
	var best, reward []pt
	for _, m := range ms {
		if m.BestScore != nil {
			best = append(best, pt{m.TimeS / div, *m.BestScore})
		}
		reward = append(reward, pt{m.TimeS / div, m.MeanReward})
	}
	c := newChart("training time ("+unit+")", "best score", "mean reward per batch")
	c.line(best, "#1f77b4", "best score", false)
	c.line(reward, "#d62728", "mean reward", true)
	return c.svg()
}

func durationChart(ms []metric, eps []ep) string {
	if len(ms) == 0 && len(eps) == 0 {
		return empty("no episodes recorded yet")
	}
	maxT := 0.0
	for _, m := range ms {
		maxT = math.Max(maxT, m.TimeS)
	}
	for _, e := range eps {
		if e.DoneS != nil {
			maxT = math.Max(maxT, *e.DoneS)
		}
	}
	div, unit := timeUnit(maxT)
	var dots, line []pt
	for _, e := range eps {
		if e.DoneS != nil && *e.DoneS > 0 {
			dots = append(dots, pt{*e.DoneS / div, e.DurationS})
		}
	}
	for _, m := range ms {
		line = append(line, pt{m.TimeS / div, m.MeanDurationS})
	}
	c := newChart("training time ("+unit+")", "execution time (s)", "")
	c.dots(dots, "#9ecae1")
	c.line(line, "#08519c", "mean of batch", false)
	return c.svg()
}

func failureChart(eps []ep) string {
	if len(eps) == 0 {
		return empty("no episodes recorded yet")
	}
	counts := map[string]int{}
	for _, e := range eps {
		counts[failureCategory(e)]++
	}
	cats := []string{"valid submission", "failed before any stage"}
	for _, s := range stageOrder {
		cats = append(cats, "failed after: "+s)
	}
	var other []string
	for k := range counts {
		found := false
		for _, c := range cats {
			found = found || c == k
		}
		if !found {
			other = append(other, k)
		}
	}
	sort.Strings(other)
	cats = append(cats, other...)
	var bars []bar
	for _, c := range cats {
		if counts[c] > 0 || c == "valid submission" {
			col := "#d62728"
			if c == "valid submission" {
				col = "#2ca02c"
			}
			bars = append(bars, bar{c, counts[c], col})
		}
	}
	return hbars(bars, len(eps))
}

func failureCategory(e ep) string {
	if e.Valid {
		return "valid submission"
	}
	if len(e.Stages) == 0 {
		return "failed before any stage"
	}
	last, lastIdx := e.Stages[len(e.Stages)-1], -1
	for _, s := range e.Stages {
		for i, o := range stageOrder {
			if s == o && i > lastIdx {
				last, lastIdx = s, i
			}
		}
	}
	return "failed after: " + last
}

func rewardChart(eps []ep) string {
	if len(eps) == 0 {
		return empty("no episodes recorded yet")
	}
	var failed, valid []float64
	for _, e := range eps {
		if e.Valid {
			valid = append(valid, e.Reward)
		} else {
			failed = append(failed, e.Reward)
		}
	}
	const w, h = 940, 300
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" width="%d" height="%d" viewBox="0 0 %d %d" role="img">`, w, h, w, h)
	b.WriteString(histogram(failed, 0, "failed programs: reward (−10 + 0.1 per stage)", "#d62728", 0, 0.1))
	b.WriteString(histogram(valid, w/2, "valid programs: reward (= score)", "#2ca02c", 24, 0))
	b.WriteString("</svg>\n")
	return b.String()
}

func empty(msg string) string {
	return fmt.Sprintf(`<svg class="chart" width="940" height="60" role="img"><text x="20" y="35" font-size="14" fill="#666">%s</text></svg>`+"\n", html.EscapeString(msg))
}
