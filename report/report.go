// Package report renders a run folder's records into views a person reads:
// the run's facts, its best program, four charts (best score and mean reward
// over time, execution time over time, where programs fail, the reward
// distribution) and the episodes. Write puts them into DIR/report.html, one
// offline file (no scripts, no fonts, no CDN — the charts are inline SVG
// generated here); package ui serves the same views live, from the same
// functions, so the two never disagree.
//
// It reads only the contract's files (run.json, metrics.jsonl,
// episodes.jsonl, summary.json, best/), not the learner's types, so it can
// render any run folder, including one whose writer died mid-line.
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"

	"github.com/mlerl/mlerl/rl/runfolder"
)

// Metric is the part of a metrics.jsonl line the views draw.
type Metric struct {
	Update        int      `json:"update"`
	TimeS         float64  `json:"time_s"`
	Episodes      int      `json:"episodes"`
	MeanReward    float64  `json:"mean_reward"`
	BestScore     *float64 `json:"best_score"`
	MeanDurationS float64  `json:"mean_duration_s"`
	WeightsMean   float64  `json:"weights_mean"`
	DurationAware *bool    `json:"duration_aware"`
	InFlight      int      `json:"in_flight"`
}

// Episode is the part of an episodes.jsonl line the views draw.
type Episode struct {
	ID        string   `json:"episode"`
	Task      string   `json:"task"`
	Kind      string   `json:"kind"`
	DurationS float64  `json:"duration_s"`
	Stages    []string `json:"stages"`
	Valid     bool     `json:"valid"`
	Score     *float64 `json:"score"`
	Reward    float64  `json:"reward"`
	TimedOut  bool     `json:"timed_out"`
	ExitCode  int      `json:"exit_code"`
	Error     string   `json:"error"`
	Plan      string   `json:"plan"`
	Code      string   `json:"code"` // only when a writer keeps programs in the log
	Reused    bool     `json:"reused"`
	Cancelled bool     `json:"cancelled"`
	Update    int      `json:"update"`
	DoneS     *float64 `json:"completed_s"`
}

// Best is DIR/best/: the best valid program and its episode result.
type Best struct {
	Code   string
	Result Episode
}

// Run is one run folder's records as the views draw them.
type Run struct {
	Name     string // the folder's base name
	Metrics  []Metric
	Episodes []Episode
	Summary  map[string]any // summary.json; nil while the run is going
	Config   map[string]any // run.json; nil when absent
	Best     *Best          // nil until a valid program is found
}

// The instrumenter's stages in program order (SPEC.md §2).
var stageOrder = []string{"imported packages", "loaded data", "defined model", "training loss", "trained model", "test loss", "predicted test labels"}

// Load reads dir's records. Missing files are empty records (a run that just
// started); a torn last line is skipped; a corrupt middle line is an error.
func Load(dir string) (Run, error) {
	r := Run{Name: filepath.Base(filepath.Clean(dir))}
	var err error
	if r.Metrics, _, err = runfolder.ReadJSONL[Metric](filepath.Join(dir, "metrics.jsonl")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return r, fmt.Errorf("report: %w", err)
	}
	if r.Episodes, _, err = runfolder.ReadJSONL[Episode](filepath.Join(dir, "episodes.jsonl")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return r, fmt.Errorf("report: %w", err)
	}
	r.Summary = ReadObject(filepath.Join(dir, "summary.json"))
	r.Config = ReadObject(filepath.Join(dir, "run.json"))
	r.Best = ReadBest(dir)
	return r, nil
}

