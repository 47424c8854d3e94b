package rl

import (
	"math/rand/v2"
	"sort"
)

// Buffer keeps the K best valid solutions per task: the parents of improve
// prompts (SPEC.md §3). Failed programs never enter it — small models debug
// poorly, so the paper does not feed failures back. A program already in the
// buffer is not added twice; its better result is kept.
type Buffer struct {
	K      int                    `json:"k"`
	ByTask map[string][]*Solution `json:"by_task"`
}

// NewBuffer returns an empty buffer keeping k solutions per task.
func NewBuffer(k int) *Buffer {
	if k < 1 {
		k = 1
	}
	return &Buffer{K: k, ByTask: map[string][]*Solution{}}
}

// Add offers a solution; it returns whether the buffer kept it.
func (b *Buffer) Add(s *Solution) bool {
	if s == nil || !s.Result.Valid {
		return false
	}
	t := s.Result.Task
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

// Pick draws a parent for an improve prompt, or nil when the task has none
// yet: the best kept solution half the time, otherwise one drawn uniformly
// from all kept (the best included). Improving the best is what pays (AIDE's
// greedy step); the uniform half keeps other good lines alive, so the search
// does not collapse onto one plan and its neighbours.
func (b *Buffer) Pick(taskName string, rng *rand.Rand) *Solution {
	list := b.ByTask[taskName]
	if len(list) == 0 {
		return nil
	}
	if rng.IntN(2) == 0 {
		return list[0]
	}
	return list[rng.IntN(len(list))]
}
