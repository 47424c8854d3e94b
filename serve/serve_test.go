package serve

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
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/rl/runfolder"
	"github.com/mlerl/mlerl/sandbox"
	"github.com/mlerl/mlerl/task"
)

func TestMain(m *testing.M) {
	// The sandbox re-executes the test binary as its supervisor (landlock tier).
	sandbox.Reexec()
	os.Exit(m.Run())
}

// perfect writes a submission with AUC 1 on tiny-auc and prints a fresh
// nonce: two real runs never print the same line, a reused one does.
const perfect = `import os
print("nonce", os.urandom(8).hex())
open("submission.csv", "w").write("id,label\nb1,0.1\nb2,0.9\nb3,0.8\nb4,0.2\n")
`

// crash reaches two stages, then fails.
const crash = `import pandas as pd
train = pd.read_csv("data/train.csv")
raise RuntimeError("boom")
`

const sleeper = `import time
time.sleep(60)
`

type harness struct {
	t    *testing.T
	srv  *Server
	http *httptest.Server
	dir  string
}

var sandboxOnce struct {
	sync.Once
	sb  *sandbox.Sandbox
	err error
}

func realSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	sandboxOnce.Do(func() {
		sandboxOnce.sb, sandboxOnce.err = sandbox.New(context.Background(), sandbox.Config{})
	})
	if sandboxOnce.err != nil {
		t.Skipf("no sandbox here: %v", sandboxOnce.err)
	}
	return sandboxOnce.sb
}

func tinyTask(t *testing.T) *episode.Prepared {
	t.Helper()
	tk, err := task.Load(filepath.Join("testdata", "tiny-auc"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := episode.Prepare(tk)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// start serves tiny-auc from dir on real sandboxed slots, programs limited to timeout.
func start(t *testing.T, dir, token string, timeout time.Duration) *harness {
	t.Helper()
	return startWith(t, dir, token, timeout, nil)
}

// startWith is start with the server's Config changed by tweak.
func startWith(t *testing.T, dir, token string, timeout time.Duration, tweak func(*Config)) *harness {
	t.Helper()
	if testing.Short() {
		t.Skip("runs sandboxed programs")
	}
	p := tinyTask(t)
	set := episode.Settings{Timeout: timeout, Instrument: "ast", Threads: 1}
	pool, err := episode.NewPool(&episode.Runner{Sandbox: realSandbox(t), Max: set}, map[string]string{p.Task.Name: p.Task.PublicDir()}, 2)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Executor: pool, Tasks: []*episode.Prepared{p}, Settings: set, Dir: dir, Token: token}
	if tweak != nil {
		tweak(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, srv: srv, http: httptest.NewServer(srv.Handler()), dir: dir}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			if err := srv.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			h.http.Close()
			pool.Close()
		})
	}
	t.Cleanup(stop)
	return h
}

// stop ends the server, before a restart on the same folder: waiting
// requests are answered 503, then the listener closes.
func (h *harness) stop() {
	if err := h.srv.Close(); err != nil {
		h.t.Fatal(err)
	}
	h.http.Close()
}

// call sends body as JSON and decodes the answer into out (when not nil).
func (h *harness) call(method, path, token string, body any, out any) int {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, h.http.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			h.t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode
}

func (h *harness) episode(body map[string]any) (Episode, int) {
	h.t.Helper()
	var ep Episode
	code := h.call("POST", "/v1/episodes", "", body, &ep)
	return ep, code
}

