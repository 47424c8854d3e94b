package report

import (
	"fmt"
	"html"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// runColors tell overlaid runs apart; a single run keeps the charts' own colours.
var runColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"}

func runColor(i int) string { return runColors[i%len(runColors)] }

// Label says what kind of run r is, from its run.json: the legend of a
// comparison (RL against --no-learn, duration-aware against naive).
func Label(r Run) string {
	c := r.Config
	if c == nil {
		return "no run.json"
	}
	var parts []string
	if p, ok := c["policy"].(string); ok && p != "" {
		parts = append(parts, p+" policy")
	}
	switch {
	case c["no_learn"] == true:
		parts = append(parts, "--no-learn (no updates)")
	case c["duration_aware"] == false:
		parts = append(parts, "RL, naive updates")
	default:
		parts = append(parts, "RL, duration-aware")
	}
	if b, ok := c["batch"].(float64); ok {
		parts = append(parts, "batch "+strconv.Itoa(int(b)))
	}
	if s, ok := c["seed"].(float64); ok {
		parts = append(parts, "seed "+strconv.Itoa(int(s)))
	}
	if ts, ok := c["tasks"].([]any); ok {
		var names []string
		for _, t := range ts {
			names = append(names, filepath.Base(fmt.Sprint(t)))
		}
		parts = append(parts, "on "+strings.Join(names, ","))
	}
	return strings.Join(parts, ", ")
}

// Legend names each overlaid run in its colour.
func Legend(runs []Run) string {
	var b strings.Builder
	b.WriteString(`<ul class="legend" id="legend">`)
	for i, r := range runs {
		fmt.Fprintf(&b, `<li><span class="sw" style="background:%s"></span><b>%s</b> — %s</li>`,
			runColor(i), html.EscapeString(r.Name), html.EscapeString(Label(r)))
	}
	b.WriteString("</ul>\n")
	if len(runs) > 1 {
		b.WriteString(`<p class="note">Solid lines: best score; dashed: mean reward per batch. All runs share one time axis (time since each run started).</p>` + "\n")
	}
	return b.String()
}

// Progress is what train's progress line says, from the records alone.
type Progress struct {
	Episodes int      `json:"episodes"`
	Valid    int      `json:"valid"`
	Updates  int      `json:"updates"`
	Running  int      `json:"running"` // at the last update
	Best     *float64 `json:"best_score"`
	ElapsedS float64  `json:"elapsed_s"`
	BudgetS  float64  `json:"budget_s"`
	Finished bool     `json:"finished"` // summary.json is written
}

// ProgressOf counts r's records.
func ProgressOf(r Run) Progress {
	p := Progress{Episodes: len(r.Episodes), Updates: len(r.Metrics), Finished: r.Summary != nil}
	for _, e := range r.Episodes {
		if e.Valid {
			p.Valid++
		}
		if e.DoneS != nil {
			p.ElapsedS = math.Max(p.ElapsedS, *e.DoneS)
		}
	}
	if n := len(r.Metrics); n > 0 {
		last := r.Metrics[n-1]
		p.Best, p.Running = last.BestScore, last.InFlight
		p.ElapsedS = math.Max(p.ElapsedS, last.TimeS)
	}
	if r.Best != nil && r.Best.Result.Score != nil {
		p.Best = r.Best.Result.Score // best/ is written before the update's metrics line
	}
	if e, ok := r.Summary["elapsed_s"].(float64); ok {
		p.ElapsedS, p.Running = e, 0
	}
	if b, ok := r.Config["budget_ns"].(float64); ok {
		p.BudgetS = b / 1e9
	}
	return p
}

// Facts is the run's numbers: progress, settings, and at the end its summary.
func Facts(r Run) string {
	var b strings.Builder
	b.WriteString(`<table class="facts">`)
	row := func(k, v string) {
		fmt.Fprintf(&b, "<tr><td>%s</td><td><b>%s</b></td></tr>", html.EscapeString(k), html.EscapeString(v))
	}
	p := ProgressOf(r)
	if r.Config != nil {
		row("run", Label(r))
	}
	state := "running"
	if p.Finished {
		state = "finished"
	}
	if p.BudgetS > 0 {
		row("time", fmt.Sprintf("%s of %s (%s)", humanDuration(p.ElapsedS), humanDuration(p.BudgetS), state))
	}
	row("episodes recorded", fmt.Sprintf("%d (%d valid)", p.Episodes, p.Valid))
	row("policy updates", fmt.Sprint(p.Updates))
	if !p.Finished && len(r.Metrics) > 0 {
		row("programs running at last update", fmt.Sprint(p.Running))
	}
	if len(r.Metrics) > 0 {
		last := r.Metrics[len(r.Metrics)-1]
		row("run time at last update", humanDuration(last.TimeS))
		if last.DurationAware != nil {
			row("duration-aware updates", fmt.Sprint(*last.DurationAware))
		}
	}
	if p.Best != nil {
		row("best score", fmt.Sprintf("%.4f", *p.Best))
	}
	for _, kv := range rankFacts(r.Summary) {
		row(kv[0], kv[1])
	}
	for _, k := range []string{"dispatched", "completed", "redelivered", "abandoned_at_stop", "reused", "isolation", "stopped"} {
		if v, ok := r.Summary[k]; ok {
			row(k, fmt.Sprint(v))
		}
	}
	b.WriteString("</table>\n")
	return b.String()
}

// rankFacts are the leaderboard rows of the facts: where the best programs
// place on their competitions' leaderboards, as summary.json's "rank" (one
// task) or "ranks" (by task) says.
func rankFacts(summary map[string]any) [][2]string {
	if r, ok := summary["rank"].(map[string]any); ok {
		return [][2]string{{"leaderboard", describeRank(r)}}
	}
	ranks, _ := summary["ranks"].(map[string]any)
	var out [][2]string
	for _, name := range slices.Sorted(maps.Keys(ranks)) {
		if r, ok := ranks[name].(map[string]any); ok {
			out = append(out, [2]string{"leaderboard: " + name, describeRank(r)})
		}
	}
	return out
}

// describeRank says a rank in words: "bronze medal, above median (gold
// 0.2, silver 0.2, bronze 0.3, median 0.4)".
func describeRank(r map[string]any) string {
	medal := "no medal"
	if m, ok := r["medal"].(string); ok {
		medal = m + " medal"
	}
	median := "below median"
	if above, _ := r["above_median"].(bool); above {
		median = "above median"
	}
	num := func(k string) string {
		if v, ok := r[k].(float64); ok {
			return fmt.Sprintf("%.6g", v)
		}
		return "?"
	}
	return fmt.Sprintf("%s, %s (gold %s, silver %s, bronze %s, median %s)", medal, median,
		num("gold_threshold"), num("silver_threshold"), num("bronze_threshold"), num("median_threshold"))
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

// endS is where the shared time axis of runs ends.
func endS(runs []Run) float64 {
	maxT := 0.0
	for _, r := range runs {
		for _, m := range r.Metrics {
			maxT = math.Max(maxT, m.TimeS)
		}
		for _, e := range r.Episodes {
			if e.DoneS != nil {
				maxT = math.Max(maxT, *e.DoneS)
			}
		}
	}
	return maxT
}

func scoreChart(runs []Run) string {
	div, unit := timeUnit(endS(runs))
	c := newChart("training time ("+unit+")", "best score", "mean reward per batch")
	n := 0
	for i, r := range runs {
		var best, reward []pt
		for _, m := range r.Metrics {
			if m.BestScore != nil {
				best = append(best, pt{m.TimeS / div, *m.BestScore})
			}
			reward = append(reward, pt{m.TimeS / div, m.MeanReward})
		}
		n += len(r.Metrics)
		if len(runs) == 1 {
			c.line(best, "#1f77b4", "best score", false)
			c.line(reward, "#d62728", "mean reward", true)
			continue
		}
		c.line(best, runColor(i), r.Name, false)
		c.series = append(c.series, series{pts: reward, color: runColor(i), secondary: true, dashed: true})
	}
	if n == 0 {
		return empty("no policy updates recorded yet")
	}
	return c.svg()
}

func durationChart(runs []Run) string {
	div, unit := timeUnit(endS(runs))
	c := newChart("training time ("+unit+")", "execution time (s)", "")
	n := 0
	for i, r := range runs {
		var dots, line []pt
		for _, e := range r.Episodes {
			if e.DoneS != nil && *e.DoneS > 0 {
				dots = append(dots, pt{*e.DoneS / div, e.DurationS})
			}
		}
		for _, m := range r.Metrics {
			line = append(line, pt{m.TimeS / div, m.MeanDurationS})
		}
		n += len(r.Metrics) + len(r.Episodes)
		if len(runs) == 1 {
			c.dots(dots, "#9ecae1")
			c.line(line, "#08519c", "mean of batch", false)
			continue
		}
		c.dots(dots, runColor(i))
		c.line(line, runColor(i), r.Name, false)
	}
	if n == 0 {
		return empty("no episodes recorded yet")
	}
	return c.svg()
}

func failureChart(runs []Run) string {
	counts := make([]map[string]int, len(runs))
	all := map[string]bool{}
	total := 0
	for i, r := range runs {
		counts[i] = map[string]int{}
		for _, e := range r.Episodes {
			k := failureCategory(e)
			counts[i][k]++
			all[k] = true
		}
		total += len(r.Episodes)
	}
	if total == 0 {
		return empty("no episodes recorded yet")
	}
	cats := []string{"valid submission", "failed before any stage"}
	for _, s := range stageOrder {
		cats = append(cats, "failed after: "+s)
	}
	var other []string
	for k := range all {
		if !contains(cats, k) {
			other = append(other, k)
		}
	}
	sort.Strings(other)
	cats = append(cats, other...)
	var bars []bar
	for _, c := range cats {
		if !all[c] && c != "valid submission" {
			continue
		}
		for i, r := range runs {
			br := bar{n: counts[i][c], total: len(r.Episodes), color: runColor(i)}
			if i == 0 {
				br.label = c
			}
			if len(runs) == 1 {
				br.color = "#d62728"
				if c == "valid submission" {
					br.color = "#2ca02c"
				}
			}
			bars = append(bars, br)
		}
	}
	return hbars(bars, total, len(runs))
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func failureCategory(e Episode) string {
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

// Stage is how far e got, for the episodes table: "valid" or the last stage.
func Stage(e Episode) string {
	return strings.TrimPrefix(failureCategory(e), "failed after: ")
}

func rewardChart(runs []Run) string {
	failed := make([][]float64, len(runs))
	valid := make([][]float64, len(runs))
	fc, vc := make([]string, len(runs)), make([]string, len(runs))
	n := 0
	for i, r := range runs {
		for _, e := range r.Episodes {
			if e.Valid {
				valid[i] = append(valid[i], e.Reward)
			} else {
				failed[i] = append(failed[i], e.Reward)
			}
		}
		n += len(r.Episodes)
		fc[i], vc[i] = runColor(i), runColor(i)
	}
	if n == 0 {
		return empty("no episodes recorded yet")
	}
	if len(runs) == 1 {
		fc[0], vc[0] = "#d62728", "#2ca02c"
	}
	const w, h = 940, 300
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" width="%d" height="%d" viewBox="0 0 %d %d" role="img">`, w, h, w, h)
	b.WriteString(histogram(failed, 0, "failed programs: reward (−10 + 0.1 per stage)", fc, 0, 0.1))
	b.WriteString(histogram(valid, w/2, "valid programs: reward (= score)", vc, 24, 0))
	b.WriteString("</svg>\n")
	return b.String()
}
