package instrument

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
	"time"
)

// LMConfig configures the language-model instrumenter: an OpenAI-compatible
// chat-completions endpoint serving a frozen model, never the policy being
// trained (or the policy would learn to please its own instrumenter).
type LMConfig struct {
	URL       string        // base URL ("http://host:8000", ".../v1") or the full .../chat/completions URL
	Model     string        // model name sent in the request
	APIKey    string        // sent as "Authorization: Bearer KEY" when not empty
	Timeout   time.Duration // per attempt; default 120 s
	MaxTokens int           // completion limit; 0 leaves it to the server
	Retries   int           // extra attempts after a network error, timeout, 429 or 5xx
}

// lmInstrumenter asks a frozen model to insert markers and accepts its answer
// only when it passes the same verification as the seal; otherwise it uses the
// fallback and records why.
//
// It speaks the wire format with net/http rather than openai-go: it needs one
// request and two response fields, and wants exact control of per-attempt
// timeouts, which statuses are retried, Retry-After, and a bound on the bytes
// read back from a server it does not trust to be well behaved.
type lmInstrumenter struct {
	cfg      LMConfig
	endpoint string
	client   *http.Client
	fallback Instrumenter
}

var errNoCode = errors.New("no code block in the reply")

// maxReply bounds the response body read from the model server.
const maxReply = 8 << 20

// NewLM returns an instrumenter backed by a frozen language model, falling back
// to fallback (typically NewAST) when the model fails or its answer is rejected.
// A nil fallback means the program runs without markers in that case.
func NewLM(cfg LMConfig, fallback Instrumenter) Instrumenter {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 120 * time.Second
	}
	if cfg.Retries < 0 {
		cfg.Retries = 0
	}
	u := strings.TrimRight(cfg.URL, "/")
	switch {
	case strings.HasSuffix(u, "/chat/completions"):
	case strings.HasSuffix(u, "/v1"):
		u += "/chat/completions"
	default:
		u += "/v1/chat/completions"
	}
	return &lmInstrumenter{cfg: cfg, endpoint: u, client: &http.Client{}, fallback: fallback}
}

func (l *lmInstrumenter) pythonPath() string {
	if c, ok := l.fallback.(checker); ok {
		return c.pythonPath()
	}
	return DefaultPython
}

func (l *lmInstrumenter) Insert(ctx context.Context, code string) (string, error) {
	marked, _, err := l.insert(ctx, code)
	return marked, err
}

func (l *lmInstrumenter) insert(ctx context.Context, code string) (string, string, error) {
	marked, err := l.ask(ctx, code)
	if err == nil {
		var ins []insertion
		ins, _, err = verify(ctx, l.pythonPath(), code, marked)
		if err == nil && len(ins) == 0 {
			err = errors.New("no markers inserted")
		}
		if err != nil {
			err = fmt.Errorf("rejected: %w", err)
		}
	}
	if err == nil {
		return marked, "lm", nil
	}
	if ctx.Err() != nil {
		return "", "lm", ctx.Err()
	}
	reason := oneLine(err.Error(), 200)
	if l.fallback == nil {
		return code, "lm->none: " + reason, nil
	}
	fb, fbMethod := "", "custom"
	if r, ok := l.fallback.(reporter); ok {
		fb, fbMethod, err = r.insert(ctx, code)
	} else {
		fb, err = l.fallback.Insert(ctx, code)
	}
	method := "lm->" + fbMethod + ": " + reason
	if err != nil {
		return "", method, err
	}
	return fb, method, nil
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}

const lmSystem = `You add progress markers to Python programs without changing them. You never fix, reformat or comment code.`

const lmTask = `Insert progress markers into the Python program below. A marker is this exact statement, alone on its own line:

    __mlerl_stage__("STAGE")

where STAGE is one of:
- "imported packages": after the program's imports
- "loaded data": after a statement that reads the data (pandas.read_csv, numpy.load, open(...).read(), loading images, ...)
- "defined model": after the statement that creates the model (an estimator, booster or network)
- "training loss": after a statement that computes or prints a loss or score during training (cross-validation scores, training logs)
- "trained model": after the statement that fits or trains the model
- "test loss": after a statement that computes a validation or test metric
- "predicted test labels": after the statement that computes predictions for the test data

Rules:
- Put each marker on a new line right after the statement that really does the stage, indented exactly like that statement, so it runs only once the stage has happened.
- Never put a marker after return, raise, break or continue, inside brackets, strings or multi-line statements, between a decorator and its def, or between a block and its else/elif/except/finally.
- Do not change, reorder, reformat, add or remove any other line or character. Only add marker lines.
- Reply with the complete program in one ` + "```python" + ` code block and nothing else.

The program:

` + "```python\n%s\n```"

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Temperature float64       `json:"temperature"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
	Stream      bool          `json:"stream"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// ask sends the program to the model and returns the code block of its reply.
