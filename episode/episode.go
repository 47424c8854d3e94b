// Package episode runs one episode end to end — instrument, sandboxed run, grade,
// reward — and defines the episode result that is the contract's JSON line.
package episode

// Kind says whether a program was written from scratch or by improving a previous one.
type Kind string

const (
	Scratch Kind = "scratch"
	Improve Kind = "improve"
)

// Job is one program to execute for a task.
type Job struct {
	ID            string `json:"episode"`
	Task          string `json:"task"`
	Kind          Kind   `json:"kind"`
	PolicyVersion int    `json:"policy_version"`
	Code          string `json:"code"`
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
}
