package episode

// Reward holds the constants of CONTRACT.md §4 (the paper's scheme).
type Reward struct {
	// Failed is the reward of a program that produced no valid submission.
	Failed float64
	// PerStage is added to Failed for each distinct progress stage reached.
	PerStage float64
}

// DefaultReward is the paper's: -10 plus 0.1 per stage reached.
func DefaultReward() Reward { return Reward{Failed: -10, PerStage: 0.1} }

// Of computes the reward of an episode: the score when the submission is valid
// (negated when lower is better, so more is always better), otherwise partial
// credit for the stages the instrumented program really reached.
func (r Reward) Of(valid bool, score float64, lowerIsBetter bool, stages int) float64 {
	if valid {
		if lowerIsBetter {
			return -score
		}
		return score
	}
	return r.Failed + r.PerStage*float64(stages)
}