func TestScoresProgramsAndCompletions(t *testing.T) {
	h := start(t, t.TempDir(), "", 5*time.Second)
	ep, code := h.episode(map[string]any{"request_id": "valid", "task": "tiny-auc", "code": perfect})
	if code != 200 || !ep.Valid || ep.Score == nil || *ep.Score != 1 || ep.Reward != 1 {
		t.Fatalf("valid program: %d %+v", code, ep)
	}
	if !strings.Contains(ep.Feedback, "scored 1") || !strings.Contains(ep.Feedback, "nonce") {
		t.Errorf("feedback lacks the score or the output:\n%s", ep.Feedback)
	}
	reply := "I will predict x.\n\n```python\n" + strings.ReplaceAll(perfect, "nonce", "reply") + "```\n"
	ep, code = h.episode(map[string]any{"request_id": "reply", "task": "tiny-auc", "completion": reply})
	if code != 200 || !ep.Valid || ep.Reward != 1 {
		t.Fatalf("completion with a program: %d %+v", code, ep)
	}
	ep, code = h.episode(map[string]any{"request_id": "prose", "task": "tiny-auc", "completion": "I would use xgboost."})
	if code != 200 || ep.Valid || ep.Reward != -10 || ep.Problem == "" {
		t.Fatalf("completion without a program: %d %+v", code, ep)
	}
	ep, code = h.episode(map[string]any{"request_id": "crash", "task": "tiny-auc", "kind": "improve", "parent": "valid", "code": crash})
	if code != 200 || ep.Valid || ep.Reward <= -10 || ep.Reward >= -9 || len(ep.Stages) < 2 || !strings.Contains(ep.Feedback, "boom") {
		t.Fatalf("crash: want partial credit for its stages: %d %+v", code, ep)
	}
	if ep.Kind != episode.Improve || ep.Parent != "valid" {
		t.Errorf("crash: kind %q parent %q", ep.Kind, ep.Parent)
	}
}

func TestTimeout(t *testing.T) {
	h := start(t, t.TempDir(), "", 2*time.Second)
	ep, code := h.episode(map[string]any{"request_id": "slow", "task": "tiny-auc", "code": sleeper})
	if code != 200 || !ep.TimedOut || ep.Valid || ep.Reward > -9 {
		t.Fatalf("sleeper: %d %+v", code, ep)
	}
}

// Concurrent POSTs with one request id run one program: the same episode,
// the same output, one line in episodes.jsonl.
func TestDuplicateRequestRunsOnce(t *testing.T) {
	h := start(t, t.TempDir(), "", 10*time.Second)
	var wg sync.WaitGroup
	got := make([]Episode, 4)
	for i := range got {
		wg.Go(func() {
			got[i], _ = h.episode(map[string]any{"request_id": "same", "task": "tiny-auc", "code": perfect, "wait_s": 60})
		})
	}
	wg.Wait()
	for _, ep := range got[1:] {
		if ep.Episode != got[0].Episode || ep.Feedback != got[0].Feedback || ep.Episode == "" {
			t.Fatalf("retries differ: %+v vs %+v", ep, got[0])
		}
	}
	h.stop()
	eps, _, err := runfolder.ReadJSONL[Episode](filepath.Join(h.dir, EpisodesFile))
	if err != nil || len(eps) != 1 || eps[0].RequestID != "same" {
		t.Fatalf("episodes.jsonl: %v %+v", err, eps)
	}
	for _, f := range []string{SummaryFile, "report.html", "best/tiny-auc/solution.py"} {
		if _, err := os.Stat(filepath.Join(h.dir, f)); err != nil {
			t.Errorf("run folder: %v", err)
		}
	}
}