// ReadObject reads a JSON object; a missing or broken file is nil, which only
// loses a line of facts.
func ReadObject(path string) map[string]any {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// ReadBest reads DIR/best/ (nil when there is none yet).
func ReadBest(dir string) *Best {
	code, err := os.ReadFile(filepath.Join(dir, "best", "solution.py"))
	if err != nil {
		return nil
	}
	b := &Best{Code: string(code)}
	if raw, err := os.ReadFile(filepath.Join(dir, "best", "result.json")); err == nil {
		_ = json.Unmarshal(raw, &b.Result) // the program is still worth showing
	}
	return b
}

// Write renders DIR/report.html from DIR's records.
func Write(dir string) error {
	r, err := Load(dir)
	if err != nil {
		return err
	}
	page := Page(r)
	tmp := filepath.Join(dir, ".report.html.tmp")
	if err := os.WriteFile(tmp, []byte(page), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "report.html")); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// CSS styles the views, in report.html and in the live UI alike.
const CSS = `body{font-family:sans-serif;max-width:980px;margin:24px auto;color:#222;background:#fff}
h1{font-size:22px} h2{font-size:17px;margin:28px 0 4px} p.note{color:#555;font-size:13px;margin:2px 0 8px}
table.facts{border-collapse:collapse;font-size:14px} table.facts td{padding:2px 14px 2px 0}
svg.chart{display:block;border:1px solid #ddd;background:#fff;max-width:100%;height:auto}
svg text{font-family:sans-serif}
ul.legend{list-style:none;padding:0;font-size:14px} ul.legend li{margin:2px 0}
ul.legend span.sw{display:inline-block;width:22px;height:4px;margin:0 8px 3px 0;vertical-align:middle}
table.eps{border-collapse:collapse;font-size:13px;width:100%} table.eps th,table.eps td{border-bottom:1px solid #eee;padding:3px 6px;text-align:left;vertical-align:top}
table.eps tr.ok td.valid{color:#2ca02c} table.eps tr.bad td.valid{color:#d62728}
pre.code{background:#f7f7f7;border:1px solid #ddd;padding:8px;font-size:12px;overflow:auto;max-height:600px}
pre.code .k{color:#0000b0;font-weight:bold} pre.code .s{color:#a31515} pre.code .c{color:#008000;font-style:italic}
pre.code .n{color:#098658} pre.code .b{color:#795e26}
table.probs{border-collapse:collapse;font-size:13px} table.probs td{padding:1px 6px}
.pbar{display:inline-block;height:9px;background:#1f77b4;vertical-align:middle} .pbar.prior{background:#bbb}
`

// Page is report.html: every view of one run, offline.
func Page(r Run) string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/>
<title>mlerl run ` + html.EscapeString(r.Name) + `</title>
<style>
` + CSS + `</style></head><body>
`)
	fmt.Fprintf(&b, "<h1>Training run: %s</h1>\n", html.EscapeString(r.Name))
	b.WriteString(Facts(r))
	b.WriteString(Charts([]Run{r}))
	b.WriteString("<h2>Best program</h2>\n")
	b.WriteString(BestProgram(r))
	b.WriteString("<h2>Episodes</h2>\n")
	b.WriteString(`<p class="note">In completion order. The plan is the policy's own description of the program.</p>` + "\n")
	b.WriteString(EpisodeTable(r, true))
	b.WriteString("</body></html>\n")
	return b.String()
}

// Charts is the four charts with their titles and notes, for one run or
// several overlaid on one time axis.
func Charts(runs []Run) string {
	var b strings.Builder
	if len(runs) > 1 {
		b.WriteString(Legend(runs))
	}
	b.WriteString("<h2>1. Best score and mean reward over time</h2>\n")
	b.WriteString(`<p class="note">Best score: the highest grader score of any valid program so far (left axis). Mean reward: the average reward of each update's batch (right axis; failures earn −10 + 0.1 per stage reached).</p>` + "\n")
	b.WriteString(scoreChart(runs))

	b.WriteString("<h2>2. Execution time over time</h2>\n")
	b.WriteString(`<p class="note">Line: mean execution time of each update's batch. Dots: single episodes at the time they completed. A falling line means the policy is drifting to faster programs.</p>` + "\n")
	b.WriteString(durationChart(runs))

	b.WriteString("<h2>3. Where programs fail</h2>\n")
	b.WriteString(`<p class="note">Every episode once: valid submissions, and for the others the last progress stage the instrumentation saw before the program stopped.</p>` + "\n")
	b.WriteString(failureChart(runs))

	b.WriteString("<h2>4. Reward distribution</h2>\n")
	b.WriteString(`<p class="note">Rewards of all episodes. Failed programs (left panel) earn −10 + 0.1 per stage; valid ones (right panel) earn their score (negated when lower is better).</p>` + "\n")
	b.WriteString(rewardChart(runs))
	return b.String()
}

func empty(msg string) string {
	return fmt.Sprintf(`<svg class="chart" width="940" height="60" role="img"><text x="20" y="35" font-size="14" fill="#666">%s</text></svg>`+"\n", html.EscapeString(msg))
}