func (l *lmInstrumenter) ask(ctx context.Context, code string) (string, error) {
	body, err := json.Marshal(chatRequest{
		Model: l.cfg.Model,
		Messages: []chatMessage{
			{Role: "system", Content: lmSystem},
			{Role: "user", Content: fmt.Sprintf(lmTask, strings.TrimRight(code, "\n"))},
		},
		Temperature: 0, // the instrumenter is a fixed function, not a sampler
		MaxTokens:   l.cfg.MaxTokens,
	})
	if err != nil {
		return "", fmt.Errorf("encoding request: %w", err)
	}
	var lastErr error
	attempts := 0
	for attempt := 0; attempt <= l.cfg.Retries; attempt++ {
		if attempt > 0 {
			wait := time.Duration(250<<min(attempt-1, 6)) * time.Millisecond
			var re *retryError
			if errors.As(lastErr, &re) && re.after > 0 {
				wait = re.after
			}
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(wait):
			}
		}
		var reply string
		attempts++
		reply, lastErr = l.post(ctx, body)
		if lastErr == nil {
			return extractCode(reply, code)
		}
		var re *retryError
		if !errors.As(lastErr, &re) || ctx.Err() != nil {
			break
		}
	}
	if attempts > 1 {
		return "", fmt.Errorf("after %d attempts: %w", attempts, lastErr)
	}
	return "", lastErr
}

// retryError marks failures worth another attempt: network errors, timeouts, 429, 5xx.
type retryError struct {
	err   error
	after time.Duration // from Retry-After, if the server sent one
}

func (e *retryError) Error() string { return e.err.Error() }
func (e *retryError) Unwrap() error { return e.err }

func (l *lmInstrumenter) post(ctx context.Context, body []byte) (string, error) {
	actx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, l.endpoint, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("building request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if l.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+l.cfg.APIKey)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		if actx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			return "", &retryError{err: fmt.Errorf("no reply within %s", l.cfg.Timeout)}
		}
		return "", &retryError{err: fmt.Errorf("request: %w", err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReply+1))
	if err != nil {
		if actx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			return "", &retryError{err: fmt.Errorf("no reply within %s", l.cfg.Timeout)}
		}
		return "", &retryError{err: fmt.Errorf("reading reply: %w", err)}
	}
	if resp.StatusCode != http.StatusOK {
		e := fmt.Errorf("HTTP %d: %s", resp.StatusCode, oneLine(string(data), 120))
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			re := &retryError{err: e}
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
				re.after = min(time.Duration(s)*time.Second, 30*time.Second)
			}
			return "", re
		}
		return "", e
	}
	if len(data) > maxReply {
		return "", fmt.Errorf("reply over %d bytes", maxReply)
	}
	var cr chatResponse
	if err := json.Unmarshal(data, &cr); err != nil {
		return "", fmt.Errorf("malformed reply: %w", err)
	}
	if len(cr.Choices) == 0 || cr.Choices[0].Message.Content == nil {
		return "", errors.New("reply has no message content")
	}
	return *cr.Choices[0].Message.Content, nil
}

// extractCode takes the program out of the reply's fenced code block (from the
// first opening fence to the last closing one, since the program itself may
// contain fences in strings) and gives it the original's trailing newline:
// models drop or add one, and that is not an edit of the program.
func extractCode(reply, original string) (string, error) {
	start := -1
	for _, fence := range []string{"```python\n", "```py\n", "```python3\n", "```\n"} {
		if i := strings.Index(reply, fence); i >= 0 && (start < 0 || i < start) {
			start = i + len(fence)
		}
	}
	if start < 0 {
		return "", errNoCode
	}
	rest := reply[start:]
	end := strings.LastIndex(rest, "\n```")
	if end < 0 {
		if strings.HasPrefix(rest, "```") {
			end = 0
		} else {
			return "", errors.New("code block is not closed (reply cut short?)")
		}
	}
	code := strings.ReplaceAll(rest[:end], "\r\n", "\n")
	if strings.Contains(original, "\r\n") {
		code = strings.ReplaceAll(code, "\n", "\r\n")
	}
	code = strings.TrimRight(code, "\r\n")
	trimmed := strings.TrimRight(original, "\r\n")
	return code + original[len(trimmed):], nil
}
