package rl

import (
	"fmt"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/task"
)

// CheckpointFormat is bumped whenever Checkpoint changes incompatibly.
const CheckpointFormat = 1

// Checkpoint is everything the learner needs to continue a run: counters, the
// critic, the buffer, the RNG, the jobs in flight and the completed episodes no
// update has used yet. The policy is saved beside it by the Sink.
type Checkpoint struct {
	Format        int           `json:"format"`
	RunID         string        `json:"run_id"`
	NextJob       int64         `json:"next_job"`
	PolicyVersion int           `json:"policy_version"`
	Elapsed       time.Duration `json:"elapsed_ns"`
	Counters      Counters      `json:"counters"`
	Baseline      *Baseline     `json:"baseline"`
	Ranks         Ranks         `json:"ranks,omitempty"`     // valid rewards per task (UtilityRank)
	Durations     Durations     `json:"durations,omitempty"` // completions' Δt per task (TimeCharge)
	Gains         Gains         `json:"gains,omitempty"`     // improve episodes and their wins per task (ImproveGain)
	Mix           Mix           `json:"mix,omitempty"`       // new bests per prompt kind and task (AdaptiveMix)
	Stalls        Stalls        `json:"stalls,omitempty"`    // episodes since each task's last new best (WidenAfter)
	// BestSince is when each task's best last moved, on the run's clock
	// (LinesAfter); a checkpoint from before it resumes as if at 0.
	BestSince map[string]time.Duration `json:"best_since_ns,omitempty"`
	Buffer    []StoredSolution         `json:"buffer"`
	// LineBests are the buffer's best solution per line (Config.Lines).
	LineBests []StoredSolution          `json:"line_bests,omitempty"`
	Best      map[string]StoredSolution `json:"best"`
	InFlight  []StoredJob               `json:"in_flight"`
	Pending   []StoredJob               `json:"pending"` // completed, not yet used by an update
	RNG       []byte                    `json:"rng"`
	Isolation map[string]int            `json:"isolation"`

	// Files is the Sink's own bookkeeping (e.g. the byte length of each JSONL
	// file at this checkpoint), so a resume can cut off what was written after it.
	Files map[string]int64 `json:"files,omitempty"`
}

// Counters are the run's totals, continued across resumes.
type Counters struct {
	Dispatched  int `json:"dispatched"`
	Completed   int `json:"completed"`
	Redelivered int `json:"redelivered"`
	Dropped     int `json:"dropped"`
	Duplicates  int `json:"duplicates"`
	Updates     int `json:"updates"`
	// Reused completions were answered with an identical job's execution.
	Reused int `json:"reused"`
	// ImproveAsScratch improve prompts the policy answered from scratch.
	ImproveAsScratch int `json:"improve_as_scratch,omitempty"`
}

// StoredSolution is a Solution with the fields episode.Result keeps out of its
// JSON line (the program's output is shown to improve prompts).
type StoredSolution struct {
	Action Action         `json:"action"`
	Result episode.Result `json:"result"`
	Output string         `json:"output,omitempty"`
}

func storeSolution(s *Solution) StoredSolution {
	return StoredSolution{Action: s.Action, Result: s.Result, Output: s.Result.Output}
}

func (s StoredSolution) solution() *Solution {
	r := s.Result
	r.Output = s.Output
	return &Solution{Action: s.Action, Result: r}
}

// StoredJob is a dispatched job: its prompt (task by name), its action and,
// once completed, its result.
type StoredJob struct {
	ID     string          `json:"id"`
	Kind   episode.Kind    `json:"kind"`
	Task   string          `json:"task"`
	Parent *StoredSolution `json:"parent,omitempty"`
	Action Action          `json:"action"`
	Result *StoredSolution `json:"result,omitempty"` // Action unused; Result and Output
	DoneS  float64         `json:"completed_s,omitempty"`
}

func storeJob(j *job) StoredJob {
	s := StoredJob{ID: j.id, Kind: j.prompt.Kind, Task: j.prompt.Task.Name, Action: j.action}
	if j.prompt.Parent != nil {
		p := storeSolution(j.prompt.Parent)
		s.Parent = &p
	}
	if j.done {
		s.Result = &StoredSolution{Result: j.result, Output: j.result.Output}
		s.DoneS = j.doneAt.Seconds()
	}
	return s
}

func (s StoredJob) job(tasks map[string]*task.Task) (*job, error) {
	t, ok := tasks[s.Task]
	if !ok {
		return nil, fmt.Errorf("checkpoint job %s: task %q is not among this run's tasks", s.ID, s.Task)
	}
	j := &job{id: s.ID, prompt: Prompt{Kind: s.Kind, Task: t}, action: s.Action}
	if s.Parent != nil {
		j.prompt.Parent = s.Parent.solution()
	}
	if s.Result != nil {
		j.done = true
		j.result = s.Result.Result
		j.result.Output = s.Result.Output
		j.doneAt = time.Duration(s.DoneS * float64(time.Second))
	}
	return j, nil
}
