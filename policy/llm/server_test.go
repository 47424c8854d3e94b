package llm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// fakeServer is an OpenAI-compatible /v1/chat/completions server speaking
// the real wire format (vLLM's shape, logprobs.content[].logprob included).
// Each request is answered by script, given the request's index from 0; the
// default answers with content(i) in as many choices as n asks for.
type fakeServer struct {
	t  *testing.T
	ts *httptest.Server

	mu       sync.Mutex
	reqs     []seenRequest
	inFlight int
	maxIn    int

	// refuseN answers a request with n>1 as llama.cpp does (HTTP 400).
	refuseN bool
	// ignoreN answers with one choice whatever n asks for.
	ignoreN bool
	// script, when set, answers request i itself; return false to fall
	// through to the default answer.
	script func(w http.ResponseWriter, r *http.Request, i int, req chatRequest) bool
	// content is the reply text for request i and choice j.
	content func(i, j int) string
}

// chatRequest is the request body as the server reads it off the wire.
type chatRequest struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Temperature float64   `json:"temperature"`
	TopP        float64   `json:"top_p"`
	MaxTokens   int       `json:"max_tokens"`
	N           int       `json:"n"`
	Logprobs    bool      `json:"logprobs"`
	Stream      bool      `json:"stream"`
}

type seenRequest struct {
	Path, Auth, ContentType string
	Body                    chatRequest
	Raw                     map[string]any
}

func newFakeServer(t *testing.T) *fakeServer {
	f := &fakeServer{t: t, content: func(int, int) string { return goodReply }}
	f.ts = httptest.NewServer(f)
	t.Cleanup(f.ts.Close)
	return f
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var req chatRequest
	_ = json.Unmarshal(b, &req)
	var raw map[string]any
	_ = json.Unmarshal(b, &raw)
	f.mu.Lock()
	i := len(f.reqs)
	f.reqs = append(f.reqs, seenRequest{r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), req, raw})
	f.inFlight++
	f.maxIn = max(f.maxIn, f.inFlight)
	script, content := f.script, f.content
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	if script != nil && script(w, r, i, req) {
		return
	}
	n := max(req.N, 1)
	if n > 1 && f.refuseN {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"code":400,"message":"Only one completion choice is allowed","type":"invalid_request_error"}}`)
		return
	}
	if f.ignoreN {
		n = 1
	}
	texts := make([]string, n)
	for j := range texts {
		texts[j] = content(i, j)
	}
	writeCompletion(w, req.Model, texts)
}

func (f *fakeServer) requests() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.reqs...)
}

func (f *fakeServer) maxInFlight() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.maxIn
}

// fakeTokens splits a reply into 4-byte "tokens" with log-probabilities
// -0.01, -0.02, ..., -0.05 repeating: known numbers to find again in what
// the policy recorded.
func fakeTokens(s string) ([]string, []float64) {
	var toks []string
	var lps []float64
	for k := 0; k < len(s); k += 4 {
		toks = append(toks, s[k:min(k+4, len(s))])
		lps = append(lps, -0.01*float64(len(lps)%5+1))
	}
	return toks, lps
}

// writeCompletion writes a chat.completion object as vLLM does with
// logprobs=true.
func writeCompletion(w http.ResponseWriter, model string, texts []string) {
	choices := make([]map[string]any, len(texts))
	for j, text := range texts {
		toks, lps := fakeTokens(text)
		content := make([]map[string]any, len(toks))
		for k := range toks {
			content[k] = map[string]any{"token": toks[k], "logprob": lps[k], "bytes": []byte(toks[k]), "top_logprobs": []any{}}
		}
		choices[j] = map[string]any{
			"index": j, "finish_reason": "stop",
			"message":  map[string]any{"role": "assistant", "content": text, "tool_calls": []any{}},
			"logprobs": map[string]any{"content": content},
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": model,
		"choices": choices,
		"usage":   map[string]any{"prompt_tokens": 600, "completion_tokens": 100, "total_tokens": 700},
	})
}

func writeStatus(w http.ResponseWriter, code int, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"error":{"message":"status %d","type":"server_error"}}`, code)
}

// goodCode is a tiny valid pandas program for the pet-shapes fixture.
const goodCode = `import pandas as pd

test = pd.read_csv("./data/test.csv")
pd.DataFrame({"id": test["id"], "circle": 0.5, "square": 0.5}).to_csv("submission.csv", index=False)
`

const goodReply = "I will predict the class prior for every row. This is a constant baseline.\n\n```python\n" + goodCode + "```\n"

// slowUntil holds a reply until the client gives up (or d passes), so a
// timeout test never waits on wall-clock speed.
func slowUntil(w http.ResponseWriter, r *http.Request, d time.Duration) {
	select {
	case <-r.Context().Done():
	case <-time.After(d):
	}
}
