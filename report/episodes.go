package report

import (
	"fmt"
	"html"
	"strings"
)

// BestProgram shows DIR/best/: its score, plan and outcome, and the program
// syntax-highlighted.
func BestProgram(r Run) string {
	if r.Best == nil {
		return `<p class="note" id="best-none">No valid program yet.</p>` + "\n"
	}
	res := r.Best.Result
	for _, e := range r.Episodes {
		if e.ID == res.ID && e.ID != "" {
			res = e // the log line also has the plan
			break
		}
	}
	var b strings.Builder
	b.WriteString(`<div id="best">`)
	score := "-"
	if res.Score != nil {
		score = fmt.Sprintf("%.6g", *res.Score)
	}
	fmt.Fprintf(&b, `<p>Score <b>%s</b> — episode %s (%s), ran %.1f s.</p>`, score, html.EscapeString(res.ID), html.EscapeString(res.Kind), res.DurationS)
	b.WriteString(outcome(res))
	b.WriteString(`<pre class="code">` + Highlight(r.Best.Code) + "</pre></div>\n")
	return b.String()
}

// outcome is an episode's plan and what running it produced. The program's
// printed output is not in the run folder (episodes.jsonl keeps only the
// result), so its output here is the stages it reached, its exit and error.
func outcome(e Episode) string {
	var b strings.Builder
	if e.Plan != "" {
		fmt.Fprintf(&b, `<p><b>Plan:</b> %s</p>`, html.EscapeString(e.Plan))
	}
	status := fmt.Sprintf("exit code %d", e.ExitCode)
	if e.TimedOut {
		status += ", timed out"
	}
	if e.Reused {
		status += ", reused (an identical program had already run)"
	}
	if e.Cancelled {
		status += ", cancelled at the end of the run"
	}
	fmt.Fprintf(&b, `<p><b>Output:</b> %s; stages reached: %s.</p>`, html.EscapeString(status), html.EscapeString(strings.Join(e.Stages, " → ")))
	if e.Error != "" {
		fmt.Fprintf(&b, `<pre class="code">%s</pre>`, html.EscapeString(e.Error))
	}
	return b.String()
}

// EpisodeTable is the episodes of r as a table; withPlan puts each plan in
// a collapsed cell, for the offline page that has no detail pane.
func EpisodeTable(r Run, withPlan bool) string {
	var b strings.Builder
	b.WriteString(`<table class="eps" id="eps"><thead><tr><th>#</th><th>done (s)</th><th>kind</th><th>valid</th><th>stage reached</th><th>score</th><th>reward</th><th>duration (s)</th>`)
	if withPlan {
		b.WriteString("<th>plan</th>")
	}
	b.WriteString("</tr></thead><tbody>")
	b.WriteString(EpisodeRows(r, 0, withPlan))
	b.WriteString("</tbody></table>\n")
	return b.String()
}

// EpisodeRows are the table rows of r's episodes from index from on; the
// data- attributes are what the live UI filters on.
func EpisodeRows(r Run, from int, withPlan bool) string {
	var b strings.Builder
	for i := max(from, 0); i < len(r.Episodes); i++ {
		e := r.Episodes[i]
		cls, valid := "bad", "no"
		if e.Valid {
			cls, valid = "ok", "yes"
		}
		score, done := "", ""
		if e.Score != nil {
			score = fmt.Sprintf("%.4g", *e.Score)
		}
		if e.DoneS != nil {
			done = fmt.Sprintf("%.1f", *e.DoneS)
		}
		stage := Stage(e)
		fmt.Fprintf(&b, `<tr class="%s" data-i="%d" data-kind="%s" data-valid="%s" data-stage="%s">`,
			cls, i, html.EscapeString(e.Kind), valid, html.EscapeString(stage))
		fmt.Fprintf(&b, `<td>%d</td><td>%s</td><td>%s</td><td class="valid">%s</td><td>%s</td><td>%s</td><td>%.3g</td><td>%.1f</td>`,
			i+1, done, html.EscapeString(e.Kind), valid, html.EscapeString(stage), score, e.Reward, e.DurationS)
		if withPlan {
			fmt.Fprintf(&b, `<td><details><summary>plan</summary>%s</details></td>`, html.EscapeString(e.Plan))
		}
		b.WriteString("</tr>\n")
	}
	return b.String()
}

// EpisodeDetail opens episode i of r: its program when the run folder has
// it (best/solution.py, or a log that keeps code), otherwise its plan.
func EpisodeDetail(r Run, i int) string {
	if i < 0 || i >= len(r.Episodes) {
		return `<p class="note">No such episode.</p>`
	}
	e := r.Episodes[i]
	var b strings.Builder
	fmt.Fprintf(&b, `<div id="episode-detail"><h3>Episode %d: %s (%s)</h3>`, i+1, html.EscapeString(e.ID), html.EscapeString(e.Kind))
	b.WriteString(outcome(e))
	code := e.Code
	if code == "" && r.Best != nil && r.Best.Result.ID == e.ID {
		code = r.Best.Code
	}
	if code != "" {
		b.WriteString(`<pre class="code program">` + Highlight(code) + "</pre>")
	} else {
		b.WriteString(`<p class="note">The run folder keeps only the best program (best/solution.py); this episode is shown by its plan.</p>`)
	}
	b.WriteString("</div>\n")
	return b.String()
}