// A slow episode answers 202 with its id; the id long-polls to the result.
// A restarted server on the same folder answers the request id at once and
// finishes requests accepted but not finished before it stopped.
func TestPollAndRestart(t *testing.T) {
	dir := t.TempDir()
	h := start(t, dir, "", 5*time.Second)
	slow := "import time\ntime.sleep(1.5)\n" + perfect
	var pend pendingView
	if code := h.call("POST", "/v1/episodes", "", map[string]any{"request_id": "r1", "task": "tiny-auc", "code": slow, "wait_s": 0}, &pend); code != 202 || pend.ID == "" {
		t.Fatalf("want 202 with an id, got %d %+v", code, pend)
	}
	var ep Episode
	if code := h.call("GET", "/v1/episodes/"+pend.ID+"?wait_s=60", "", nil, &ep); code != 200 || !ep.Valid || ep.RequestID != "r1" {
		t.Fatalf("poll: %d %+v", code, ep)
	}
	if code := h.call("POST", "/v1/episodes", "", map[string]any{"request_id": "r2", "task": "tiny-auc", "code": sleeper, "wait_s": 0}, &pend); code != 202 {
		t.Fatalf("r2: %d", code)
	}
	polled := make(chan int)
	go func() {
		var e map[string]string
		polled <- h.call("GET", "/v1/episodes/"+pend.ID+"?wait_s=60", "", nil, &e)
	}()
	time.Sleep(200 * time.Millisecond) // the poll is waiting
	h.stop()
	if code := <-polled; code != 503 {
		t.Errorf("a poll cut by shutdown: %d, want 503 (retry)", code)
	}

	h2 := start(t, dir, "", 5*time.Second)
	var again Episode
	if code := h2.call("POST", "/v1/episodes", "", map[string]any{"request_id": "r1", "task": "tiny-auc", "code": "ignored", "wait_s": 0}, &again); code != 200 {
		t.Fatalf("restart: want 200 from the folder, got %d", code)
	}
	if again.Episode != ep.Episode || again.DurationS != ep.DurationS || again.Feedback != ep.Feedback {
		t.Fatalf("restart answered differently: %+v vs %+v", again, ep)
	}
	if code := h2.call("GET", "/v1/episodes/"+pend.ID+"?wait_s=60", "", nil, &again); code != 200 || !again.TimedOut {
		t.Fatalf("r2 after restart: %d %+v", code, again)
	}
}

func TestTokenAndErrors(t *testing.T) {
	h := start(t, t.TempDir(), "s3cret", 5*time.Second)
	var e map[string]string
	for _, tok := range []string{"", "wrong"} {
		if code := h.call("GET", "/v1/tasks", tok, nil, &e); code != 401 || e["error"] == "" {
			t.Errorf("token %q: %d %v", tok, code, e)
		}
	}
	var tasks []taskView
	if code := h.call("GET", "/v1/tasks", "s3cret", nil, &tasks); code != 200 || len(tasks) != 1 || !strings.Contains(tasks[0].Prompt, "# Task: tiny-auc") {
		t.Fatalf("tasks: %d %+v", code, tasks)
	}
	for _, tc := range []struct {
		body any
		want int
	}{
		{map[string]any{"task": "nope", "code": "pass"}, 400},
		{map[string]any{"task": "tiny-auc"}, 400},
		{map[string]any{"task": "tiny-auc", "code": "pass", "kind": "other"}, 400},
		{map[string]any{"task": "tiny-auc", "code": "pass", "typo": 1}, 400},
		{"not an object", 400},
	} {
		if code := h.call("POST", "/v1/episodes", "s3cret", tc.body, &e); code != tc.want || e["error"] == "" {
			t.Errorf("%v: %d %v, want %d", tc.body, code, e, tc.want)
		}
	}
	if code := h.call("GET", "/v1/episodes/ep-nope", "s3cret", nil, &e); code != 404 {
		t.Errorf("unknown id: %d", code)
	}
	durs := []float64{1, 3, 0, 8.5}
	var w struct{ Weights []float64 }
	if code := h.call("POST", "/v1/weights", "s3cret", map[string]any{"durations_s": durs}, &w); code != 200 {
		t.Fatalf("weights: %d", code)
	}
	want := rl.DurationWeights(durs)
	for i := range want {
		if w.Weights[i] != want[i] {
			t.Fatalf("weights %v, want %v", w.Weights, want)
		}
	}
}

