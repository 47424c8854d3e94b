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

// writeFiles writes files (relative path -> content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, p, content)
	}
}

// An imported MLE-bench task: grader key, answers in the competition's own
// shape (extra columns), graded by the competition's rules.
func TestGraderTask(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "random-acts-of-pizza")
	yaml := "name: random-acts-of-pizza\nmetric: auc\nid_column: request_id\ntarget_columns: [requester_received_pizza]\n" +
		"source: MLE-bench\ngrader: mlebench/random-acts-of-pizza\n"
	writeFiles(t, dir, map[string]string{
		"task.yaml":                    yaml,
		"description.md":               "Predict pizza.\n",
		"public/sampleSubmission.csv":  "request_id,requester_received_pizza\nt3_a,0\nt3_b,0\nt3_c,0\n",
		"public/sample_submission.csv": "request_id,requester_received_pizza\nt3_a,0\nt3_b,0\nt3_c,0\n",
		"private/answers.csv":          "request_id,requester_received_pizza\nt3_a,1\nt3_b,0\nt3_c,0\n",
	})
	tk, err := Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if tk.Grader != "mlebench/random-acts-of-pizza" {
		t.Fatalf("grader %q", tk.Grader)
	}
	if err := tk.Check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
	ans, err := tk.Answers()
	if err != nil {
		t.Fatal(err)
	}
	// Extra columns are ignored by this competition's grade.py.
	sub := filepath.Join(t.TempDir(), "s.csv")
	write(t, sub, "requester_received_pizza,request_id,extra\n0.9,t3_a,x\n0.1,t3_b,y\n0.2,t3_c,z\n")
	if r := ans.GradeFile(sub); !r.Valid || *r.Score != 1 {
		t.Errorf("grade: %+v", r)
	}

	for _, c := range []struct{ yaml, want string }{
		{strings.Replace(yaml, "mlebench/random-acts-of-pizza", "mlebench/no-such-thing", 1), "unknown grader"},
		{strings.Replace(yaml, "metric: auc", "metric: accuracy", 1), "scores with auc"},
		{strings.Replace(yaml, "id_column: request_id", "id_column: id", 1), `matches rows by "request_id"`},
	} {
		write(t, filepath.Join(dir, "task.yaml"), c.yaml)
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "task.yaml") {
			t.Errorf("want an error naming task.yaml and %q, got %v", c.want, err)
		}
	}
}
