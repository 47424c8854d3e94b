package instrument

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mlerl/mlerl/chat"
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
	Retries   int           // extra attempts after a network error, timeout, 429, 5xx or malformed reply
}

// lmInstrumenter asks a frozen model to insert markers and accepts its answer
// only when it passes the same verification as the seal; otherwise it uses the
// fallback and records why.
type lmInstrumenter struct {
	cfg      LMConfig
	client   *chat.Client
	fallback Instrumenter
}

var errNoCode = errors.New("no code block in the reply")

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
	client := chat.New(chat.Config{
		URL: cfg.URL, Model: cfg.Model, APIKey: cfg.APIKey, Timeout: cfg.Timeout, Retries: cfg.Retries,
		MaxReply: 8 << 20, // a marked-up program is never near this
	})
	return &lmInstrumenter{cfg: cfg, client: client, fallback: fallback}
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
	reason := chat.OneLine(err.Error(), 200)
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

// ask sends the program to the model and returns the code block of its reply.
func (l *lmInstrumenter) ask(ctx context.Context, code string) (string, error) {
	choices, err := l.client.Complete(ctx, chat.Request{
		Messages: []chat.Message{
			{Role: "system", Content: lmSystem},
			{Role: "user", Content: fmt.Sprintf(lmTask, strings.TrimRight(code, "\n"))},
		},
		Temperature: 0, // the instrumenter is a fixed function, not a sampler
		MaxTokens:   l.cfg.MaxTokens,
	})
	if err != nil {
		return "", err
	}
	if choices[0].NoContent {
		return "", errors.New("reply has no message content")
	}
	return extractCode(choices[0].Content, code)
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
