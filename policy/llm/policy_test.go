package llm

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/rl/runfolder"
	"github.com/mlerl/mlerl/task"
)

// testConfig keeps waits short: backoff is 1 ms, so only a Retry-After the
// server sends costs real time.
// testConfig's per-request timeout is generous: a 200 KB reply under the race
// detector on a loaded machine took over 5 s. Tests of the timeout set their own.
func testConfig(url string) Config {
	return Config{URL: url, Model: "qwen2.5-3b", APIKey: "sk-test", Retries: 2, Backoff: time.Millisecond,
		MaxBackoff: 5 * time.Second, Timeout: time.Minute}
}

func newTestPolicy(t *testing.T, cfg Config) (*Policy, *task.Task) {
	t.Helper()
	tk := loadFixture(t)
	p, err := New(cfg, []*task.Task{tk})
	if err != nil {
		t.Fatal(err)
	}
	return p, tk
}

func scratch(tk *task.Task, n int) []rl.Prompt {
	ps := make([]rl.Prompt, n)
	for i := range ps {
		ps[i] = rl.Prompt{Kind: episode.Scratch, Task: tk}
	}
	return ps
}

// TestSampleRequestAndAction: what mlerl sends, and what it makes of a good reply.
func TestSampleRequestAndAction(t *testing.T) {
	srv := newFakeServer(t)
	p, tk := newTestPolicy(t, testConfig(srv.ts.URL))
	acts, err := p.Sample(context.Background(), scratch(tk, 1))
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Path != "/v1/chat/completions" || r.Auth != "Bearer sk-test" || r.ContentType != "application/json" {
		t.Errorf("request path %q auth %q content type %q", r.Path, r.Auth, r.ContentType)
	}
	if r.Body.Model != "qwen2.5-3b" || r.Body.Temperature != 0.7 || r.Body.MaxTokens != 1024 || !r.Body.Logprobs || r.Body.N != 1 || r.Body.Stream {
		t.Errorf("request body %+v: want model, temperature 0.7, max_tokens 1024, logprobs, n=1, no stream", r.Body)
	}
	if r.Raw["logprobs"] != true {
		t.Errorf(`raw request "logprobs" = %v, want true`, r.Raw["logprobs"])
	}
	user := r.Body.Messages[1].Content
	for _, want := range []string{"log_loss, lower is better", "id,circle,square", "e1,0.5,0.5", "./data/train.csv", "id,image,width,notes,label"} {
		if !strings.Contains(user, want) {
			t.Errorf("scratch prompt sent lacks %q", want)
		}
	}
	a := acts[0]
	if a.Code != goodCode {
		t.Errorf("code = %q, want the reply's code block", a.Code)
	}
	if a.Plan != "I will predict the class prior for every row. This is a constant baseline." {
		t.Errorf("plan = %q", a.Plan)
	}
	_, wantLPs := fakeTokens(goodReply)
	if len(a.TokenLogProbs) != len(wantLPs) {
		t.Fatalf("%d token log-probabilities, want %d", len(a.TokenLogProbs), len(wantLPs))
	}
	for i := range wantLPs {
		if a.TokenLogProbs[i] != wantLPs[i] {
			t.Fatalf("logprob %d = %v, want %v", i, a.TokenLogProbs[i], wantLPs[i])
		}
	}
	if a.Kind != episode.Scratch || a.PolicyVersion != 0 || a.Tokens != nil {
		t.Errorf("kind %s version %d tokens %v", a.Kind, a.PolicyVersion, a.Tokens)
	}
	var m meta
	if err := json.Unmarshal(a.Meta, &m); err != nil || m.Response != goodReply || !m.Logprobs || len(m.Messages) != 2 {
		t.Errorf("meta = %+v, %v", m, err)
	}
}

