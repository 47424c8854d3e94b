package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/policy/recipe"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/suite"
	"github.com/mlerl/mlerl/task"
)

const fixtureTask = "telco-churn"

func loadSuiteTask(name string) (*task.Task, error) {
	dir, err := suite.Resolve(name)
	if err != nil {
		return nil, err
	}
	return task.Load(dir)
}

const solution = `import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier

# Read the data and fit a boosted model.
train = pd.read_csv("data/train.csv")
model = HistGradientBoostingClassifier(max_iter=300, learning_rate=0.1)
print("holdout auc", 0.84)
`

// writeRun makes a run folder with n episodes (one update per 4) and a best
// program; noLearn marks it as the prompting baseline in run.json.
func writeRun(t *testing.T, dir string, n int, noLearn bool, seed int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "best"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{"tasks": []string{fixtureTask}, "policy": "recipe", "budget_ns": 240e9, "batch": 4,
		"duration_aware": true, "seed": 1, "no_learn": noLearn}
	writeJSON(t, filepath.Join(dir, "run.json"), cfg)
	for i := 0; i < n; i++ {
		appendEpisode(t, dir, i, seed)
	}
	best := episodeLine(1, seed)
	writeJSON(t, filepath.Join(dir, "best", "result.json"), best)
	if err := os.WriteFile(filepath.Join(dir, "best", "solution.py"), []byte(solution), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// episodeLine is a plausible episode i: a third fail at some stage, the rest
// score around 0.8 and get faster over time.
func episodeLine(i, seed int) map[string]any {
	stages := []string{"imported packages", "loaded data", "defined model", "training loss", "trained model", "test loss", "predicted test labels"}
	e := map[string]any{"episode": fmt.Sprintf("run%d-%d", seed, i), "task": fixtureTask, "kind": "scratch",
		"duration_s": 20.0 - float64(i%10) + float64(seed), "completed_s": 10.0 + 7*float64(i) + float64(seed),
		"plan": fmt.Sprintf("Read the CSV files with pandas' default settings. Train a histogram gradient boosting model (max iter %d).", 100+10*i)}
	if i%2 == 1 {
		e["kind"] = "improve"
	}
	if i%3 == 0 && i != 1 {
		e["stages"], e["valid"], e["exit_code"] = stages[:1+i%5], false, 1
		e["reward"], e["error"] = -10+0.1*float64(1+i%5), "ValueError: could not convert string to float: 'No'"
		return e
	}
	score := 0.78 + 0.004*float64(i%7) + 0.01*float64(seed)
	if i == 1 {
		score = 0.85
	}
	e["stages"], e["valid"], e["score"], e["reward"] = stages, true, score, score
	return e
}

func appendEpisode(t *testing.T, dir string, i, seed int) {
	t.Helper()
	appendLine(t, filepath.Join(dir, "episodes.jsonl"), episodeLine(i, seed))
	if (i+1)%4 == 0 {
		best := 0.85
		appendLine(t, filepath.Join(dir, "metrics.jsonl"), map[string]any{"update": (i + 1) / 4, "time_s": 10 + 7*float64(i) + float64(seed),
			"episodes": i + 1, "mean_reward": -3 + 0.3*float64(i) - float64(seed), "best_score": best, "mean_duration_s": 18 - 0.3*float64(i)})
	}
}

func appendLine(t *testing.T, path string, v any) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, _ := json.Marshal(v)
	if _, err := f.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

// writeCheckpoint trains a recipe policy a few steps (rewarding plans that
// use gradient boosting) and saves it as dir's last checkpoint.
func writeCheckpoint(t *testing.T, dir string) {
	t.Helper()
	tk, err := loadSuiteTask(fixtureTask)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := recipe.NewPolicy([]*task.Task{tk}, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for u := 0; u < 3; u++ {
		prompts := make([]rl.Prompt, 8)
		for i := range prompts {
			prompts[i] = rl.Prompt{Kind: episode.Scratch, Task: tk}
		}
		acts, err := pol.Sample(ctx, prompts)
		if err != nil {
			t.Fatal(err)
		}
		var samples []rl.Sample
		for i, a := range acts {
			adv := -1.0
			if i%2 == 0 {
				adv = 2
			}
			samples = append(samples, rl.Sample{Prompt: prompts[i], Action: a, Advantage: adv, Weight: 1})
		}
		if _, err := pol.Update(ctx, samples); err != nil {
			t.Fatal(err)
		}
	}
	pdir := fmt.Sprintf("policy-%d", pol.Version())
	if err := pol.Save(filepath.Join(dir, "checkpoint", pdir)); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(dir, "checkpoint", "state.json"), map[string]any{"policy_dir": pdir})
}
