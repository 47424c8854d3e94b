package task

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyTask copies testdata/tiny-auc into a fresh folder named name.
func copyTask(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	src := filepath.Join("testdata", "tiny-auc")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadAndCheckGood(t *testing.T) {
	dir := copyTask(t, "tiny-auc")
	tk, err := Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if tk.Name != "tiny-auc" || tk.Metric != "auc" || tk.IDColumn != "id" || len(tk.TargetColumns) != 1 || tk.TargetColumns[0] != "label" {
		t.Fatalf("loaded %+v", tk)
	}
	if tk.LowerIsBetter() {
		t.Error("auc must be higher-is-better")
	}
	if err := tk.Check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

// Every broken folder must be rejected with one line naming the file and the problem.
func TestBrokenTasks(t *testing.T) {
	const yamlOK = "name: tiny-auc\nmetric: auc\nid_column: id\ntarget_columns: [label]\nsource: x\n"
	cases := []struct {
		name      string
		folder    string // folder name, default tiny-auc
		breakIt   func(t *testing.T, dir string)
		atLoad    bool     // fails in Load (task.yaml) rather than Check
		wantParts []string // substrings of the error
	}{
		{"unknown key", "", func(t *testing.T, d string) { write(t, filepath.Join(d, "task.yaml"), yamlOK+"extra: 1\n") },
			true, []string{"task.yaml", "extra"}},
		{"missing metric", "", func(t *testing.T, d string) {
			write(t, filepath.Join(d, "task.yaml"), strings.Replace(yamlOK, "metric: auc\n", "", 1))
		}, true, []string{"task.yaml", "metric"}},
		{"unknown metric", "", func(t *testing.T, d string) {
			write(t, filepath.Join(d, "task.yaml"), strings.Replace(yamlOK, "metric: auc", "metric: f1", 1))
		}, true, []string{"task.yaml", "f1"}},
		{"name differs from folder", "other-name", func(t *testing.T, d string) {}, true, []string{"task.yaml", "other-name"}},
		{"bad name", "Tiny_AUC", func(t *testing.T, d string) {
			write(t, filepath.Join(d, "task.yaml"), strings.Replace(yamlOK, "name: tiny-auc", "name: Tiny_AUC", 1))
		}, true, []string{"task.yaml", "Tiny_AUC"}},
		{"not yaml", "", func(t *testing.T, d string) { write(t, filepath.Join(d, "task.yaml"), "name: [unclosed\n") },
			true, []string{"task.yaml"}},
		{"empty yaml", "", func(t *testing.T, d string) { write(t, filepath.Join(d, "task.yaml"), "") },
			true, []string{"task.yaml", "empty"}},
		{"no task.yaml", "", func(t *testing.T, d string) { os.Remove(filepath.Join(d, "task.yaml")) },
			true, []string{"task.yaml", "missing"}},
		{"no description", "", func(t *testing.T, d string) { os.Remove(filepath.Join(d, "description.md")) },
			false, []string{"description.md", "missing"}},
		{"no answers", "", func(t *testing.T, d string) { os.Remove(filepath.Join(d, "private", "answers.csv")) },
			false, []string{"answers.csv"}},
		{"duplicate answer id", "", func(t *testing.T, d string) {
			write(t, filepath.Join(d, "private", "answers.csv"), "id,label\nb1,0\nb1,1\nb3,1\nb4,0\n")
		}, false, []string{"answers.csv", "b1"}},
		{"missing answer id", "", func(t *testing.T, d string) {
			write(t, filepath.Join(d, "private", "answers.csv"), "id,label\nb1,0\n,1\nb3,1\nb4,0\n")
		}, false, []string{"answers.csv"}},
		{"no sample submission", "", func(t *testing.T, d string) { os.Remove(filepath.Join(d, "public", "sample_submission.csv")) },
			false, []string{"sample_submission.csv", "missing"}},
		{"sample submission invalid", "", func(t *testing.T, d string) {
			write(t, filepath.Join(d, "public", "sample_submission.csv"), "id,label\nb1,0.5\nb2,0.5\nb3,0.5\n")
		}, false, []string{"sample_submission.csv", "valid"}},
		{"answers published", "", func(t *testing.T, d string) {
			b, _ := os.ReadFile(filepath.Join(d, "private", "answers.csv"))
			write(t, filepath.Join(d, "public", "answers.csv"), string(b))
		}, false, []string{"public", "answers.csv"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			folder := c.folder
			if folder == "" {
				folder = "tiny-auc"
			}
			dir := copyTask(t, folder)
			c.breakIt(t, dir)
			tk, err := Load(dir)
			if err == nil && !c.atLoad {
				err = tk.Check()
			}
			if err == nil {
				t.Fatal("accepted a broken task")
			}
			if c.atLoad && tk != nil {
				t.Errorf("Load returned a task along with error %v", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, p := range c.wantParts {
				if !strings.Contains(msg, p) {
					t.Errorf("error %q does not mention %q", msg, p)
				}
			}
		})
	}
}