// TestReplyShapes: every reply becomes an action; one without a program runs
// a program that fails at once.
func TestReplyShapes(t *testing.T) {
	big := strings.Repeat("x = 1  # padding to make a long program\n", 200<<10/40)
	cases := []struct {
		name     string
		reply    string
		wantCode string // "" means the failing program
		problem  string
	}{
		{"good", goodReply, goodCode, ""},
		{"broken code", "Plan.\n```python\nimport pandas as pd\ndef (:\n```", "import pandas as pd\ndef (:\n", ""},
		{"no code block", "I would train a gradient boosting model on all columns.", "", "no code block"},
		{"cut at max tokens", "Plan.\n```python\nimport pandas as pd\ntrain = pd.read_", "", "code block not closed (reply cut at max tokens?)"},
		{"empty block", "Plan.\n```python\n```\n", "", "empty code block"},
		{"bash then python", "Install:\n```bash\npip install lightgbm\n```\nThen:\n```py\nprint(1)\n```", "print(1)\n", ""},
		{"200 KB", "A long one.\n```python\n" + big + "```", big, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newFakeServer(t)
			srv.content = func(int, int) string { return c.reply }
			p, tk := newTestPolicy(t, testConfig(srv.ts.URL))
			acts, err := p.Sample(context.Background(), scratch(tk, 1))
			if err != nil {
				t.Fatal(err)
			}
			a := acts[0]
			var m meta
			if err := json.Unmarshal(a.Meta, &m); err != nil {
				t.Fatal(err)
			}
			if c.wantCode == "" {
				if a.Code != failingProgram(c.problem) || !strings.HasPrefix(a.Code, "raise SystemExit(") {
					t.Errorf("code = %q, want the failing program for %q", a.Code, c.problem)
				}
			} else if a.Code != c.wantCode {
				t.Errorf("code = %.80q..., want %.80q...", a.Code, c.wantCode)
			}
			if m.Problem != c.problem || m.Response != c.reply {
				t.Errorf("problem %q (want %q), response kept whole: %v", m.Problem, c.problem, m.Response == c.reply)
			}
			if _, lps := fakeTokens(c.reply); len(a.TokenLogProbs) != len(lps) {
				t.Errorf("%d log-probabilities, want %d", len(a.TokenLogProbs), len(lps))
			}
		})
	}
}

// TestTransport: retries, timeouts, backoff and what is not retried.
func TestTransport(t *testing.T) {
	for _, c := range transportCases() {
		t.Run(c.name, func(t *testing.T) { testTransportCase(t, c) })
	}
}

// transportCase is a fake server's script and what one Sample should see:
// the error (or success), the requests made and the least time taken.
type transportCase struct {
	name      string
	script    func(w http.ResponseWriter, r *http.Request, i int, req chatRequest) bool
	timeout   time.Duration
	wantErr   string // "" means success
	wantReqs  int
	minElapse time.Duration
}

