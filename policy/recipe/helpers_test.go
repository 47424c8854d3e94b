package recipe

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mlerl/mlerl/task"
)

// python is Debian's interpreter, the one with numpy, pandas, scikit-learn and xgboost.
const python = "/usr/bin/python3"

// loadTask reads a task folder's task.yaml strictly; task.Load replaces it once
// the task package has landed it.
func loadTask(dir string) (*task.Task, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("task folder %s: %w", dir, err)
	}
	raw, err := os.ReadFile(filepath.Join(abs, "task.yaml"))
	if err != nil {
		return nil, fmt.Errorf("task folder %s: %w", dir, err)
	}
	t := &task.Task{Dir: abs}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(t); err != nil {
		return nil, fmt.Errorf("%s/task.yaml: %w", dir, err)
	}
	return t, nil
}

func mustProfile(t testing.TB, dir string) *Profile {
	t.Helper()
	tk, err := loadTask(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProfile(tk)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fixtureTasks are the small tasks in testdata/.
var fixtureTasks = []string{"tiny-reviews", "tiny-churn", "tiny-digits", "tiny-meats", "tiny-soy"}

// suiteTasks are the suite's task folders present on this checkout.
func suiteTasks() []string {
	dirs, _ := filepath.Glob("../../suite/tasks/*/task.yaml")
	var out []string
	for _, d := range dirs {
		out = append(out, filepath.Dir(d))
	}
	return out
}
