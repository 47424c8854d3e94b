package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeMLEBench builds a small MLE-bench checkout and data folder: spooky and
// pizza prepared, plant-pathology configured but not prepared, and a
// competition mlerl has no rules for.
func fakeMLEBench(t *testing.T) (repo, data string) {
	t.Helper()
	root := t.TempDir()
	repo, data = filepath.Join(root, "mle-bench"), filepath.Join(root, "data")
	leaderboard := "teamName,score\n"
	for i := 0; i < 20; i++ {
		leaderboard += "t" + string(rune('a'+i)) + "," + []string{"0.2", "0.3", "0.4", "0.5", "0.6"}[i/4] + "\n"
	}
	files := map[string]string{}
	comp := func(id, grader, answers, sample string) {
		dir := "mlebench/competitions/" + id + "/"
		files[filepath.Join(repo, dir+"config.yaml")] = "id: " + id + "\nname: " + strings.ToUpper(id) + "\ncompetition_type: simple\n" +
			"description: " + dir + "description.md\n\ndataset:\n  answers: " + answers + "\n  sample_submission: " + sample + "\n\n" +
			"grader:\n  name: " + grader + "\n  grade_fn: mlebench.competitions." + id + ".grade:grade\n\npreparer: x\n"
		files[filepath.Join(repo, dir+"description.md")] = "# " + id + "\n\nPredict things.\n"
		files[filepath.Join(repo, dir+"leaderboard.csv")] = leaderboard
	}
	comp("spooky-author-identification", "multi-class-log-loss",
		"spooky-author-identification/prepared/private/test.csv", "spooky-author-identification/prepared/public/sample_submission.csv")
	comp("random-acts-of-pizza", "auc-roc",
		"random-acts-of-pizza/prepared/private/test.csv", "random-acts-of-pizza/prepared/public/sampleSubmission.csv")
	comp("plant-pathology-2020-fgvc7", "mean-column-wise-roc-auc",
		"plant-pathology-2020-fgvc7/prepared/private/test.csv", "plant-pathology-2020-fgvc7/prepared/public/sample_submission.csv")
	comp("text-normalization-challenge-english-language", "accuracy",
		"text-normalization-challenge-english-language/prepared/private/answers.csv",
		"text-normalization-challenge-english-language/prepared/private/sample_submission.csv")
	comp("spaceship-titanic", "accuracy",
		"spaceship-titanic/prepared/private/answers.csv", "spaceship-titanic/prepared/public/sample_submission.csv")
	for p, c := range map[string]string{
		"spooky-author-identification/prepared/public/train.csv":                               "id,text,author\nid1,\"It was, dark\",EAP\nid2,Cthulhu,HPL\n",
		"spooky-author-identification/prepared/public/test.csv":                                "id,text\nid3,a\nid4,b\nid5,c\n",
		"spooky-author-identification/prepared/public/sample_submission.csv":                   "id,EAP,HPL,MWS\nid3,0.4,0.3,0.3\nid4,0.4,0.3,0.3\nid5,0.4,0.3,0.3\n",
		"spooky-author-identification/prepared/private/test.csv":                               "id,EAP,HPL,MWS\nid3,1,0,0\nid4,0,1,0\nid5,0,0,1\n",
		"random-acts-of-pizza/prepared/public/test.json":                                       "[]\n",
		"random-acts-of-pizza/prepared/public/sampleSubmission.csv":                            "request_id,requester_received_pizza\nt3_a,0\nt3_b,0\n",
		"random-acts-of-pizza/prepared/public/sub/notes.txt":                                   "nested file\n",
		"random-acts-of-pizza/prepared/private/test.csv":                                       "request_id,requester_received_pizza\nt3_a,1\nt3_b,0\n",
		"spaceship-titanic/prepared/public/sample_submission.csv":                              "PassengerId,Transported\n0013_01,False\n",
		"text-normalization-challenge-english-language/prepared/public/en_test_2.csv.zip":      "PK not really\n",
		"text-normalization-challenge-english-language/prepared/private/answers.csv":           "\"id\",\"after\"\n\"0_0\",\"two\"\n\"0_1\",\".\"\n",
		"text-normalization-challenge-english-language/prepared/private/sample_submission.csv": "\"id\",\"after\"\n\"0_0\",\"2\"\n\"0_1\",\".\"\n",
		"spaceship-titanic/prepared/private/answers.csv":                                       "PassengerId,Transported\n0013_01,True\n",
	} {
		files[filepath.Join(data, p)] = c
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return repo, data
}

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestImportMLEBench imports two competitions from a fake MLE-bench
// checkout, checks the files, that the imported folder loads, checks and
// grades as a task, and that importing over it is refused.
func TestImportMLEBench(t *testing.T) {
	repo, data := fakeMLEBench(t)
	out := filepath.Join(t.TempDir(), "tasks")
	code, _, stderr := runCmd(t, "tasks", "import-mlebench", "--repo", repo, "--data", data,
		"spooky-author-identification", "--out", out, "random-acts-of-pizza")
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}

	spooky := filepath.Join(out, "spooky-author-identification")
	checkImportedFiles(t, repo, data, out)
	checkImportedGrading(t, spooky)

	// Importing over an existing folder is refused.
	if code, _, stderr := runCmd(t, "tasks", "import-mlebench", "--repo", repo, "--data", data, "--out", out, "random-acts-of-pizza"); code != 2 || !strings.Contains(stderr, "already exists") {
		t.Errorf("re-import: exit %d: %s", code, stderr)
	}
}

