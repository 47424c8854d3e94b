// Package episode runs one episode end to end — instrument, sandboxed run, grade,
// reward — and defines the episode result that is the contract's JSON line.
package episode

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

// Kind says whether a program was written from scratch or by improving a previous one.
type Kind string

const (
	Scratch Kind = "scratch"
	Improve Kind = "improve"
)

// Job is the whole description of one execution, the same for every executor
// (a local slot, a remote worker, the cache, a replay table, serve): what to
// run, on which data, under which settings. Two jobs with the same Key do the
// same work.
type Job struct {
	ID            string `json:"episode"`
	Task          string `json:"task"`
	Kind          Kind   `json:"kind"`
	PolicyVersion int    `json:"policy_version"`
	Code          string `json:"code"`
	// Plan is the policy's name for the program's design (the recipe plan
	// key); empty for free-form code. Replay tables are keyed by it.
	Plan string `json:"plan,omitempty"`
	// Data is the SHA-256 of the task's public files the program reads.
	Data string `json:"data,omitempty"`
	// Settings are the run's; an executor may lower them, never raise them.
	Settings Settings `json:"settings"`
}

// Settings say how a program runs. They are the run's, carried by every Job,
// so that every executor of a run gives every program the same limits and
// instrumentation and the rewards inside one run stay comparable.
type Settings struct {
	// Timeout is the wall-clock limit of the program (0: the executor's).
	Timeout time.Duration `json:"timeout_ns,omitempty"`
	// MemoryBytes is the memory limit (0: the executor's).
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	// Instrument is the marker mode: none, ast or lm ("": the executor's).
	Instrument string `json:"instrument,omitempty"`
	// Threads is the OpenMP/BLAS threads of the program (0: the executor's).
	Threads int `json:"threads,omitempty"`
}

// Under returns s lowered to the ceilings in max: each limit is the smaller
// of the two where both are set, and the ceiling where s leaves it unset.
// The instrumentation mode is s's when set, else max's.
func (s Settings) Under(max Settings) Settings {
	low := func(a, b int64) int64 {
		switch {
		case a <= 0:
			return b
		case b <= 0:
			return a
		}
		return min(a, b)
	}
	out := Settings{
		Timeout:     time.Duration(low(int64(s.Timeout), int64(max.Timeout))),
		MemoryBytes: low(s.MemoryBytes, max.MemoryBytes),
		Threads:     int(low(int64(s.Threads), int64(max.Threads))),
		Instrument:  s.Instrument,
	}
	if out.Instrument == "" {
		out.Instrument = max.Instrument
	}
	return out
}

// Key identifies the work a job asks for: its code, the task data and the
// settings that can change what the program does or how long it may take.
// Identical keys give the same program the same inputs and limits, so one
// execution serves them all (Cache).
func (j Job) Key() string {
	h := sha256.New()
	for _, s := range []string{j.Task, j.Data, j.Code, strconv.FormatInt(int64(j.Settings.Timeout), 10),
		strconv.FormatInt(j.Settings.MemoryBytes, 10), j.Settings.Instrument, strconv.Itoa(j.Settings.Threads)} {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Result is an episode result (CONTRACT.md §3), one line of episodes.jsonl.
type Result struct {
	Episode         string   `json:"episode"`
	Task            string   `json:"task"`
	Kind            Kind     `json:"kind"`
	PolicyVersion   int      `json:"policy_version"`
	ExitCode        int      `json:"exit_code"`
	TimedOut        bool     `json:"timed_out"`
	DurationS       float64  `json:"duration_s"`
	Stages          []string `json:"stages"`
	Valid           bool     `json:"valid"`
	Score           *float64 `json:"score"`
	Reward          float64  `json:"reward"`
	Error           string   `json:"error"`
	Isolation       string   `json:"isolation"`
	PeakMemoryBytes int64    `json:"peak_memory_bytes"`

	// Filled once the learner has used the episode in an update.
	Advantage *float64 `json:"advantage,omitempty"`
	Weight    *float64 `json:"weight,omitempty"`

	// Output is the head and tail of the program's output, kept for improve
	// prompts; Submission is the CSV the program wrote. Neither is part of the
	// JSON line (they can be large); the run folder stores them separately.
	Output     string `json:"-"`
	Submission []byte `json:"-"`
	// Instrumentation records how markers were inserted ("ast", "lm", "lm->ast: reason", "none").
	Instrumentation string `json:"instrumentation,omitempty"`
	// Reused says the program was not run again: an identical job (same
	// Job.Key) had already run, and this is its execution, duration included.
	Reused bool `json:"reused,omitempty"`
	// ReusedFrom is the episode whose execution was reused.
	ReusedFrom string `json:"reused_from,omitempty"`
}
