package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The client speaks the chat-completions wire format with net/http rather
// than openai-go, for the same reasons as instrument/lm.go: the policy needs
// fields openai-go does not model (vLLM's "token_id:N" tokens), must notice a
// server that refuses n>1 from its error body or a short choices list, wants
// exact control of which statuses are retried and of Retry-After, shares one
// concurrency limit across retries, and bounds the bytes it reads from a
// server it does not trust. That is ~200 lines; the SDK would hide all of it.

// Message is one chat message, as sent and as recorded in rollouts.jsonl.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Temperature float64   `json:"temperature"`
	TopP        float64   `json:"top_p"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
	N           int       `json:"n"`
	Logprobs    bool      `json:"logprobs"`
	Stream      bool      `json:"stream"`
}

type tokenLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
}

type chatChoice struct {
	Index   int `json:"index"`
	Message struct {
		Content *string `json:"content"`
	} `json:"message"`
	Logprobs *struct {
		Content []tokenLogprob `json:"content"`
	} `json:"logprobs"`
	FinishReason string `json:"finish_reason"`
}

type chatResponse struct {
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
}

// completion is one sampled reply with its per-token behaviour log-probabilities.
type completion struct {
	Content      string
	Tokens       []string
	Logprobs     []float64
	HasLogprobs  bool // the server sent logprobs.content at all
	FinishReason string
	Model        string
}

// maxReply bounds the response body read from the model server: far above
// what max_tokens allows, far below what could hurt the learner.
const maxReply = 16 << 20

// client sends chat-completions requests with retries, per-attempt timeouts
// and a concurrency limit shared by every request of the policy.
type client struct {
	cfg      Config
	endpoint string
	http     *http.Client
	slots    chan struct{}
	// noN is set once the server has refused or ignored n>1 (llama.cpp);
	// from then on every sample is its own request.
	noN atomic.Bool
	// attempts counts HTTP requests actually sent, for tests and reports.
	attempts atomic.Int64
}

func newClient(cfg Config) *client {
	u := strings.TrimRight(cfg.URL, "/")
	switch {
	case strings.HasSuffix(u, "/chat/completions"):
	case strings.HasSuffix(u, "/v1"):
		u += "/chat/completions"
	default:
		u += "/v1/chat/completions"
	}
	return &client{cfg: cfg, endpoint: u, http: &http.Client{}, slots: make(chan struct{}, cfg.Concurrency)}
}

// errNRefused marks a 4xx answer to a request with n>1: the caller retries
// the samples one request each.
var errNRefused = errors.New("server refused n>1")

// retryable marks failures worth another attempt: network errors, timeouts,
// 429, 5xx, and bodies that are not the JSON they should be (a proxy that cut
// the connection short).
type retryable struct {
	err   error
	after time.Duration // from Retry-After, when the server sent one
}

func (e *retryable) Error() string { return e.err.Error() }
func (e *retryable) Unwrap() error { return e.err }

// complete asks for n samples of one conversation. It may return fewer than n
// completions when the server ignored n; the caller asks for the rest.
func (c *client) complete(ctx context.Context, msgs []Message, n int) ([]completion, error) {
	body, err := json.Marshal(chatRequest{
		Model: c.cfg.Model, Messages: msgs, Temperature: c.cfg.Temperature, TopP: 1,
		MaxTokens: c.cfg.MaxTokens, N: n, Logprobs: true,
	})
	if err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	var last error
	sent := 0
	for attempt := 0; attempt <= c.cfg.Retries; attempt++ {
		if attempt > 0 {
			if err := sleep(ctx, c.backoff(attempt, last)); err != nil {
				return nil, err
			}
		}
		var out []completion
		sent++
		out, last = c.post(ctx, body, n)
		if last == nil {
			return out, nil
		}
		var re *retryable
		if !errors.As(last, &re) || ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if sent > 1 {
		return nil, fmt.Errorf("after %d attempts: %w", sent, last)
	}
	return nil, last
}

// backoff is exponential from Config.Backoff, capped at Config.MaxBackoff;
// a Retry-After from the server wins (capped the same way, so a confused
// server cannot stall the run for hours).
func (c *client) backoff(attempt int, last error) time.Duration {
	var re *retryable
	if errors.As(last, &re) && re.after > 0 {
		return min(re.after, c.cfg.MaxBackoff)
	}
	return min(c.cfg.Backoff<<min(attempt-1, 16), c.cfg.MaxBackoff)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// post is one attempt. It holds a concurrency slot only while the request is
// on the wire, not while backing off.
func (c *client) post(ctx context.Context, body []byte, n int) ([]completion, error) {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.slots }()
	c.attempts.Add(1)

	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("building request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	timedOut := func() bool { return actx.Err() == context.DeadlineExceeded && ctx.Err() == nil }
	resp, err := c.http.Do(req)
	if err != nil {
		if timedOut() {
			return nil, &retryable{err: fmt.Errorf("no reply within %s", c.cfg.Timeout)}
		}
		return nil, &retryable{err: fmt.Errorf("request to %s: %w", c.endpoint, err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReply+1))
	if err != nil {
		if timedOut() {
			return nil, &retryable{err: fmt.Errorf("reply not complete within %s", c.cfg.Timeout)}
		}
		return nil, &retryable{err: fmt.Errorf("reading reply: %w", err)}
	}
	if resp.StatusCode != http.StatusOK {
		e := fmt.Errorf("HTTP %d from %s: %s", resp.StatusCode, c.endpoint, oneLine(string(data), 200))
		switch {
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
			return nil, &retryable{err: e, after: retryAfter(resp.Header.Get("Retry-After"))}
		case n > 1 && resp.StatusCode >= 400:
			// llama.cpp answers 400 "Only one completion choice is allowed";
			// others word it differently. Any 4xx to n>1 is worth one try
			// with n=1: if the request was bad for another reason, that try
			// fails the same way and reports it.
			return nil, fmt.Errorf("%w: %w", errNRefused, e)
		}
		return nil, e
	}
	if len(data) > maxReply {
		return nil, fmt.Errorf("reply over %d bytes", maxReply)
	}
	var cr chatResponse
	if err := json.Unmarshal(data, &cr); err != nil {
		return nil, &retryable{err: fmt.Errorf("malformed reply (%d bytes): %w", len(data), err)}
	}
	if len(cr.Choices) == 0 {
		return nil, &retryable{err: errors.New("reply has no choices")}
	}
	out := make([]completion, 0, len(cr.Choices))
	for _, ch := range cr.Choices {
		cp := completion{FinishReason: ch.FinishReason, Model: cr.Model}
		if ch.Message.Content != nil {
			cp.Content = *ch.Message.Content
		}
		if ch.Logprobs != nil && ch.Logprobs.Content != nil {
			cp.HasLogprobs = true
			cp.Tokens = make([]string, len(ch.Logprobs.Content))
			cp.Logprobs = make([]float64, len(ch.Logprobs.Content))
			for i, t := range ch.Logprobs.Content {
				cp.Tokens[i], cp.Logprobs[i] = t.Token, t.Logprob
			}
		}
		out = append(out, cp)
	}
	if len(out) > n {
		out = out[:n]
	}
	return out, nil
}

// retryAfter reads a Retry-After header: delta-seconds or an HTTP date.
func retryAfter(h string) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(h); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}

// tokenIDs returns the token ids when the server sent tokens as "token_id:N"
// (vLLM with return_tokens_as_token_ids), else nil: a trainer then
// re-tokenises the response, which with the same tokenizer gives the same ids.
func tokenIDs(tokens []string) []int {
	if len(tokens) == 0 {
		return nil
	}
	ids := make([]int, len(tokens))
	for i, t := range tokens {
		s, ok := strings.CutPrefix(t, "token_id:")
		if !ok {
			return nil
		}
		id, err := strconv.Atoi(s)
		if err != nil {
			return nil
		}
		ids[i] = id
	}
	return ids
}
