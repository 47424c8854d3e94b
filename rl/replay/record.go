package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/mlerl/mlerl/episode"
)

// Program is one program to record: its code (keyed by KeyOf, so a rendered
// recipe program is keyed by its "# plan: KEY" line) and a short name for
// people reading the table.
type Program struct {
	Note string
	Code string
}

// RowOf is the table row of one real execution of a program keyed key.
func RowOf(key, note string, r episode.Result) Row {
	row := Row{
		Key: key, Task: r.Task, DurationS: r.DurationS, Stages: append([]string{}, r.Stages...),
		Valid: r.Valid, Reward: r.Reward, ExitCode: r.ExitCode, TimedOut: r.TimedOut, Error: r.Error,
		Note: note, Isolation: r.Isolation, Instrumentation: r.Instrumentation,
	}
	if r.Score != nil {
		s := *r.Score
		row.Score = &s
	}
	return row
}

// Recorder runs programs through a real episode runner and writes one Row per
// execution, a line at a time, so a crash loses at most the execution under way.
type Recorder struct {
	// Run executes one job (instrument, sandbox, grade, reward); an error is an
	// infrastructure failure and stops the recording (no row is written for it).
	Run func(ctx context.Context, job episode.Job) (episode.Result, error)
	// Out receives one JSON line per execution, each in a single Write.
	Out io.Writer
	// Sync, when set, is called after each line (e.g. (*os.File).Sync).
	Sync func() error
	// Progress, when set, gets one human line per execution.
	Progress io.Writer
	// Done counts the rows already recorded per key: repeat r of a key is
	// skipped when Done[key] > r, which is how a cut-off recording continues.
	Done map[string]int
}

// RecordSummary says what a Record call did.
type RecordSummary struct {
	Executed, Skipped, Valid int
	Elapsed                  time.Duration
}

// Record runs every program repeats times, repeat-major (every program once,
// then every program again), so a recording cut short still has each plan.
func (rc *Recorder) Record(ctx context.Context, programs []Program, repeats int) (sum RecordSummary, err error) {
	if rc.Run == nil || rc.Out == nil {
		return sum, errors.New("replay: recorder needs Run and Out")
	}
	if repeats < 1 {
		return sum, fmt.Errorf("replay: %d repeats", repeats)
	}
	start := time.Now()
	defer func() { sum.Elapsed = time.Since(start) }() // a cut-off recording says how long it ran too
	keys := make([]string, len(programs))
	seen := map[string]bool{}
	for i, p := range programs {
		keys[i] = KeyOf(p.Code)
		if seen[keys[i]] {
			return sum, fmt.Errorf("replay: program %d (%s) has the key of an earlier one: %s", i, p.Note, keys[i])
		}
		seen[keys[i]] = true
	}
	total := len(programs) * repeats
	n := 0
	for rep := 0; rep < repeats; rep++ {
		for i, p := range programs {
			n++
			if rc.Done[keys[i]] > rep {
				sum.Skipped++
				continue
			}
			if err := ctx.Err(); err != nil {
				return sum, err
			}
			job := episode.Job{ID: fmt.Sprintf("record-%d-%d", i+1, rep+1), Kind: episode.Scratch, Code: p.Code}
			res, err := rc.Run(ctx, job)
			if err != nil {
				return sum, fmt.Errorf("replay: recording %s (repeat %d): %w", p.Note, rep+1, err)
			}
			if ctx.Err() != nil {
				// Cancelled mid-run: the outcome is the cancellation's, not the program's.
				return sum, ctx.Err()
			}
			row := RowOf(keys[i], p.Note, res)
			b, err := json.Marshal(row)
			if err != nil {
				return sum, err
			}
			if _, err := rc.Out.Write(append(b, '\n')); err != nil {
				return sum, fmt.Errorf("replay: writing row: %w", err)
			}
			if rc.Sync != nil {
				if err := rc.Sync(); err != nil {
					return sum, fmt.Errorf("replay: writing row: %w", err)
				}
			}
			sum.Executed++
			if row.Valid {
				sum.Valid++
			}
			if rc.Progress != nil {
				verdict := "failed: " + row.Error
				if row.Valid {
					verdict = fmt.Sprintf("score %.4f", *row.Score)
				} else if row.TimedOut {
					verdict = "timed out"
				}
				if len(verdict) > 140 {
					verdict = verdict[:140] + "…"
				}
				fmt.Fprintf(rc.Progress, "[%d/%d] %s (repeat %d): %.1fs, %d stages, reward %.4g, %s\n",
					n, total, p.Note, rep+1, row.DurationS, len(row.Stages), row.Reward, verdict)
			}
		}
	}
	return sum, nil
}

// Recorded counts the rows per key in a table file, and names the task of its
// first row, so a recording can continue where it stopped. A missing or empty
// file is no rows.
func Recorded(path string) (map[string]int, string, error) {
	done := map[string]int{}
	t, err := LoadTable(path)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, ErrNoRows):
		return done, "", nil
	case err != nil:
		return nil, "", err
	}
	for _, k := range t.Keys() {
		done[k] = len(t.Rows(k))
	}
	return done, t.Task(), nil
}