func TestSessionsAndGetReward(t *testing.T) {
	h := start(t, t.TempDir(), "", 10*time.Second)
	var sess struct {
		ID          string
		Observation string
	}
	if code := h.call("POST", "/v1/sessions", "", map[string]any{"task": "tiny-auc", "max_turns": 2}, &sess); code != 200 || !strings.Contains(sess.Observation, "tiny-auc") {
		t.Fatalf("session: %d %+v", code, sess)
	}
	var st stepView
	reply := "```python\n" + crash + "```"
	if code := h.call("POST", "/v1/sessions/"+sess.ID+"/step", "", map[string]any{"action": reply}, &st); code != 200 || st.Done || st.Reward >= -9 || !strings.Contains(st.Observation, "boom") {
		t.Fatalf("step 1: %d %+v", code, st)
	}
	reply = "Fixed.\n```python\n" + perfect + "```"
	if code := h.call("POST", "/v1/sessions/"+sess.ID+"/step", "", map[string]any{"action": reply}, &st); code != 200 || !st.Done || st.Reward != 1 || st.Info.Kind != episode.Improve {
		t.Fatalf("step 2: %d %+v", code, st)
	}
	var e map[string]string
	if code := h.call("POST", "/v1/sessions/"+sess.ID+"/step", "", map[string]any{"action": reply}, &e); code != 400 {
		t.Errorf("step after done: %d", code)
	}

	prompt := h.srv.tasks["tiny-auc"].prompt
	var rw struct {
		Rewards   []float64
		ExtraLogs map[string][]float64 `json:"extra_logs"`
	}
	body := map[string]any{
		"query":   []string{prompt + "\n```python\n" + perfect + "```", prompt + "no code"},
		"prompts": []string{prompt, prompt},
		"labels":  []string{"tiny-auc", "tiny-auc"},
	}
	if code := h.call("POST", "/get_reward", "", body, &rw); code != 200 || len(rw.Rewards) != 2 || rw.Rewards[0] != 1 || rw.Rewards[1] != -10 {
		t.Fatalf("get_reward: %d %+v", code, rw)
	}
	if len(rw.ExtraLogs["duration_s"]) != 2 || len(rw.ExtraLogs["stages"]) != 2 {
		t.Errorf("extra_logs: %+v", rw.ExtraLogs)
	}
}

// A session carries on after a restart at the turn its episodes reached.
func TestSessionSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	h := start(t, dir, "", 10*time.Second)
	var sess struct{ ID string }
	if code := h.call("POST", "/v1/sessions", "", map[string]any{"task": "tiny-auc", "max_turns": 2}, &sess); code != 200 {
		t.Fatalf("session: %d", code)
	}
	var st stepView
	if code := h.call("POST", "/v1/sessions/"+sess.ID+"/step", "", map[string]any{"action": "no program"}, &st); code != 200 || st.Done {
		t.Fatalf("step 1: %d %+v", code, st)
	}
	h.stop()
	h2 := start(t, dir, "", 10*time.Second)
	reply := "```python\n" + perfect + "```"
	if code := h2.call("POST", "/v1/sessions/"+sess.ID+"/step", "", map[string]any{"action": reply}, &st); code != 200 || !st.Done || st.Info.Kind != episode.Improve || st.Info.Parent == "" || st.Reward != 1 {
		t.Fatalf("step 2 after restart: %d %+v", code, st)
	}
}

func TestResponseOf(t *testing.T) {
	old := "# Your previous solution\n```python\nold()\n```\n\n# Your answer\nRevise it, ```python and ```.\n"
	for _, tc := range []struct{ query, prompt, want string }{
		{"P\nreply", "P", "\nreply"},
		{"<s>user: " + old + "</s>assistant: ```python\nnew()\n```", "not found", "</s>assistant: ```python\nnew()\n```"},
		{"just text", "", "just text"},
	} {
		if got := responseOf(tc.query, tc.prompt); got != tc.want {
			t.Errorf("responseOf(%q) = %q, want %q", tc.query, got, tc.want)
		}
	}
}
