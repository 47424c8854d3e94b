// Package task loads and validates MLE-bench-shaped task folders (CONTRACT.md §1).
package task

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mlerl/mlerl/grade"
)

// Task is one task folder on disk. Load fills it; Check validates it fully.
type Task struct {
	Name          string   `yaml:"name" json:"name"`
	Metric        string   `yaml:"metric" json:"metric"`
	IDColumn      string   `yaml:"id_column" json:"id_column"`
	TargetColumns []string `yaml:"target_columns" json:"target_columns"`
	Source        string   `yaml:"source" json:"source"`
	// Grader, when set ("mlebench/<competition-id>"), grades the task by that
	// MLE-bench competition's own rules instead of CONTRACT.md's generic ones.
	Grader string `yaml:"grader,omitempty" json:"grader,omitempty"`

	// Dir is the task folder (absolute).
	Dir string `yaml:"-" json:"path"`
}

var nameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Load reads DIR/task.yaml strictly: unknown keys, missing keys, a name that
// differs from the folder name, or an unknown metric are errors naming the file.
// It does not read the data; Check does.
func Load(dir string) (*Task, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("task folder %s: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("task folder %s: %w", dir, unwrapPathError(err))
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("task folder %s: not a directory", dir)
	}
	path := filepath.Join(abs, "task.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrapPathError(err))
	}
	t := &Task{Dir: abs}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true) // CONTRACT.md §1: unknown keys are an error, not silently ignored
	if err := dec.Decode(t); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty file", path)
		}
		return nil, fmt.Errorf("%s: %s", path, oneLine(err.Error()))
	}
	if err := t.validateMeta(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func (t *Task) validateMeta() error {
	var missing []string
	for _, f := range []struct{ key, val string }{
		{"name", t.Name}, {"metric", t.Metric}, {"id_column", t.IDColumn}, {"source", t.Source},
	} {
		if strings.TrimSpace(f.val) == "" {
			missing = append(missing, f.key)
		}
	}
	if len(t.TargetColumns) == 0 {
		missing = append(missing, "target_columns")
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing or empty key(s): %s", strings.Join(missing, ", "))
	}
	if !nameRE.MatchString(t.Name) {
		return fmt.Errorf("name %q must match [a-z0-9-]+", t.Name)
	}
	if base := filepath.Base(t.Dir); base != t.Name {
		return fmt.Errorf("name %q differs from the folder name %q", t.Name, base)
	}
	if t.Grader != "" {
		// The competition's rules decide the columns (CONTRACT.md §1).
		return grade.CheckMLEBenchSpec(t.Grader, t.GradeSpec())
	}
	return t.GradeSpec().Validate()
}

// LowerIsBetter follows from the metric.
func (t *Task) LowerIsBetter() bool {
	lower, _ := grade.LowerIsBetter(t.Metric) // Load rejected unknown metrics
	return lower
}

// PublicDir is the folder the agent's program sees as data/.
func (t *Task) PublicDir() string { return filepath.Join(t.Dir, "public") }

// AnswersPath is the private ground truth; never visible to agent code.
func (t *Task) AnswersPath() string { return filepath.Join(t.Dir, "private", "answers.csv") }

// DescriptionPath is what the agent is told.
func (t *Task) DescriptionPath() string { return filepath.Join(t.Dir, "description.md") }

// SampleSubmissionPath is the example submission every task ships.
func (t *Task) SampleSubmissionPath() string {
	return filepath.Join(t.PublicDir(), "sample_submission.csv")
}

// GradeSpec is what the grader needs to know about this task.
func (t *Task) GradeSpec() grade.Spec {
	return grade.Spec{Metric: t.Metric, IDColumn: t.IDColumn, TargetColumns: t.TargetColumns}
}

// Answers parses the private answers; a broken answers file is a broken task.
// An imported MLE-bench task's answers are its competition's original file.
func (t *Task) Answers() (*grade.Answers, error) {
	if t.Grader != "" {
		return grade.LoadMLEBenchAnswersFile(t.Grader, t.GradeSpec(), t.AnswersPath())
	}
	return grade.LoadAnswersFile(t.GradeSpec(), t.AnswersPath())
}

// LeaderboardPath is the competition's leaderboard, present for imported
// MLE-bench tasks; with it, grades carry a medal rank.
func (t *Task) LeaderboardPath() string { return filepath.Join(t.Dir, "leaderboard.csv") }

// Description returns description.md.
func (t *Task) Description() (string, error) {
	b, err := os.ReadFile(t.DescriptionPath())
	if err != nil {
		return "", fmt.Errorf("%s: %w", t.DescriptionPath(), unwrapPathError(err))
	}
	return string(b), nil
}

// Check validates everything about the folder beyond task.yaml: the files the
// contract requires exist, the answers parse (no duplicate or missing ids), and
// the sample submission grades as valid. The first problem is returned, naming
// the file.
func (t *Task) Check() error {
	desc, err := t.Description()
	if err != nil {
		return err
	}
	if strings.TrimSpace(desc) == "" {
		return fmt.Errorf("%s: empty file", t.DescriptionPath())
	}
	if fi, err := os.Stat(t.PublicDir()); err != nil {
		return fmt.Errorf("%s: %w", t.PublicDir(), unwrapPathError(err))
	} else if !fi.IsDir() {
		return fmt.Errorf("%s: not a directory", t.PublicDir())
	}
	ans, err := t.Answers()
	if err != nil {
		return err
	}
	if _, err := os.Stat(t.SampleSubmissionPath()); err != nil {
		return fmt.Errorf("%s: %w", t.SampleSubmissionPath(), unwrapPathError(err))
	}
	if r := ans.GradeFile(t.SampleSubmissionPath()); !r.Valid {
		return fmt.Errorf("%s: does not grade as a valid submission: %s", t.SampleSubmissionPath(), r.Error)
	}
	// The answers must never be published: a copy under public/ would let any
	// program read the ground truth.
	if _, err := os.Stat(filepath.Join(t.PublicDir(), "answers.csv")); err == nil {
		return fmt.Errorf("%s: private answers must not be under public/", filepath.Join(t.PublicDir(), "answers.csv"))
	}
	return nil
}

// unwrapPathError drops the path that *PathError repeats, since callers name it.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, os.ErrNotExist) {
			return errors.New("missing")
		}
		return pe.Err
	}
	return err
}

func oneLine(s string) string {
	s = strings.TrimPrefix(s, "yaml: ")
	s = strings.TrimPrefix(s, "unmarshal errors:\n")
	fields := strings.Fields(s)
	return strings.Join(fields, " ")
}
