package rl

import "fmt"

// Stalls counts, per task, the episodes completed since the task's best
// last moved (Config.WidenAfter). A learnt policy's edits of the best are
// local: they refine what the run has. When the best has not moved for
// hundreds of episodes those edits are spent, yet the policy keeps drawing
// them (on poll-adjustment at 20 minutes one RL seed stayed on its best of
// minute 6 for 1,322 episodes, another wrote 672 edits it had already
// written; bench/RESULTS.md). The prompting baseline's edits, the prior's,
// keep changing model families and found the better basin there on more
// seeds. A stalled task's improve prompts therefore ask the policy to mix
// the prior into its walk (Prompt.Widen), in proportion to how long it has
// stalled: while edits keep winning nothing changes.
type Stalls map[string]int

// Observe counts one completed episode of task; newBest says it set the
// task's best, which ends the stall.
func (s Stalls) Observe(task string, newBest bool) {
	if newBest {
		s[task] = 0
		return
	}
	s[task]++
}

// WidenShare is the share of the prior an improve walk takes after stall
// episodes without a new best: none up to after, then rising linearly to
// all of it at 3·after (0 when after is 0: off). The ramp is twice the
// wait so that a stall just past the wait changes a few decisions, not the
// whole walk.
func WidenShare(stall, after int) float64 {
	if after <= 0 || stall <= after {
		return 0
	}
	return min(1, float64(stall-after)/float64(2*after))
}

// CheckWidenAfter says why n is not a number of episodes to wait (nil when
// it is; 0 is off).
func CheckWidenAfter(n int) error {
	if n < 0 {
		return fmt.Errorf("widen after %d episodes: want 0 (off) or more", n)
	}
	return nil
}
