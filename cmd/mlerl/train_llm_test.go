package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mlerl/mlerl/policy/llm"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/rl/runfolder"
	"github.com/mlerl/mlerl/sandbox"
)

// TestMain lets the test binary serve as the sandbox's supervisor and exec
// stage, as main does for the mlerl binary: train runs real episodes here.
func TestMain(m *testing.M) {
	sandbox.Reexec()
	os.Exit(m.Run())
}

// The fake policy server's replies, in turn: a program that ranks the test
// rows perfectly (AUC 1), a constant one (AUC 0.5), prose with no code block,
// and a program that crashes after loading the data.
const (
	llmGoodCode = `import pandas as pd
train = pd.read_csv("./data/train.csv")
test = pd.read_csv("./data/test.csv")
print("rows seen:", len(train))
pd.DataFrame({"id": test["id"], "label": test["x"]}).to_csv("submission.csv", index=False)
`
	llmConstCode = `import pandas as pd
test = pd.read_csv("./data/test.csv")
pd.DataFrame({"id": test["id"], "label": 0.5}).to_csv("submission.csv", index=False)
`
	llmBrokenCode = `import pandas as pd
test = pd.read_csv("./data/test.csv")
print(test["no_such_column"])
`
)

var llmReplies = []string{
	"Use x itself as the score; it orders the rows.\n```python\n" + llmGoodCode + "```\n",
	"Predict a constant.\n```python\n" + llmConstCode + "```\n",
	"I would fit a logistic regression on x, but I will not write it out.",
	"Print a column.\n```python\n" + llmBrokenCode + "```\n",
}

// policyServer is an OpenAI-compatible chat-completions server for both the
// policy (model "tiny-policy": scripted replies with logprobs, refusing n>1
// like llama.cpp) and the frozen instrumenter (model "frozen-instrumenter":
// inserts markers after imports and after reading test.csv).
type policyServer struct {
	mu      sync.Mutex
	n       int // policy choices served
	users   []string
	auth    map[string]bool
	instrum int
}

func (s *policyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string        `json:"model"`
		Messages []llm.Message `json:"messages"`
		N        int           `json:"n"`
		Logprobs bool          `json:"logprobs"`
	}
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &req); err != nil || len(req.Messages) < 2 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.auth[r.Header.Get("Authorization")] = true
	user := req.Messages[len(req.Messages)-1].Content
	var reply string
	switch req.Model {
	case "frozen-instrumenter":
		s.instrum++
		reply = "```python\n" + markLines(codeBlock(user)) + "```"
	case "tiny-policy":
		if req.N > 1 {
			s.mu.Unlock()
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"code":400,"message":"Only one completion choice is allowed","type":"invalid_request_error"}}`)
			return
		}
		s.users = append(s.users, user)
		reply = llmReplies[s.n%len(llmReplies)]
		s.n++
	default:
		s.mu.Unlock()
		http.Error(w, `{"error":{"message":"unknown model"}}`, http.StatusNotFound)
		return
	}
	s.mu.Unlock()
	choice := map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": reply}}
	if req.Logprobs {
		var content []map[string]any
		for k := 0; k < len(reply); k += 4 {
			content = append(content, map[string]any{"token": reply[k:min(k+4, len(reply))], "logprob": -0.25, "top_logprobs": []any{}})
		}
		choice["logprobs"] = map[string]any{"content": content}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-x", "object": "chat.completion", "model": req.Model, "choices": []any{choice}})
}

func codeBlock(s string) string {
	_, after, _ := strings.Cut(s, "```python\n")
	code, _, _ := strings.Cut(after, "\n```")
	return code + "\n"
}

func markLines(code string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(code, "\n") {
		b.WriteString(l)
		switch {
		case strings.HasPrefix(l, "import "):
			b.WriteString("__mlerl_stage__(\"imported packages\")\n")
		case strings.Contains(l, `pd.read_csv("./data/test.csv")`):
			b.WriteString("__mlerl_stage__(\"loaded data\")\n")
		}
	}
	return b.String()
}

type episodeLine struct {
	rl.EpisodeRecord
	Instrumentation string `json:"instrumentation"`
}