// checkImportedFiles checks the imported task.yaml and that the data were
// linked or copied unchanged from the fake MLE-bench repo and data.
func checkImportedFiles(t *testing.T, repo, data, out string) {
	t.Helper()
	spooky := filepath.Join(out, "spooky-author-identification")
	yaml, err := os.ReadFile(filepath.Join(spooky, "task.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"grader: mlebench/spooky-author-identification", "metric: log_loss", "- EAP", "- MWS", "id_column: id"} {
		if !strings.Contains(string(yaml), want) {
			t.Errorf("task.yaml lacks %q:\n%s", want, yaml)
		}
	}
	// Data linked or copied unchanged; the answers keep their original file.
	for dst, src := range map[string]string{
		filepath.Join(spooky, "private", "answers.csv"):                               filepath.Join(data, "spooky-author-identification/prepared/private/test.csv"),
		filepath.Join(spooky, "public", "train.csv"):                                  filepath.Join(data, "spooky-author-identification/prepared/public/train.csv"),
		filepath.Join(out, "random-acts-of-pizza", "public", "sample_submission.csv"): filepath.Join(data, "random-acts-of-pizza/prepared/public/sampleSubmission.csv"),
		filepath.Join(out, "random-acts-of-pizza", "public", "sub", "notes.txt"):      filepath.Join(data, "random-acts-of-pizza/prepared/public/sub/notes.txt"),
		filepath.Join(spooky, "leaderboard.csv"):                                      filepath.Join(repo, "mlebench/competitions/spooky-author-identification/leaderboard.csv"),
	} {
		a, errA := os.ReadFile(dst)
		b, errB := os.ReadFile(src)
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs from %s (%v, %v)", dst, src, errA, errB)
		}
	}
	if _, err := os.Stat(filepath.Join(spooky, "private", "test.csv")); err == nil {
		t.Error("private files other than the answers were imported")
	}
}

