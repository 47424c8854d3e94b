package rl

import (
	"encoding/json"
	"fmt"

	"github.com/mlerl/mlerl/episode"
)

// Sink receives what a run produces. The CLI writes the run folder through it
// (package rl/runfolder); tests capture it in memory. The learner calls it from
// its single loop goroutine, in this order at each update: Episodes, Best (when
// a task's best changed), Metrics, Checkpoint. A Sink error stops the run: a run
// whose records cannot be kept is not worth continuing.
type Sink interface {
	// Episodes receives completed episodes once the learner has used them (or
	// dropped them as too stale) in an update, and at the end the completed
	// ones no update used.
	Episodes(recs []EpisodeRecord) error
	Metrics(m Metrics) error
	Best(b Best) error
	// Checkpoint receives the learner's state; the policy is saved with it.
	Checkpoint(ck *Checkpoint, pol Policy) error
	Summary(s Summary) error
}

// EpisodeRecord is one line of episodes.jsonl: the contract's episode result
// (with advantage and weight once used) and what the learner knows about it.
type EpisodeRecord struct {
	episode.Result
	// Cancelled episodes were still running when the run stopped: no result.
	Cancelled bool    `json:"cancelled,omitempty"`
	Plan      string  `json:"plan,omitempty"`
	Parent    string  `json:"parent,omitempty"` // episode id of the improved solution
	Staleness int     `json:"staleness"`        // policy versions between sampling and the update
	Dropped   bool    `json:"dropped,omitempty"`
	Update    int     `json:"update"`      // the update that used it; 0 when none did
	DoneS     float64 `json:"completed_s"` // run clock when it completed
	// Note is the policy's own record of how it chose the action (Noter).
	Note json.RawMessage `json:"policy_note,omitempty"`
}

// Metrics is one line of metrics.jsonl, one per policy update (CONTRACT.md §3).
type Metrics struct {
	Update        int      `json:"update"`
	TimeS         float64  `json:"time_s"`
	Episodes      int      `json:"episodes"` // completed so far in the run
	MeanReward    float64  `json:"mean_reward"`
	BestScore     *float64 `json:"best_score"`
	MeanDurationS float64  `json:"mean_duration_s"`
	WeightsMean   float64  `json:"weights_mean"`
	Loss          float64  `json:"loss"`
	Entropy       float64  `json:"entropy"`
	KL            float64  `json:"kl"`
	ClipFrac      float64  `json:"clip_frac"`
	Staleness     float64  `json:"staleness"` // mean over the batch
	MaxStaleness  int      `json:"max_staleness"`
	Dropped       int      `json:"dropped"` // too stale, in this batch
	DroppedTotal  int      `json:"dropped_total"`
	ValidFrac     float64  `json:"valid_frac"`
	MeanScore     *float64 `json:"mean_score"` // over the batch's valid episodes
	WeightsMin    float64  `json:"weights_min"`
	WeightsMax    float64  `json:"weights_max"`
	PolicyVersion int      `json:"policy_version"`
	Dispatched    int      `json:"dispatched"`
	InFlight      int      `json:"in_flight"`
	DurationAware bool     `json:"duration_aware"`
}

// Best is a new best valid solution for a task (highest reward).
type Best struct {
	Task       string
	Code       string
	Submission []byte
	Result     episode.Result
}

// Summary is summary.json, written at the end of a run.
//
// Invariant: Dispatched = Completed + AbandonedAtStop (the jobs in flight when the
// run stopped, kept in the final checkpoint so a resume redoes them); a job
// re-dispatched after a resume keeps its id and counts once in Dispatched and
// once in Redelivered.
type Summary struct {
	Dispatched  int `json:"dispatched"`
	Completed   int `json:"completed"`
	Redelivered int `json:"redelivered"`
	// AbandonedAtStop were still running when the run stopped: written as
	// cancelled episodes, redone by a resume. Old run folders call it "lost",
	// and summary.json keeps that key too for the scripts that read it.
	AbandonedAtStop int `json:"abandoned_at_stop"`
	Updates         int `json:"updates"`
	// Reused completed episodes were not run: an identical program had
	// already run on the same data and settings (episode.Cache).
	Reused int `json:"reused"`
	// ImproveAsScratch improve prompts were answered with a program from
	// scratch: the policy had no new edit of the parent (SetPriorOnRepeat).
	ImproveAsScratch int      `json:"improve_as_scratch,omitempty"`
	BestScore        *float64 `json:"best_score"`
	Isolation        string   `json:"isolation"`

	Dropped    int                `json:"dropped"`    // completed but too stale to train on
	Duplicates int                `json:"duplicates"` // results for jobs already completed or unknown
	Unused     int                `json:"unused"`     // completed after the last update
	ElapsedS   float64            `json:"elapsed_s"`
	Stopped    string             `json:"stopped"` // budget | max_episodes | canceled
	BestScores map[string]float64 `json:"best_scores,omitempty"`

	// Extra holds counts of the Env's own (EnvStats), written as further
	// top-level keys of summary.json; a key the learner writes wins.
	Extra map[string]any `json:"-"`
}

// EnvStats is implemented by an Env that counts things of its own (the job
// queue's deliveries, the cache's reuses). Run adds them to the summary:
// Redelivered to the learner's re-dispatches, Extra as further keys.
type EnvStats interface {
	SummaryStats() (redelivered int, extra map[string]any)
}

// MarshalJSON writes the summary with Extra's keys beside the learner's.
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	b, err := json.Marshal(plain(s))
	if err != nil {
		return b, err
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["lost"] = m["abandoned_at_stop"] // the contract's older name
	for k, v := range s.Extra {
		if _, taken := m[k]; taken {
			continue
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("summary: %s: %w", k, err)
		}
		m[k] = raw
	}
	return json.Marshal(m)
}

// Discard is a Sink that keeps nothing.
type Discard struct{}

func (Discard) Episodes([]EpisodeRecord) error       { return nil }
func (Discard) Metrics(Metrics) error                { return nil }
func (Discard) Best(Best) error                      { return nil }
func (Discard) Checkpoint(*Checkpoint, Policy) error { return nil }
func (Discard) Summary(Summary) error                { return nil }

// Memory is a Sink that keeps everything in memory, for tests and benchmarks.
type Memory struct {
	EpisodeRecs []EpisodeRecord
	MetricLines []Metrics
	Bests       []Best
	Checkpoints int
	LastCK      *Checkpoint
	Final       *Summary
}

func (m *Memory) Episodes(r []EpisodeRecord) error {
	m.EpisodeRecs = append(m.EpisodeRecs, r...)
	return nil
}
func (m *Memory) Metrics(x Metrics) error { m.MetricLines = append(m.MetricLines, x); return nil }
func (m *Memory) Best(b Best) error       { m.Bests = append(m.Bests, b); return nil }
func (m *Memory) Checkpoint(ck *Checkpoint, _ Policy) error {
	m.Checkpoints++
	m.LastCK = ck
	return nil
}
func (m *Memory) Summary(s Summary) error { m.Final = &s; return nil }
