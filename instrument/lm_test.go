package instrument

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

const lmProgram = `import pandas as pd
df = pd.read_csv("data/train.csv")
print(df.shape)
`

const lmMarked = `import pandas as pd
__mlerl_stage__("imported packages")
df = pd.read_csv("data/train.csv")
__mlerl_stage__("loaded data")
print(df.shape)
`

// fakeLM is an OpenAI-compatible chat-completions server: it records what it
// is sent and answers with one scripted reply per request (the last repeats).
type fakeLM struct {
	mu       sync.Mutex
	requests []recorded
	replies  []func(w http.ResponseWriter, r *http.Request)
}

// chatRequest is the request body as the server reads it off the wire.
type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Temperature *float64 `json:"temperature"`
	MaxTokens   int      `json:"max_tokens"`
	Stream      bool     `json:"stream"`
}

type recorded struct {
	method, path, auth, contentType string
	body                            chatRequest
}

func (f *fakeLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var req chatRequest
	_ = json.Unmarshal(b, &req)
	f.mu.Lock()
	f.requests = append(f.requests, recorded{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), req})
	i := min(len(f.requests), len(f.replies)) - 1
	reply := f.replies[i]
	f.mu.Unlock()
	reply(w, r)
}

func (f *fakeLM) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// completion answers with the real response shape of /v1/chat/completions.
func completion(content string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "frozen-7b",
			"choices": []map[string]any{{
				"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content},
			}},
			"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150},
		})
	}
}

func status(code int, retryAfter string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error":{"message":"status %d","type":"server_error"}}`, code)
	}
}

// lmCase is one reply sequence from the fake LM and what the instrumenter
// should make of it.
type lmCase struct {
	name       string
	replies    []func(http.ResponseWriter, *http.Request)
	retries    int
	timeout    time.Duration
	noFallback bool
	wantMethod string // exact, or prefix when it ends with "*"
	wantPoints int
	wantReqs   int
}

