package instrument

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"strings"
	"unicode/utf8"
)

//go:embed astmark.py
var astmarkPy string

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
