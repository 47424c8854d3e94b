package instrument

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"
)

//go:embed astmark.py
var astmarkPy string

// helperTimeout bounds one run of the embedded helper. Parsing a policy's
// program takes milliseconds; the bound is for pathological input.
const helperTimeout = 10 * time.Second

// maxHelperOutput bounds what is read back from the helper.
const maxHelperOutput = 8 * maxCode

// astInstrumenter inserts markers with Python's ast module (astmark.py).
type astInstrumenter struct{ python string }

// NewAST returns the default instrumenter: the embedded astmark.py run with
// python (DefaultPython when empty) outside the sandbox, on the source text only.
func NewAST(python string) Instrumenter {
	if python == "" {
		python = DefaultPython
	}
	return &astInstrumenter{python: python}
}

func (a *astInstrumenter) pythonPath() string { return a.python }

// Insert returns code with canonical markers inserted. Code that does not parse,
// is not UTF-8 or is larger than 1 MiB comes back unchanged: it earns no partial
// credit, which is honest for code that cannot run.
func (a *astInstrumenter) Insert(ctx context.Context, code string) (string, error) {
	marked, _, err := a.insert(ctx, code)
	return marked, err
}

func (a *astInstrumenter) insert(ctx context.Context, code string) (string, string, error) {
	if len(code) > maxCode || !utf8.ValidString(code) {
		return code, "ast", nil
	}
	var rep struct {
		OK     bool   `json:"ok"`
		Marked string `json:"marked"`
		Points int    `json:"points"`
		Error  string `json:"error"`
	}
	if err := runHelper(ctx, a.python, map[string]string{"mode": "mark", "code": code}, &rep); err != nil {
		return "", "ast", err
	}
	if !rep.OK {
		return "", "ast", fmt.Errorf("ast helper: %s", rep.Error)
	}
	return rep.Marked, "ast", nil
}

// runHelper runs astmark.py once: req as JSON on stdin, the JSON reply decoded
// into rep. -I -S keep the user's environment and site packages out (only the
// standard library is needed, and start-up is faster).
func runHelper(ctx context.Context, python string, req, rep any) error {
	in, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encoding helper request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, helperTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-I", "-S", "-c", astmarkPy)
	cmd.Stdin = bytes.NewReader(in)
	stdout := &capWriter{max: maxHelperOutput}
	stderr := &capWriter{max: 8 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("ast helper (%s): %w", python, ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("ast helper (%s): %w: %s", python, err, lastLine(stderr.String()))
	}
	if stdout.over {
		return fmt.Errorf("ast helper (%s): reply over %d bytes", python, maxHelperOutput)
	}
	if err := json.Unmarshal(stdout.Bytes(), rep); err != nil {
		return fmt.Errorf("ast helper (%s): decoding reply: %w", python, err)
	}
	return nil
}

// capWriter keeps the first max bytes and remembers whether more came.
type capWriter struct {
	bytes.Buffer
	max  int
	over bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - w.Len(); len(p) > room {
		w.over = true
		if room > 0 {
			w.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return w.Buffer.Write(p)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
