package rl

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"
)

// Buffer keeps the K best valid solutions per task: the parents of improve
// prompts (SPEC.md §3). Failed programs never enter it — small models debug
// poorly, so the paper does not feed failures back. A program already in the
// buffer is not added twice; its better result is kept.
type Buffer struct {
	K      int                    `json:"k"`
	ByTask map[string][]*Solution `json:"by_task"`
	// Lines, when above 0, also keeps the best solution of each line of
	// search (Action.Line, the model family for the recipe policy) per task,
	// and half of Pick's draws edit one of the Lines best lines other than
	// the best's. With improve prompts editing the best, a run whose first
	// good program is of a weaker family refines that family for the rest of
	// the run: a new family's first program, with settings nobody tuned for
	// this table, rarely beats it and is never edited (bench/RESULTS.md: on
	// poll-adjustment and hpc-job-class every run ends in one of two model
	// families, and which one is most of the spread between seeds).
	Lines int `json:"lines,omitempty"`
	// LinesAfter, when above 0, keeps the Lines share for a task whose best
	// has stood still for LinesAfter of the run's time (Pick's stood): while
	// edits of the best still win, they all go to it. The share halves the
	// edits of the best, and a best refined over many edits is where the
	// long runs' best programs came from (bench/RESULTS.md, "Improve parents
	// from more lines"). Yet most of a long run is a stall: on
	// stackoverflow-remote at 20 minutes (two of five RL seeds ended on
	// gradient boosting, below the XGBoost of the others) 8 of the 10 runs'
	// bests stood still for their last 10.7-18.5 minutes, and no new best
	// after minute 4 came after the best had stood more than 9.6. Time,
	// not episodes: a text task runs 150 programs in 20 minutes where a
	// small table runs 1,000.
	LinesAfter time.Duration                   `json:"lines_after_ns,omitempty"`
	ByLine     map[string]map[string]*Solution `json:"by_line,omitempty"`
}

// NewBuffer returns an empty buffer keeping k solutions per task.
func NewBuffer(k int) *Buffer {
	if k < 1 {
		k = 1
	}
	return &Buffer{K: k, ByTask: map[string][]*Solution{}, ByLine: map[string]map[string]*Solution{}}
}

// Add offers a solution; it returns whether the buffer kept it.
func (b *Buffer) Add(s *Solution) bool {
	if s == nil || !s.Result.Valid {
		return false
	}
	t := s.Result.Task
	b.addLine(s)
	list := b.ByTask[t]
	for i, old := range list {
		if old.Action.Code == s.Action.Code {
			if s.Result.Reward <= old.Result.Reward {
				return false
			}
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	list = append(list, s)
	// Stable on ties so the oldest of equally good solutions stays: the
	// order, and so the run, is deterministic.
	sort.SliceStable(list, func(i, j int) bool { return list[i].Result.Reward > list[j].Result.Reward })
	kept := true
	if len(list) > b.K {
		kept = list[b.K] != s
		list = list[:b.K]
	}
	b.ByTask[t] = list
	return kept
}

// addLine keeps s as its line's best on its task if it beats the line's
// best so far (the older stays on a tie, as in Add).
func (b *Buffer) addLine(s *Solution) {
	if b.Lines <= 0 || s.Action.Line == "" {
		return
	}
	lines := b.ByLine[s.Result.Task]
	if lines == nil {
		lines = map[string]*Solution{}
		b.ByLine[s.Result.Task] = lines
	}
	if old := lines[s.Action.Line]; old == nil || s.Result.Reward > old.Result.Reward {
		lines[s.Action.Line] = s
	}
}

// LineBests returns the best solution of each line on the task, best first
// (ties by line name, so the order is deterministic).
func (b *Buffer) LineBests(taskName string) []*Solution {
	var out []*Solution
	for _, s := range b.ByLine[taskName] {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Result.Reward != out[j].Result.Reward {
			return out[i].Result.Reward > out[j].Result.Reward
		}
		return out[i].Action.Line < out[j].Action.Line
	})
	return out
}

// Pick draws a parent for an improve prompt, or nil when the task has none
// yet: the best kept solution half the time, otherwise one drawn uniformly
// from all kept (the best included). Improving the best is what pays (AIDE's
// greedy step); the uniform half keeps other good lines alive, so the search
// does not collapse onto one plan and its neighbours.
//
// With Lines set and another line on the task, half the draws are first
// given to the best of one of the Lines best lines other than the best
// solution's (uniformly), the rest as above; with LinesAfter as well, only
// once stood (how long the task's best has stood still) reaches it.
// Without Lines, or before that, the draws, and so the random stream, are
// what they were before lines existed.
func (b *Buffer) Pick(taskName string, stood time.Duration, rng *rand.Rand) *Solution {
	list := b.ByTask[taskName]
	if len(list) == 0 {
		return nil
	}
	if stood >= b.LinesAfter {
		if others := b.otherLines(taskName, list[0]); len(others) > 0 && rng.IntN(2) == 0 {
			return others[rng.IntN(len(others))]
		}
	}
	if rng.IntN(2) == 0 {
		return list[0]
	}
	return list[rng.IntN(len(list))]
}

// otherLines is the best solutions of up to Lines lines on the task, best
// first, leaving out the line of best (the task's best solution).
func (b *Buffer) otherLines(taskName string, best *Solution) []*Solution {
	if b.Lines <= 0 {
		return nil
	}
	var out []*Solution
	for _, s := range b.LineBests(taskName) {
		if s.Action.Line == best.Action.Line {
			continue
		}
		if out = append(out, s); len(out) == b.Lines {
			break
		}
	}
	return out
}

// CheckFlatFamilyAfter says why d is not how long a best must stand before
// a task's prompts are marked Stalled (Config.FlatFamilyAfter).
func CheckFlatFamilyAfter(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("flat family after %v: want 0 (off) or more", d)
	}
	return nil
}

// CheckLinesAfter says why d is not how long a best must stand before the
// Lines share starts (nil when it is; 0 is from the start). It needs lines
// to share among.
func CheckLinesAfter(d time.Duration, lines int) error {
	switch {
	case d < 0:
		return fmt.Errorf("lines after %v: want 0 (from the start) or more", d)
	case d > 0 && lines <= 0:
		return fmt.Errorf("lines after %v: needs lines above 0 (the lines to share the edits among)", d)
	}
	return nil
}