func transportCases() []transportCase {
	return []transportCase{
		{"429 then success honours Retry-After", func(w http.ResponseWriter, r *http.Request, i int, _ chatRequest) bool {
			if i == 0 {
				writeStatus(w, http.StatusTooManyRequests, "1")
				return true
			}
			return false
		}, 0, "", 2, time.Second},
		{"two 500s then success", func(w http.ResponseWriter, r *http.Request, i int, _ chatRequest) bool {
			if i < 2 {
				writeStatus(w, http.StatusInternalServerError, "")
				return true
			}
			return false
		}, 0, "", 3, 0},
		{"500s past the retries", func(w http.ResponseWriter, r *http.Request, i int, _ chatRequest) bool {
			writeStatus(w, http.StatusBadGateway, "")
			return true
		}, 0, "after 3 attempts: HTTP 502", 3, 0},
		{"slow reply then a fast one", func(w http.ResponseWriter, r *http.Request, i int, _ chatRequest) bool {
			if i == 0 {
				slowUntil(w, r, time.Minute)
				return true
			}
			return false
		}, 200 * time.Millisecond, "", 2, 200 * time.Millisecond},
		{"always slower than the timeout", func(w http.ResponseWriter, r *http.Request, i int, _ chatRequest) bool {
			slowUntil(w, r, time.Minute)
			return true
		}, 100 * time.Millisecond, "no reply within 100ms", 3, 300 * time.Millisecond},
		{"malformed JSON then success", func(w http.ResponseWriter, r *http.Request, i int, _ chatRequest) bool {
			if i == 0 {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"id":"chatcmpl-1","choices":[{"index":0,"message":{"content":"half`))
				return true
			}
			return false
		}, 0, "", 2, 0},
		{"always malformed", func(w http.ResponseWriter, r *http.Request, i int, _ chatRequest) bool {
			w.Write([]byte(`<html>bad gateway</html>`))
			return true
		}, 0, "malformed reply", 3, 0},
		{"400 is not retried", func(w http.ResponseWriter, r *http.Request, i int, _ chatRequest) bool {
			writeStatus(w, http.StatusBadRequest, "")
			return true
		}, 0, "HTTP 400", 1, 0},
	}
}

// testTransportCase samples once against a fake server running c.script.
func testTransportCase(t *testing.T, c transportCase) {
	srv := newFakeServer(t)
	srv.script = c.script
	cfg := testConfig(srv.ts.URL)
	if c.timeout > 0 {
		cfg.Timeout = c.timeout
	}
	p, tk := newTestPolicy(t, cfg)
	start := time.Now()
	acts, err := p.Sample(context.Background(), scratch(tk, 1))
	elapsed := time.Since(start)
	if c.wantErr == "" {
		if err != nil {
			t.Fatal(err)
		}
		if acts[0].Code != goodCode {
			t.Errorf("code = %q", acts[0].Code)
		}
	} else if err == nil || !strings.Contains(err.Error(), c.wantErr) {
		t.Fatalf("error = %v, want one containing %q", err, c.wantErr)
	}
	if n := len(srv.requests()); n != c.wantReqs || p.Attempts() != int64(c.wantReqs) {
		t.Errorf("server saw %d requests, policy counted %d, want %d", n, p.Attempts(), c.wantReqs)
	}
	if elapsed < c.minElapse {
		t.Errorf("took %v, want at least %v", elapsed, c.minElapse)
	}
}

// TestNRefused: identical prompts go out as one request with n; a server
// that refuses n>1 (llama.cpp) or ignores it gets one request per sample,
// and is remembered as such.
func TestNRefused(t *testing.T) {
	cases := []struct {
		name             string
		refuse, ignore   bool
		firstN, secondNs []int
	}{
		{"honours n", false, false, []int{4}, []int{3}},
		{"refuses n", true, false, []int{4, 1, 1, 1, 1}, []int{1, 1, 1}},
		{"ignores n", false, true, []int{4, 1, 1, 1}, []int{1, 1, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newFakeServer(t)
			srv.refuseN, srv.ignoreN = c.refuse, c.ignore
			srv.content = func(i, j int) string {
				return "Plan.\n```python\nprint(" + string(rune('a'+i)) + string(rune('0'+j)) + ")\n```"
			}
			p, tk := newTestPolicy(t, testConfig(srv.ts.URL))
			acts, err := p.Sample(context.Background(), scratch(tk, 4))
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, a := range acts {
				if seen[a.Code] {
					t.Errorf("two actions share the program %q: one completion used twice", a.Code)
				}
				seen[a.Code] = true
			}
			ns := func(rs []seenRequest) []int {
				var out []int
				for _, r := range rs {
					out = append(out, r.Body.N)
				}
				return out
			}
			first := srv.requests()
			if got := ns(first); !slices.Equal(got, c.firstN) {
				t.Errorf("first call sent n = %v, want %v", got, c.firstN)
			}
			if _, err := p.Sample(context.Background(), scratch(tk, 3)); err != nil {
				t.Fatal(err)
			}
			if got := ns(srv.requests()[len(first):]); !slices.Equal(got, c.secondNs) {
				t.Errorf("second call sent n = %v, want %v", got, c.secondNs)
			}
		})
	}
}

// TestConcurrencyLimit: never more requests on the wire than the limit.
func TestConcurrencyLimit(t *testing.T) {
	srv := newFakeServer(t)
	srv.refuseN = true
	srv.script = func(w http.ResponseWriter, r *http.Request, i int, req chatRequest) bool {
		if req.N == 1 {
			slowUntil(w, r, 20*time.Millisecond) // overlap the requests
		}
		return false
	}
	cfg := testConfig(srv.ts.URL)
	cfg.Concurrency = 2
	p, tk := newTestPolicy(t, cfg)
	if _, err := p.Sample(context.Background(), scratch(tk, 8)); err != nil {
		t.Fatal(err)
	}
	if got := srv.maxInFlight(); got > 2 || got < 1 {
		t.Errorf("%d requests in flight at once, limit 2", got)
	}
	if n := len(srv.requests()); n != 9 {
		t.Errorf("%d requests, want 9 (one refused n=8, then 8 with n=1)", n)
	}
}

// TestImprovePrompt: the improve prompt sent holds the previous plan, code,
// output and score.
func TestImprovePrompt(t *testing.T) {
	srv := newFakeServer(t)
	p, tk := newTestPolicy(t, testConfig(srv.ts.URL))
	parent := parentSolution()
	acts, err := p.Sample(context.Background(), []rl.Prompt{{Kind: episode.Improve, Task: tk, Parent: parent}})
	if err != nil {
		t.Fatal(err)
	}
	if acts[0].Kind != episode.Improve {
		t.Errorf("kind %s, want improve", acts[0].Kind)
	}
	user := srv.requests()[0].Body.Messages[1].Content
	for _, want := range []string{parent.Action.Plan, parent.Action.Code, "loaded 40 rows", "validation log loss 0.4213", "scored 0.4213"} {
		if !strings.Contains(user, strings.TrimRight(want, "\n")) {
			t.Errorf("improve prompt sent lacks %q", want)
		}
	}
}

// TestRollouts: Update hands the batch over with each sample's duration
// from its result, rollouts.jsonl holds what a trainer needs; Save/Load cut
// back lines a crash left after the checkpoint.
func TestRollouts(t *testing.T) {
	srv := newFakeServer(t)
	dir := t.TempDir()
	cfg := testConfig(srv.ts.URL)
	cfg.Rollouts = filepath.Join(dir, "rollouts.jsonl")
	srv.content = func(i, j int) string {
		if j == 1 {
			return "no code here"
		}
		return goodReply
	}
	p, tk := newTestPolicy(t, cfg)
	ctx := context.Background()
	acts, err := p.Sample(ctx, scratch(tk, 3))
	if err != nil {
		t.Fatal(err)
	}
	rewards := []float64{-0.69, -10, -0.5}
	weights := []float64{0.5, 0.25, 2.25} // Δt / mean Δt for Δt = 2, 1, 9
	durs := []float64{2, 1, 9}
	samples := make([]rl.Sample, 3)
	for i := range samples {
		adv := (rewards[i] + 3) * weights[i]
		res := episode.Result{Episode: "run-" + string(rune('0'+i)), Reward: rewards[i], DurationS: durs[i]}
		samples[i] = rl.Sample{Prompt: scratch(tk, 1)[0], Action: acts[i], Result: res, Reward: rewards[i], Advantage: adv, Weight: weights[i]}
	}
	st, err := p.Update(ctx, samples)
	if err != nil {
		t.Fatal(err)
	}
	if st.NewVersion != 1 || p.Version() != 1 {
		t.Errorf("version %d/%d after one update, want 1", st.NewVersion, p.Version())
	}
	checkEntropy(t, st.Entropy, acts)
	raw := checkRolloutLines(t, cfg.Rollouts, acts, rewards, weights, durs)
	checkRolloutsCutBack(t, p, cfg, filepath.Join(dir, "ck"), samples, int64(len(raw)), durs[0])
}

// checkEntropy checks the update's entropy is minus the mean logprob of the
// sampled tokens.
func checkEntropy(t *testing.T, entropy float64, acts []rl.Action) {
	t.Helper()
	var sumLP float64
	var n int
	for _, a := range acts {
		for _, lp := range a.TokenLogProbs {
			sumLP += lp
			n++
		}
	}
	if math.Abs(entropy+sumLP/float64(n)) > 1e-12 {
		t.Errorf("entropy %v, want -mean logprob %v", entropy, -sumLP/float64(n))
	}
}

// checkRolloutLines checks rollouts.jsonl after the first update: one line
// per sample, agreeing with it, with the contract's keys. It returns the
// file's contents.
func checkRolloutLines(t *testing.T, path string, acts []rl.Action, rewards, weights, durs []float64) []byte {
	t.Helper()
	lines, torn, err := runfolder.ReadJSONL[Rollout](path)
	if err != nil || torn || len(lines) != 3 {
		t.Fatalf("rollouts.jsonl: %d lines, torn %v, %v", len(lines), torn, err)
	}
	for i, l := range lines {
		if l.Reward != rewards[i] || l.Weight != weights[i] || l.Advantage != (rewards[i]+3)*weights[i] {
			t.Errorf("line %d: reward %v weight %v advantage %v", i, l.Reward, l.Weight, l.Advantage)
		}
		if l.DurationS == nil || *l.DurationS != durs[i] || l.Episode != "run-"+string(rune('0'+i)) {
			t.Errorf("line %d: duration %v episode %q, want %v", i, l.DurationS, l.Episode, durs[i])
		}
		if l.PolicyVersion != 0 || l.Update != 1 || l.Task != "pet-shapes" || l.Kind != "scratch" || len(l.Messages) != 2 {
			t.Errorf("line %d: version %d update %d task %q kind %q %d messages", i, l.PolicyVersion, l.Update, l.Task, l.Kind, len(l.Messages))
		}
		if !slices.Equal(l.TokenLogprobs, acts[i].TokenLogProbs) || len(l.Tokens) != len(l.TokenLogprobs) {
			t.Errorf("line %d: token logprobs differ from the behaviour policy's", i)
		}
	}
	if lines[1].Problem != "no code block" || lines[1].Response != "no code here" {
		t.Errorf("line 1: problem %q response %q", lines[1].Problem, lines[1].Response)
	}
	// The raw line has exactly the contract's keys (and our extras).
	raw, _ := os.ReadFile(path)
	var first map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(string(raw), "\n", 2)[0]), &first); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"messages", "response", "token_logprobs", "reward", "advantage", "weight", "duration_s", "policy_version"} {
		if _, ok := first[k]; !ok {
			t.Errorf("rollout line lacks %q", k)
		}
	}
	return raw
}

