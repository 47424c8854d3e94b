// Package task loads and validates MLE-bench-shaped task folders (CONTRACT.md §1).
package task

import (
	"path/filepath"

	"github.com/mlerl/mlerl/grade"
)

// Task is one task folder on disk. Load fills it; Check validates it fully.
type Task struct {
	Name          string   `yaml:"name" json:"name"`
	Metric        string   `yaml:"metric" json:"metric"`
	IDColumn      string   `yaml:"id_column" json:"id_column"`
	TargetColumns []string `yaml:"target_columns" json:"target_columns"`
	Source        string   `yaml:"source" json:"source"`

	// Dir is the task folder (absolute).
	Dir string `yaml:"-" json:"path"`
}

// PublicDir is the folder the agent's program sees as data/.
func (t *Task) PublicDir() string { return filepath.Join(t.Dir, "public") }

// AnswersPath is the private ground truth; never visible to agent code.
func (t *Task) AnswersPath() string { return filepath.Join(t.Dir, "private", "answers.csv") }

// DescriptionPath is what the agent is told.
func (t *Task) DescriptionPath() string { return filepath.Join(t.Dir, "description.md") }

// GradeSpec is what the grader needs to know about this task.
func (t *Task) GradeSpec() grade.Spec {
	return grade.Spec{Metric: t.Metric, IDColumn: t.IDColumn, TargetColumns: t.TargetColumns}
}