// lmCases are TestLMInstrumenter's cases: accepted insertions, rejected
// edits, malformed replies, HTTP errors and retries, a timeout, and a
// failure without fallback.
func lmCases() []lmCase {
	edited := strings.Replace(lmMarked, "print(df.shape)", "print(df.head())", 1)
	return []lmCase{
		{"correct insertion accepted",
			[]func(http.ResponseWriter, *http.Request){completion("Here it is:\n```python\n" + lmMarked + "```\nDone.")},
			0, 0, false, "lm", 2, 1},
		{"reply without trailing newline accepted",
			[]func(http.ResponseWriter, *http.Request){completion("```python\n" + strings.TrimRight(lmMarked, "\n") + "\n```")},
			0, 0, false, "lm", 2, 1},
		{"edit rejected, AST used",
			[]func(http.ResponseWriter, *http.Request){completion("```python\n" + edited + "```")},
			0, 0, false, "lm->ast: rejected: line 5 of the instrumented code is neither original line 3 nor a marker*", 2, 1},
		{"unchanged code rejected",
			[]func(http.ResponseWriter, *http.Request){completion("```python\n" + lmProgram + "```")},
			0, 0, false, "lm->ast: rejected: no markers inserted", 2, 1},
		{"no code block",
			[]func(http.ResponseWriter, *http.Request){completion("I am sorry, I cannot help with that.")},
			0, 0, false, "lm->ast: no code block in the reply", 2, 1},
		{"garbage in the code block",
			[]func(http.ResponseWriter, *http.Request){completion("```python\n\x00\x01 garbage ```\n```")},
			0, 0, false, "lm->ast: rejected:*", 2, 1},
		{"malformed JSON",
			[]func(http.ResponseWriter, *http.Request){func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"choices": [{"message": {"content": "`)
			}},
			0, 0, false, "lm->ast: malformed reply (*", 2, 1},
		{"null content",
			[]func(http.ResponseWriter, *http.Request){func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"length"}]}`)
			}},
			0, 0, false, "lm->ast: reply has no message content", 2, 1},
		{"HTTP 500, retried, still failing",
			[]func(http.ResponseWriter, *http.Request){status(500, "0")},
			1, 0, false, "lm->ast: after 2 attempts: HTTP 500:*", 2, 2},
		{"HTTP 429 then success",
			[]func(http.ResponseWriter, *http.Request){status(429, "0"), completion("```python\n" + lmMarked + "```")},
			2, 0, false, "lm", 2, 2},
		{"HTTP 429 without retries",
			[]func(http.ResponseWriter, *http.Request){status(429, "")},
			0, 0, false, "lm->ast: HTTP 429:*", 2, 1},
		{"HTTP 400 is not retried",
			[]func(http.ResponseWriter, *http.Request){status(400, "")},
			3, 0, false, "lm->ast: HTTP 400:*", 2, 1},
		{"reply slower than the timeout",
			[]func(http.ResponseWriter, *http.Request){func(w http.ResponseWriter, r *http.Request) {
				<-r.Context().Done() // answers only once the client has given up (fakeLM read the body)
			}},
			0, 50 * time.Millisecond, false, "lm->ast: no reply within 50ms", 2, 1},
		{"failure without fallback runs unmarked",
			[]func(http.ResponseWriter, *http.Request){status(503, "")},
			0, 0, true, "lm->none: HTTP 503:*", 0, 1},
	}
}

func TestLMInstrumenter(t *testing.T) {
	needPython(t)
	for _, tc := range lmCases() {
		t.Run(tc.name, func(t *testing.T) { testLMCase(t, tc) })
	}
}

// testLMCase prepares lmProgram through the LM instrumenter against a fake
// LM giving tc's replies and checks the method, points, code and requests.
func testLMCase(t *testing.T, tc lmCase) {
	fake := &fakeLM{replies: tc.replies}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	var fb Instrumenter = NewAST("")
	if tc.noFallback {
		fb = nil
	}
	in := NewLM(LMConfig{URL: srv.URL, Model: "frozen-7b", APIKey: "sk-test", Timeout: tc.timeout, MaxTokens: 2048, Retries: tc.retries}, fb)
	p, err := Prepare(context.Background(), in, lmProgram)
	if err != nil {
		t.Fatal(err)
	}
	if want, ok := strings.CutSuffix(tc.wantMethod, "*"); ok {
		if !strings.HasPrefix(p.Method, want) {
			t.Errorf("method %q, want prefix %q", p.Method, want)
		}
	} else if p.Method != tc.wantMethod {
		t.Errorf("method %q, want %q", p.Method, tc.wantMethod)
	}
	if p.Points != tc.wantPoints {
		t.Errorf("points %d, want %d", p.Points, tc.wantPoints)
	}
	if tc.noFallback && p.Code != lmProgram {
		t.Errorf("code changed without a fallback")
	}
	if n := fake.count(); n != tc.wantReqs {
		t.Errorf("%d requests, want %d", n, tc.wantReqs)
	}
	for _, r := range fake.requests {
		checkRequest(t, r)
	}
}

// checkRequest asserts on what mlerl sent: the real wire format.
func checkRequest(t *testing.T, r recorded) {
	t.Helper()
	if r.method != http.MethodPost || r.path != "/v1/chat/completions" {
		t.Errorf("request %s %s, want POST /v1/chat/completions", r.method, r.path)
	}
	if r.auth != "Bearer sk-test" {
		t.Errorf("Authorization %q", r.auth)
	}
	if r.contentType != "application/json" {
		t.Errorf("Content-Type %q", r.contentType)
	}
	if r.body.Model != "frozen-7b" || r.body.MaxTokens != 2048 || r.body.Stream {
		t.Errorf("request body %+v", r.body)
	}
	if len(r.body.Messages) != 2 || r.body.Messages[0].Role != "system" || r.body.Messages[1].Role != "user" {
		t.Fatalf("messages %+v", r.body.Messages)
	}
	user := r.body.Messages[1].Content
	if !strings.Contains(user, "```python\n"+strings.TrimRight(lmProgram, "\n")+"\n```") {
		t.Errorf("user message does not carry the program in a python block:\n%s", user)
	}
	for _, s := range stages {
		if !strings.Contains(user, `"`+s+`"`) {
			t.Errorf("prompt does not name stage %q", s)
		}
	}
	if !strings.Contains(user, `__mlerl_stage__("STAGE")`) {
		t.Errorf("prompt does not show the canonical marker")
	}
}

func TestLMEndpointURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://h:8000", "http://h:8000/v1/chat/completions"},
		{"http://h:8000/", "http://h:8000/v1/chat/completions"},
		{"http://h:8000/v1", "http://h:8000/v1/chat/completions"},
		{"http://h:8000/v1/chat/completions", "http://h:8000/v1/chat/completions"},
	} {
		if got := NewLM(LMConfig{URL: tc.in}, nil).(*lmInstrumenter).client.Endpoint(); got != tc.want {
			t.Errorf("%q -> %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLMContextCancelled(t *testing.T) {
	needPython(t)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // lets the server notice the client hanging up
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	in := NewLM(LMConfig{URL: srv.URL, Model: "m", Retries: 5}, NewAST(""))
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	if _, err := Prepare(ctx, in, lmProgram); err == nil {
		t.Fatal("no error after the context was cancelled")
	}
}

func TestExtractCode(t *testing.T) {
	for _, tc := range []struct{ reply, original, want, err string }{
		{"```python\na\n```", "a\n", "a\n", ""},
		{"text\n```py\na\nb\n```\nmore", "a\nb", "a\nb", ""},
		{"```\na\n```", "a\n\n", "a\n\n", ""},
		{"```python\ns = '```'\n```", "s = '```'\n", "s = '```'\n", ""},
		{"```python\na\n", "a\n", "", "not closed"},
		{"no fence", "a\n", "", "no code block"},
	} {
		got, err := extractCode(tc.reply, tc.original)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.reply, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.reply, got, err, tc.want)
		}
	}
}
