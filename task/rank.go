package task

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/mlerl/mlerl/grade"
)

// Leaderboard reads the task's leaderboard.csv; nil, nil when the task has
// none (native tasks: their scores have nothing to be ranked against).
func (t *Task) Leaderboard() (*grade.Leaderboard, error) {
	if _, err := os.Stat(t.LeaderboardPath()); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	lb, err := grade.LoadLeaderboardFile(t.LeaderboardPath())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	return lb, nil
}

// Leaderboards are a run's tasks' leaderboards, read before the run starts
// so that a broken file is reported at once, not after hours of training
// when the summary is written.
type Leaderboards struct {
	single bool // the run has one task: its rank is "rank", not "ranks"
	boards map[string]*grade.Leaderboard
}

// LoadLeaderboards reads the leaderboards of tasks (those that have one).
func LoadLeaderboards(tasks []*Task) (*Leaderboards, error) {
	l := &Leaderboards{single: len(tasks) == 1, boards: map[string]*grade.Leaderboard{}}
	for _, t := range tasks {
		lb, err := t.Leaderboard()
		if err != nil {
			return nil, err
		}
		if lb != nil {
			l.boards[t.Name] = lb
		}
	}
	return l, nil
}

// SummaryKeys places each task's best score (best: by task name, valid
// scores only) on its leaderboard, as the keys summary.json gets: "rank"
// (grade --json's object) for a one-task run, "ranks" by task name for
// several. A task with no valid program is ranked without a score, so it
// shows no medal rather than no row. Nil when no task has a leaderboard.
func (l *Leaderboards) SummaryKeys(best map[string]float64) map[string]any {
	if len(l.boards) == 0 {
		return nil
	}
	ranks := map[string]grade.Rank{}
	for name, lb := range l.boards {
		var score *float64
		if s, ok := best[name]; ok {
			score = &s
		}
		ranks[name] = lb.Rank(score)
	}
	if l.single {
		for _, r := range ranks {
			return map[string]any{"rank": r}
		}
	}
	return map[string]any{"ranks": ranks}
}
