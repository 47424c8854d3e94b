package llm

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/task"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func loadFixture(t *testing.T) *task.Task {
	t.Helper()
	tk, err := task.Load(filepath.Join("testdata", "tasks", "pet-shapes"))
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// parentSolution is a previous good solution with a long output, as the
// learner's buffer would hand it to an improve prompt.
func parentSolution() *rl.Solution {
	score := 0.4213
	var out strings.Builder
	out.WriteString("loaded 40 rows\n")
	for i := range 400 {
		out.WriteString("epoch ")
		out.WriteString(strings.Repeat("#", i%7))
		out.WriteString(" training loss 0.69\n")
	}
	out.WriteString("validation log loss 0.4213\n")
	return &rl.Solution{
		Action: rl.Action{
			Kind: episode.Scratch,
			Plan: "Read the CSV files, one-hot nothing, and fit a logistic regression on the width column.",
			Code: "import pandas as pd\nfrom sklearn.linear_model import LogisticRegression\n\n\ntrain = pd.read_csv('./data/train.csv')\n" +
				"test = pd.read_csv('./data/test.csv')\nm = LogisticRegression().fit(train[['width']], train['label'])\n" +
				"p = m.predict_proba(test[['width']])\n" +
				"pd.DataFrame({'id': test['id'], 'circle': p[:, 0], 'square': p[:, 1]}).to_csv('submission.csv', index=False)\n",
		},
		Result: episode.Result{
			Episode: "run-7", Task: "pet-shapes", Valid: true, Score: &score, Reward: -score, DurationS: 2.345,
			Stages: []string{"imported packages", "loaded data", "trained model"}, Output: out.String(),
		},
	}
}

// TestPromptGolden renders both prompts for the fixture task and compares
// them with testdata/golden (go test -run TestPromptGolden -update rewrites).
func TestPromptGolden(t *testing.T) {
	tk := loadFixture(t)
	info, err := NewTaskInfo(tk, DefaultLimits(), DefaultPackages())
	if err != nil {
		t.Fatal(err)
	}
	info.TimeLimit = durationWords(10 * time.Minute)
	cases := []struct {
		name   string
		prompt rl.Prompt
	}{
		{"scratch", rl.Prompt{Kind: episode.Scratch, Task: tk}},
		{"improve", rl.Prompt{Kind: episode.Improve, Task: tk, Parent: parentSolution()}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msgs, err := Messages(info, c.prompt, DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) != 2 || msgs[0].Role != "system" || msgs[1].Role != "user" {
				t.Fatalf("messages = %+v, want system then user", msgs)
			}
			got := "=== system\n" + msgs[0].Content + "\n=== user\n" + msgs[1].Content + "\n"
			path := filepath.Join("testdata", "golden", c.name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the rendered prompt (run with -update after checking the diff):\n%s", path, got)
			}
			t.Logf("%s prompt: %d bytes (~%d tokens at 4 bytes a token)", c.name, len(got), len(got)/4)
		})
	}
}

// TestPromptContent asserts the paper's appendix C content is in the
// prompts, independently of the golden wording.
func TestPromptContent(t *testing.T) {
	tk := loadFixture(t)
	info, err := NewTaskInfo(tk, DefaultLimits(), DefaultPackages())
	if err != nil {
		t.Fatal(err)
	}
	scratch, err := Messages(info, rl.Prompt{Kind: episode.Scratch, Task: tk}, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	parent := parentSolution()
	improve, err := Messages(info, rl.Prompt{Kind: episode.Improve, Task: tk, Parent: parent}, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	s, im := scratch[1].Content, improve[1].Content
	for _, want := range []string{
		"3 to 5 sentences", "single markdown code block", // plan then one block
		"./data/", "./submission.csv", "id,circle,square", // paths and format
		"e1,0.5,0.5",                // sample submission rows
		"log_loss, lower is better", // metric and direction
		"numpy", "pandas", "scipy", "scikit-learn", "xgboost", "PIL",
		"no internet",
		"./data/train.csv (", "id,image,width,notes,label", "t1,images/t1.png", // snippet: header + rows
		"./data/images/ (folder, 6 files (.png 5, .txt 1)", "e.g. README.txt, e1.png, e2.png, ...", // folder summarised
		"./data/shapes.bin (256 B, binary)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("scratch prompt lacks %q", want)
		}
	}
	if strings.Contains(s, "t5,images") {
		t.Error("scratch prompt shows more than header + 3 rows of train.csv")
	}
	if strings.Contains(s, strings.Repeat("a long free-text note about the drawing ", 6)) {
		t.Error("a 300-byte data line was not cut")
	}
	for _, want := range []string{
		parent.Action.Plan,
		"pd.DataFrame({'id': test['id'], 'circle': p[:, 0], 'square': p[:, 1]})", // previous code
		"\n\n\ntrain = pd.read_csv", // verbatim, blank lines kept
		"scored 0.4213", "ran for 2.3 s",
		"loaded 40 rows", "validation log loss 0.4213", // head and tail of the output
		"bytes left out",
		"Revise the solution",
		"log_loss, lower is better", // the task is still there
	} {
		if !strings.Contains(im, want) {
			t.Errorf("improve prompt lacks %q", want)
		}
	}
	if len(im) > len(s)+DefaultLimits().Code+DefaultLimits().Output+DefaultLimits().Plan+1000 {
		t.Errorf("improve prompt is %d bytes: the limits did not hold", len(im))
	}
}

func TestDurationWords(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "", 10 * time.Minute: "10 minutes", time.Hour: "1 hour", 90 * time.Second: "90 seconds", 1500 * time.Millisecond: "1.5s",
	} {
		if got := durationWords(d); got != want {
			t.Errorf("durationWords(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestHeadTail(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"0123456789abcdefghij", 10, "01234\n[... 10 bytes left out ...]\nfghij"},
		{"ééééé", 4, "é\n[... 6 bytes left out ...]\né"},
		{"line one\nline two\nline three\nline four\n", 24, "line one\n[... 20 bytes left out ...]\nline four\n"},
	}
	for _, c := range cases {
		if got := headTail(c.in, c.n); got != c.want {
			t.Errorf("headTail(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