// checkRolloutsCutBack saves p to ck, updates again with samples[:1] (whose
// duration is dur0), and checks that loading ck cuts rollouts.jsonl back to
// its size at the checkpoint.
func checkRolloutsCutBack(t *testing.T, p *Policy, cfg Config, ck string, samples []rl.Sample, size int64, dur0 float64) {
	t.Helper()
	ctx := context.Background()
	// Checkpoint, then a second update whose lines a crash leaves behind.
	if err := p.Save(ck); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Update(ctx, samples[:1]); err != nil {
		t.Fatal(err)
	}
	lines, _, _ := runfolder.ReadJSONL[Rollout](cfg.Rollouts)
	if len(lines) != 4 || lines[3].DurationS == nil || *lines[3].DurationS != dur0 || lines[3].Update != 2 {
		t.Fatalf("after a second update: %d lines, last %+v", len(lines), lines[len(lines)-1])
	}
	q, _ := newTestPolicy(t, cfg)
	if err := q.Load(ck); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(cfg.Rollouts); fi.Size() != size || q.Version() != 1 {
		t.Errorf("after Load: rollouts %d bytes (want %d), version %d (want 1)", fi.Size(), size, q.Version())
	}
}

// TestNoLearn: the prompting baseline records but keeps one policy version.
func TestNoLearn(t *testing.T) {
	srv := newFakeServer(t)
	cfg := testConfig(srv.ts.URL)
	cfg.NoLearn = true
	p, tk := newTestPolicy(t, cfg)
	acts, err := p.Sample(context.Background(), scratch(tk, 2))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		st, err := p.Update(context.Background(), []rl.Sample{{Prompt: scratch(tk, 1)[0], Action: acts[0]}})
		if err != nil {
			t.Fatal(err)
		}
		if st.NewVersion != 0 {
			t.Fatalf("version %d under NoLearn, want 0", st.NewVersion)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	tk := loadFixture(t)
	for _, c := range []Config{{Model: "m"}, {URL: "http://x"}, {URL: "http://x", Model: "m", Temperature: -1}, {URL: "http://x", Model: "m", Concurrency: -2}} {
		if _, err := New(c, []*task.Task{tk}); err == nil {
			t.Errorf("New(%+v) accepted a bad config", c)
		}
	}
	if _, err := New(Config{URL: "http://x", Model: "m"}, []*task.Task{{Name: "gone", Dir: t.TempDir()}}); err == nil {
		t.Error("New accepted a task folder without description.md")
	}
}

func TestTokenIDs(t *testing.T) {
	if got := tokenIDs([]string{"token_id:12", "token_id:7"}); !slices.Equal(got, []int{12, 7}) {
		t.Errorf("tokenIDs = %v", got)
	}
	if got := tokenIDs([]string{"token_id:12", "abc"}); got != nil {
		t.Errorf("tokenIDs of strings = %v, want nil", got)
	}
}