// checkImportedGrading checks that the imported folder spooky loads,
// passes tasks check, and grades a valid and an invalid submission.
func checkImportedGrading(t *testing.T, spooky string) {
	t.Helper()
	// The folder is a task: it loads (as train does), checks and grades.
	if _, err := loadTask(spooky); err != nil {
		t.Fatalf("loadTask: %v", err)
	}
	if code, _, stderr := runCmd(t, "tasks", "check", spooky); code != 0 {
		t.Fatalf("tasks check: exit %d: %s", code, stderr)
	}
	sub := filepath.Join(t.TempDir(), "sub.csv")
	if err := os.WriteFile(sub, []byte("id,MWS,EAP,HPL\nid5,0.9,0.05,0.05\nid3,0.1,0.8,0.1\nid4,0.2,0.2,0.6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(t, "grade", "--task", spooky, "--submission", sub, "--json")
	if code != 0 {
		t.Fatalf("grade: exit %d: %s", code, stderr)
	}
	var res struct {
		Valid bool     `json:"valid"`
		Score *float64 `json:"score"`
		Rank  *struct {
			Medal         *string `json:"medal"`
			AboveMedian   bool    `json:"above_median"`
			GoldThreshold float64 `json:"gold_threshold"`
		} `json:"rank"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("grade --json: %v: %s", err, stdout)
	}
	// -(ln 0.8 + ln 0.6 + ln 0.9)/3 = 0.2797; the leaderboard's 20 teams (lower is
	// better) put gold at position 2 (0.2), silver at 4 (0.2), bronze at 8 (0.3):
	// bronze, above the median 0.4.
	if !res.Valid || res.Score == nil || *res.Score < 0.2797 || *res.Score > 0.2798 || res.Rank == nil ||
		res.Rank.Medal == nil || *res.Rank.Medal != "bronze" || !res.Rank.AboveMedian || res.Rank.GoldThreshold != 0.2 {
		t.Errorf("grade --json: %s", stdout)
	}
	if err := os.WriteFile(sub, []byte("id,EAP,HPL,MWS\nid3,0.1,0.05,0.05\nid4,0.2,0.2,0.6\nid5,0.3,0.3,0.4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = runCmd(t, "grade", "--task", spooky, "--submission", sub, "--json")
	if code != 2 || !strings.Contains(stdout, `"valid":false`) || !strings.Contains(stdout, `"medal":null`) {
		t.Errorf("invalid submission: exit %d, %s", code, stdout)
	}
}

func TestImportMLEBenchErrors(t *testing.T) {
	repo, data := fakeMLEBench(t)
	out := t.TempDir()
	lfs := filepath.Join(repo, "mlebench/competitions/random-acts-of-pizza/leaderboard.csv")
	if err := os.WriteFile(lfs, []byte("version https://git-lfs.github.com/spec/v1\noid sha256:d5f3\nsize 84693\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plant-pathology-2020-fgvc7"}, "not prepared"},
		{[]string{"random-acts-of-pizza"}, "Git LFS pointer"},
		{[]string{"spaceship-titanic"}, "unknown grader"},
		{[]string{"no-such-competition"}, "no competition"},
		{nil, "usage"},
		{[]string{"--all", "spooky-author-identification"}, "usage"},
	} {
		args := append([]string{"tasks", "import-mlebench", "--repo", repo, "--data", data, "--out", out}, c.args...)
		code, _, stderr := runCmd(t, args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, code, stderr, c.want)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("failed imports left %d entries in --out", len(entries))
	}

	// --all imports what is prepared (spooky; pizza's leaderboard is a pointer).
	code, _, stderr := runCmd(t, "tasks", "import-mlebench", "--repo", repo, "--data", data, "--out", out, "--all")
	if code != 2 || !strings.Contains(stderr, "Git LFS pointer") {
		t.Errorf("--all with a pointer: exit %d: %s", code, stderr)
	}
	if err := os.WriteFile(lfs, []byte("teamName,score\na,0.9\nb,0.8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out2 := t.TempDir()
	code, _, stderr = runCmd(t, "tasks", "import-mlebench", "--repo", repo, "--data", data, "--out", out2, "--all")
	if code != 0 {
		t.Fatalf("--all: exit %d: %s", code, stderr)
	}
	for _, id := range []string{"spooky-author-identification", "random-acts-of-pizza", "text-normalization-challenge-english-language"} {
		if _, err := loadTask(filepath.Join(out2, id)); err != nil {
			t.Errorf("--all: %v", err)
		}
	}
	// text-normalization keeps its sample submission in prepared/private
	// (MLE-bench publishes it zipped): it becomes public/sample_submission.csv.
	a, _ := os.ReadFile(filepath.Join(out2, "text-normalization-challenge-english-language", "public", "sample_submission.csv"))
	b, _ := os.ReadFile(filepath.Join(data, "text-normalization-challenge-english-language/prepared/private/sample_submission.csv"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("text-normalization sample submission: %q", a)
	}
	if code, _, stderr := runCmd(t, "tasks", "check", filepath.Join(out2, "text-normalization-challenge-english-language")); code != 0 {
		t.Errorf("tasks check: %s", stderr)
	}
	if !strings.Contains(stderr, "plant-pathology-2020-fgvc7: not prepared") {
		t.Errorf("--all does not say what it skipped: %s", stderr)
	}
}
