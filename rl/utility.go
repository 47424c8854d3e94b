package rl

import (
	"fmt"
	"math"
	"sort"

	"github.com/mlerl/mlerl/episode"
)

// What the learner's advantages are computed from (Config.Utility).
const (
	// UtilityReward uses the reward itself (SPEC.md §4): a failure's −10
	// against scores in [0, 1] makes every valid program about equally good,
	// so the policy learns to avoid failing and little else.
	UtilityReward = "reward"
	// UtilityRank uses where a result stands among the task's results so far:
	// a valid program gets the share of the task's valid rewards it beats
	// (ties count half), in [0, 1]; a failure gets −1 plus 0.01 per stage
	// reached, below every valid program by about the width of the valid
	// range. Beating the run's other programs is then worth as much as not
	// failing, on every metric's scale alike, so updates move the policy
	// toward better programs, not only toward programs that run.
	UtilityRank = "rank"
)

// Ranks holds every valid reward seen per task, sorted, for UtilityRank.
type Ranks map[string][]float64

// Observe adds a result; failures are not ranked.
func (r Ranks) Observe(res episode.Result) {
	if !res.Valid {
		return
	}
	list := r[res.Task]
	i := sort.SearchFloat64s(list, res.Reward)
	list = append(list, 0)
	copy(list[i+1:], list[i:])
	list[i] = res.Reward
	r[res.Task] = list
}

// Utility is res's utility under UtilityRank against the rewards observed so
// far (res included, when it was observed).
func (r Ranks) Utility(res episode.Result) float64 {
	if !res.Valid {
		return -1 + 0.01*float64(len(res.Stages))
	}
	list := r[res.Task]
	if len(list) == 0 {
		return meanRank
	}
	below := sort.SearchFloat64s(list, res.Reward)
	upTo := sort.Search(len(list), func(i int) bool { return list[i] > res.Reward })
	return (float64(below) + 0.5*float64(upTo-below)) / float64(len(list))
}

// Durations holds every completed episode's duration per task, sorted, for
// Config.TimeCharge.
type Durations map[string][]float64

// Observe adds a completed result's duration (failures too: a time-out cost
// the run as much as any program of its length).
func (d Durations) Observe(res episode.Result) {
	if !(res.DurationS > 0) {
		return
	}
	list := d[res.Task]
	i := sort.SearchFloat64s(list, res.DurationS)
	list = append(list, 0)
	copy(list[i+1:], list[i:])
	list[i] = res.DurationS
	d[res.Task] = list
}

// maxLogRatio bounds LogRatio: a program 8 times slower (or faster) than the
// median is charged (or credited) as one 8 times, so a few time-outs or
// instant crashes cannot dominate a batch's utilities.
const maxLogRatio = 3

// LogRatio is log2(res's duration / the median duration of its task so far),
// clamped to ±maxLogRatio; 0 while the task has no durations.
func (d Durations) LogRatio(res episode.Result) float64 {
	list := d[res.Task]
	if len(list) == 0 || !(res.DurationS > 0) {
		return 0
	}
	n := len(list)
	med := list[n/2]
	if n%2 == 0 {
		med = (list[n/2-1] + list[n/2]) / 2
	}
	if !(med > 0) {
		return 0
	}
	return max(-maxLogRatio, min(maxLogRatio, math.Log2(res.DurationS/med)))
}

// meanRank is the mean of a task's ranked utilities, a valid result's
// standing among the valid results so far.
const meanRank = 0.5

// Gains counts per task the improve episodes completed and those whose
// program beat its parent's reward, for ImproveGain's time charge.
type Gains map[string][2]int

// Observe records an improve episode's result against its parent's.
func (g Gains) Observe(child, parent episode.Result) {
	c := g[child.Task]
	c[0]++
	if beats(child, parent) {
		c[1]++
	}
	g[child.Task] = c
}

// beats says whether an improve episode's program did better than its parent.
func beats(child, parent episode.Result) bool {
	return child.Valid && child.Reward > parent.Reward
}

// Rate is the task's share of improve episodes that beat their parent,
// (beats+1)/(n+2) so that it is defined, and not 0, before the first.
func (g Gains) Rate(task string) float64 {
	c := g[task]
	return float64(c[1]+1) / float64(c[0]+2)
}

// What an improve episode is credited with (Config.ImproveCredit).
const (
	// ImproveOverParent credits an improve episode with its utility minus
	// its parent's: what the edit added.
	ImproveOverParent = "parent"
	// ImproveAbsolute credits it with its utility, as a scratch episode.
	ImproveAbsolute = "absolute"
	// ImproveGain credits a valid improve episode with 1 when its program
	// beats its parent's reward and 0 when it does not (a failure keeps the
	// failure utility, below both), less the time charge. A run is judged by
	// its best program, and with improve prompts editing the best the best
	// moves only when a child beats its parent; absolute credit instead pays
	// an edit that leaves the best's score as it was about the best's rank,
	// above the improve baseline that risky edits pull down, and so teaches
	// safe edits. Needs ranked utility (a failure's utility is on its scale).
	// The time charge is rescaled to the gain's scale: λ·(p/0.5) per
	// doubling, p the task's share of improve episodes that beat their
	// parent (Gains.Rate), as ranks have mean 0.5 (meanRank). Charged λ per doubling,
	// several times the mean gain of a few percent, an edit's credit was
	// decided by its speed: on poll-adjustment one run's edits ran at a
	// third of their parents' time and none of 222 beat its parent.
	ImproveGain = "gain"
)

// CheckShaping checks the settings that say how results become utilities
// (Utility, ImproveCredit, TimeCharge, Elite, ChargeSlowerOnly), and only
// those, so a command can check what its flags set before it has the rest.
// Its errors name them as the command line does (train, bench
// rl-vs-prompting), where users set them. Empty strings are the defaults.
func (c Config) CheckShaping() error {
	utility, improveCredit, timeCharge, elite, slowerOnly := c.Utility, c.ImproveCredit, c.TimeCharge, c.Elite, c.ChargeSlowerOnly
	switch {
	case utility != "" && utility != UtilityRank && utility != UtilityReward:
		return fmt.Errorf("--utility %q: want %s or %s", utility, UtilityRank, UtilityReward)
	case improveCredit != "" && improveCredit != ImproveOverParent && improveCredit != ImproveAbsolute && improveCredit != ImproveGain:
		return fmt.Errorf("--improve-credit %q: want %s, %s or %s", improveCredit, ImproveAbsolute, ImproveOverParent, ImproveGain)
	case improveCredit == ImproveGain && utility == UtilityReward:
		return fmt.Errorf("--improve-credit %s needs --utility %s", ImproveGain, UtilityRank)
	case !(timeCharge >= 0) || math.IsInf(timeCharge, 0):
		return fmt.Errorf("--time-charge %v: must be a finite number at least 0", timeCharge)
	case slowerOnly && timeCharge == 0:
		return fmt.Errorf("--time-charge-slower-only changes how the time charge is made: it needs --time-charge above 0")
	case !(elite >= 0 && elite < 1):
		return fmt.Errorf("--elite %v: must be in [0, 1)", elite)
	case elite > 0 && utility == UtilityReward:
		return fmt.Errorf("--elite needs --utility %s", UtilityRank)
	}
	return nil
}
