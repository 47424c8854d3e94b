// Package chat is a client of OpenAI-compatible chat-completions servers
// (vLLM, llama.cpp, SGLang, hosted APIs), shared by the LLM policy and the
// LM instrumenter.
//
// It speaks the wire format with net/http rather than openai-go because both
// users need what the SDK hides: vLLM's "token_id:N" tokens and per-token
// log-probabilities, noticing a server that refuses or ignores n>1, exact
// control of which failures are retried and of Retry-After, one concurrency
// limit shared across retries, and a bound on the bytes read back from a
// server that is not trusted to behave.
package chat

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

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Config configures a Client. Zero values take the defaults in brackets.
type Config struct {
	// URL is a base URL ("http://host:8000", ".../v1") or the full
	// .../chat/completions URL.
	URL    string
	Model  string
	APIKey string // sent as "Authorization: Bearer KEY" when not empty
	// Timeout bounds one attempt, reply body included [2m].
	Timeout time.Duration
	// Retries are extra attempts after a network error, a timeout, 429, 5xx
	// or a reply that is not the JSON it should be [0].
	Retries    int
	Backoff    time.Duration // first wait between attempts, doubling [250ms]
	MaxBackoff time.Duration // longest wait, Retry-After included [30s]
	// Concurrency is the most requests on the wire at once [unlimited].
	Concurrency int
	// MaxReply bounds the reply body in bytes [16 MiB].
	MaxReply int64
}

// Request is what varies between calls.
type Request struct {
	Messages    []Message
	Temperature float64
	TopP        float64 // 0 leaves it to the server
	MaxTokens   int     // 0 leaves it to the server
	N           int     // samples wanted; 0 means 1
	Logprobs    bool    // ask for per-token log-probabilities
}

// Choice is one sampled reply.
type Choice struct {
	Content string
	// NoContent is set when the server sent "content": null.
	NoContent bool
	Tokens    []string
	Logprobs  []float64
	// HasLogprobs is set when the server sent logprobs.content at all.
	HasLogprobs  bool
	FinishReason string
	Model        string
}

// ErrNRefused marks a 4xx answer to a request with n>1 (llama.cpp answers
// 400 "Only one completion choice is allowed"; others word it differently):
// the caller retries the samples one request each. If the request was bad
// for another reason, those fail the same way and report it.
var ErrNRefused = errors.New("server refused n>1")

// Client sends chat-completions requests. It is safe for concurrent use.
type Client struct {
	cfg      Config
	endpoint string
	http     *http.Client
	slots    chan struct{} // nil: no limit
	attempts atomic.Int64
}

// New returns a client for cfg.
func New(cfg Config) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	cfg.Retries = max(cfg.Retries, 0)
	if cfg.Backoff <= 0 {
		cfg.Backoff = 250 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 30 * time.Second
	}
	if cfg.MaxReply <= 0 {
		cfg.MaxReply = 16 << 20
	}
	c := &Client{cfg: cfg, endpoint: Endpoint(cfg.URL), http: &http.Client{}}
	if cfg.Concurrency > 0 {
		c.slots = make(chan struct{}, cfg.Concurrency)
	}
	return c
}

// Endpoint is the chat-completions URL for a base URL.
func Endpoint(base string) string {
	u := strings.TrimRight(base, "/")
	switch {
	case strings.HasSuffix(u, "/chat/completions"):
		return u
	case strings.HasSuffix(u, "/v1"):
		return u + "/chat/completions"
	}
	return u + "/v1/chat/completions"
}

// Endpoint is the URL the client posts to.
func (c *Client) Endpoint() string { return c.endpoint }

// Attempts counts the HTTP requests actually sent, retries included.
func (c *Client) Attempts() int64 { return c.attempts.Load() }

// retryable marks failures worth another attempt.
type retryable struct {
	err   error
	after time.Duration // from Retry-After, when the server sent one
}

func (e *retryable) Error() string { return e.err.Error() }
func (e *retryable) Unwrap() error { return e.err }

type wireRequest struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Temperature float64   `json:"temperature"`
	TopP        float64   `json:"top_p,omitempty"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
	N           int       `json:"n"`
	Logprobs    bool      `json:"logprobs,omitempty"`
	Stream      bool      `json:"stream"`
}

type wireResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		Logprobs *struct {
			Content []struct {
				Token   string  `json:"token"`
				Logprob float64 `json:"logprob"`
			} `json:"content"`
		} `json:"logprobs"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// Complete asks for req.N samples of one conversation, retrying what is
// worth retrying. It may return fewer than N choices when the server ignored
// n; never more.
func (c *Client) Complete(ctx context.Context, req Request) ([]Choice, error) {
	n := max(req.N, 1)
	wr := wireRequest{
		Model: c.cfg.Model, Messages: req.Messages, Temperature: req.Temperature, TopP: req.TopP,
		MaxTokens: req.MaxTokens, N: n, Logprobs: req.Logprobs,
	}
	body, err := json.Marshal(wr)
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
		var out []Choice
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

// backoff is exponential from Backoff, capped at MaxBackoff; a Retry-After
// from the server wins, capped the same way so that a confused server cannot
// stall a run for hours.
func (c *Client) backoff(attempt int, last error) time.Duration {
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
func (c *Client) post(ctx context.Context, body []byte, n int) ([]Choice, error) {
	if c.slots != nil {
		select {
		case c.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		defer func() { <-c.slots }()
	}
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
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxReply+1))
	if err != nil {
		if timedOut() {
			return nil, &retryable{err: fmt.Errorf("reply not complete within %s", c.cfg.Timeout)}
		}
		return nil, &retryable{err: fmt.Errorf("reading reply: %w", err)}
	}
	if resp.StatusCode != http.StatusOK {
		e := fmt.Errorf("HTTP %d: %s", resp.StatusCode, OneLine(string(data), 200))
		switch {
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
			return nil, &retryable{err: e, after: retryAfter(resp.Header.Get("Retry-After"))}
		case n > 1 && resp.StatusCode >= 400:
			return nil, fmt.Errorf("%w: %w", ErrNRefused, e)
		}
		return nil, e
	}
	if int64(len(data)) > c.cfg.MaxReply {
		return nil, fmt.Errorf("reply over %d bytes", c.cfg.MaxReply)
	}
	var wr wireResponse
	if err := json.Unmarshal(data, &wr); err != nil {
		return nil, &retryable{err: fmt.Errorf("malformed reply (%d bytes): %w", len(data), err)}
	}
	if len(wr.Choices) == 0 {
		return nil, &retryable{err: errors.New("reply has no choices")}
	}
	out := make([]Choice, 0, min(len(wr.Choices), n))
	for _, ch := range wr.Choices[:min(len(wr.Choices), n)] {
		cp := Choice{FinishReason: ch.FinishReason, Model: wr.Model, NoContent: ch.Message.Content == nil}
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

// OneLine squeezes s onto one line of at most n bytes, for error messages
// that quote a server or a model.
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}
