// Package grade validates submissions and scores them with MLE-bench's semantics
// (CONTRACT.md §1). It knows nothing of tasks on disk, sandboxes or RL.
package grade

// Spec is what a grader needs to know about a task.
type Spec struct {
	Metric        string
	IDColumn      string
	TargetColumns []string
}

// Result is a grade: valid with a score, or invalid with a one-line reason.
type Result struct {
	Valid bool     `json:"valid"`
	Score *float64 `json:"score"`
	Error string   `json:"error"`
}