// TestTrainLLM runs `mlerl train --policy llm` in-process against the fake
// server, with the LM instrumenter, real sandboxed episodes and a small
// wall-clock budget, then checks the run folder and rollouts.jsonl; then the
// prompting baseline (--no-learn) on the same task.
func TestTrainLLM(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sandboxed episodes for ~20 s")
	}
	t.Setenv("MLERL_API_KEY", "test-key")
	srv := &policyServer{auth: map[string]bool{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	taskDir := filepath.Join("testdata", "tiny-llm")

	dir := filepath.Join(t.TempDir(), "run")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"train", "--task", taskDir, "--out", dir,
		"--policy", "llm", "--llm-url", ts.URL + "/v1", "--llm-model", "tiny-policy",
		"--instrument", "lm", "--instrumenter-url", ts.URL, "--instrumenter-model", "frozen-instrumenter",
		"--budget", "12s", "--workers", "2", "--batch", "2", "--timeout", "60s"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("train exit %d:\n%s", code, stderr.String())
	}
	checkLLMRunFolder(t, dir, ts.URL)
	byID, used := checkLLMEpisodes(t, dir)
	rolls := checkLLMRollouts(t, dir, byID, used)
	checkLLMRequests(t, srv)

	t.Run("resume", func(t *testing.T) { testTrainLLMResume(t, dir, len(rolls)) })
	t.Run("no-learn", func(t *testing.T) { testTrainLLMNoLearn(t, taskDir, ts.URL) })
}

// checkLLMRunFolder checks the run folder's files, that best/ holds the
// AUC-1 program, and that run.json keeps the llm settings (serverURL: the
// fake server's) for --resume.
func checkLLMRunFolder(t *testing.T, dir, serverURL string) {
	t.Helper()
	for _, f := range []string{"episodes.jsonl", "metrics.jsonl", "summary.json", "report.html", "run.json",
		"best/solution.py", "best/submission.csv", "best/result.json", rolloutsFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("run folder: %v", err)
		}
	}
	best, _ := os.ReadFile(filepath.Join(dir, "best", "solution.py"))
	if string(best) != llmGoodCode {
		t.Errorf("best/solution.py = %q, want the AUC-1 program", best)
	}
	var rc runConfig
	raw, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	if err := json.Unmarshal(raw, &rc); err != nil || rc.LLMURL != serverURL+"/v1" || rc.LLMModel != "tiny-policy" ||
		rc.MaxTokens != 1024 || rc.InstrumenterModel != "frozen-instrumenter" {
		t.Errorf("run.json does not keep the llm settings for --resume: %s (%v)", raw, err)
	}
}

// checkLLMEpisodes checks episodes.jsonl holds valid, failed and used
// episodes, failures penalised and valid ones LM-instrumented. It returns
// the episodes by id and the number used in updates.
func checkLLMEpisodes(t *testing.T, dir string) (map[string]episodeLine, int) {
	t.Helper()
	eps, _, err := runfolder.ReadJSONL[episodeLine](filepath.Join(dir, "episodes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]episodeLine{}
	var failures, valid, used int
	for _, e := range eps {
		byID[e.Episode] = e
		switch {
		case e.Valid:
			valid++
		case strings.Contains(e.Error, "no submission.csv written"):
			failures++
			if e.Reward > -9 {
				t.Errorf("episode %s failed but earned %v", e.Episode, e.Reward)
			}
		}
		if e.Advantage != nil && !e.Dropped {
			used++
		}
		if e.Valid && e.Instrumentation != "lm" {
			t.Errorf("episode %s instrumented by %q, want lm", e.Episode, e.Instrumentation)
		}
	}
	t.Logf("%d episodes (%d valid, %d failed), %d used in updates", len(eps), valid, failures, used)
	if valid == 0 || failures == 0 || used == 0 {
		t.Fatalf("want valid, failed and used episodes; got %d, %d, %d", valid, failures, used)
	}
	return byID, used
}

// checkLLMRollouts checks rollouts.jsonl: one rollout per episode used in
// an update, agreeing with its episode, with token logprobs and the prompt
// sent, from more than one policy version.
func checkLLMRollouts(t *testing.T, dir string, byID map[string]episodeLine, used int) []llm.Rollout {
	t.Helper()
	rolls, torn, err := runfolder.ReadJSONL[llm.Rollout](filepath.Join(dir, rolloutsFile))
	if err != nil || torn {
		t.Fatalf("rollouts.jsonl: torn %v, %v", torn, err)
	}
	if len(rolls) != used {
		t.Errorf("%d rollouts, want one per episode used in an update (%d)", len(rolls), used)
	}
	versions := map[int]bool{}
	for i, r := range rolls {
		e, ok := byID[r.Episode]
		if !ok || r.DurationS == nil {
			t.Errorf("rollout %d: episode %q not in episodes.jsonl or no duration", i, r.Episode)
			continue
		}
		if *r.DurationS != e.DurationS || r.Reward != e.Reward || r.Weight != *e.Weight || r.Advantage != *e.Advantage ||
			r.PolicyVersion != e.PolicyVersion {
			t.Errorf("rollout %d disagrees with episode %s: %+v vs %+v", i, e.Episode, r, e.EpisodeRecord)
		}
		if len(r.TokenLogprobs) == 0 || r.TokenLogprobs[0] != -0.25 || len(r.TokenLogprobs) != (len(r.Response)+3)/4 {
			t.Errorf("rollout %d: %d token logprobs for a %d-byte response", i, len(r.TokenLogprobs), len(r.Response))
		}
		if len(r.Messages) != 2 || !strings.Contains(r.Messages[1].Content, "auc, higher is better") {
			t.Errorf("rollout %d: messages do not hold the prompt sent", i)
		}
		versions[r.PolicyVersion] = true
	}
	if len(versions) < 2 {
		t.Errorf("rollouts come from policy versions %v; updates should bump the version", versions)
	}
	return rolls
}

// checkLLMRequests checks what the fake server was sent: improve prompts
// carrying the previous program and its output, instrumenter requests, and
// the API key as the only Authorization header.
func checkLLMRequests(t *testing.T, srv *policyServer) {
	t.Helper()
	srv.mu.Lock()
	users, auth, instrum := srv.users, srv.auth, srv.instrum
	srv.mu.Unlock()
	improves := 0
	for _, u := range users {
		if strings.Contains(u, "# Your previous solution") {
			improves++
			if !strings.Contains(u, `pd.DataFrame({"id": test["id"], "label"`) {
				t.Errorf("improve prompt without the previous program:\n%s", u)
			}
		}
		if strings.Contains(u, llmGoodCode[:40]) && !strings.Contains(u, "rows seen: 4") {
			t.Errorf("improve prompt on the AUC-1 program lacks its output:\n%s", u)
		}
	}
	t.Logf("%d policy requests (%d improve), %d instrumenter requests", len(users), improves, instrum)
	if improves == 0 || instrum == 0 || !auth["Bearer test-key"] || len(auth) != 1 {
		t.Errorf("improve prompts %d, instrumenter requests %d, Authorization headers %v", improves, instrum, auth)
	}
}

// testTrainLLMResume resumes the run in dir (which had nBefore rollouts)
// and checks rollouts.jsonl still holds one rollout per used episode.
func testTrainLLMResume(t *testing.T, dir string, nBefore int) {
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"train", "--resume", dir, "--budget", "20s"}, io.Discard, &stderr); code != 0 {
		t.Fatalf("train --resume exit %d:\n%s", code, stderr.String())
	}
	eps, _, _ := runfolder.ReadJSONL[episodeLine](filepath.Join(dir, "episodes.jsonl"))
	rolls2, _, err := runfolder.ReadJSONL[llm.Rollout](filepath.Join(dir, rolloutsFile))
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, e := range eps {
		if e.Advantage != nil && !e.Dropped {
			used[e.Episode] = true
		}
	}
	seen := map[string]bool{}
	for _, r := range rolls2 {
		if seen[r.Episode] || !used[r.Episode] {
			t.Errorf("rollout for episode %q: twice %v, used in an update %v", r.Episode, seen[r.Episode], used[r.Episode])
		}
		seen[r.Episode] = true
	}
	if len(rolls2) <= nBefore || len(rolls2) != len(used) {
		t.Errorf("after resume: %d rollouts (%d before), %d episodes used", len(rolls2), nBefore, len(used))
	}
	t.Logf("after resume: %d rollouts, one per used episode", len(rolls2))
}

// testTrainLLMNoLearn runs the prompting baseline (--no-learn) on taskDir
// against the fake server and checks every episode is from version 0.
func testTrainLLMNoLearn(t *testing.T, taskDir, serverURL string) {
	dir := filepath.Join(t.TempDir(), "run")
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"train", "--task", taskDir, "--out", dir,
		"--policy", "llm", "--llm-url", serverURL, "--llm-model", "tiny-policy", "--no-learn",
		"--budget", "8s", "--workers", "2", "--batch", "2"}, io.Discard, &stderr)
	if code != 0 {
		t.Fatalf("train --no-learn exit %d:\n%s", code, stderr.String())
	}
	eps, _, err := runfolder.ReadJSONL[episodeLine](filepath.Join(dir, "episodes.jsonl"))
	if err != nil || len(eps) == 0 {
		t.Fatalf("episodes: %d, %v", len(eps), err)
	}
	for _, e := range eps {
		if e.PolicyVersion != 0 {
			t.Fatalf("episode %s from policy version %d under --no-learn", e.Episode, e.PolicyVersion)
		}
	}
	t.Logf("--no-learn: %d episodes, all from policy version 0", len(eps))
}
