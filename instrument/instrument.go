// Package instrument gives partial credit honestly: it inserts progress markers
// into a policy's program right after the statements that really do each stage
// (SPEC.md §2), seals them so the program cannot forge them, and reads back which
// stages a run reached.
//
// Two phases. An Instrumenter (the AST one by default, a frozen language model
// optionally) inserts canonical marker statements, one per line:
//
//	__mlerl_stage__("loaded data")
//
// Prepare then seals the result: it verifies that the marked program is the
// original plus marker lines and nothing else (line for line, and again on the
// Python syntax tree), and rewrites every marker into a call carrying a per-run
// random nonce made with crypto/rand after the policy wrote its code. The call
// writes "<nonce> <id>\n" to file descriptor 3, a pipe the sandbox returns as
// the run's markers; Program.Stages counts the distinct stages whose ids came
// back with the nonce.
//
// # What cannot be forged
//
// Text the program prints on stdout or stderr is never read. Lines it writes to
// fd 3 count only with the nonce, which did not exist when the policy wrote the
// program. Calling __mlerl_stage__ itself does nothing (the prelude defines it as
// a no-op), and a marker line the policy wrote into its own code is left as that
// no-op: only lines the instrumenter inserted are rewritten.
//
// Residual threat, accepted: the sealed program holds the nonce in its first
// line, so a program that reads its own source file (__file__) or introspects
// its code objects and globals could find it and write forged markers. The
// policy never sees instrumented code, the nonce, the marker function's name or
// the fd protocol, so it would have to stumble on generic self-reading code that
// also speaks an undocumented protocol; and all it could gain is 0.7 of reward
// (seven stages at 0.1) on a program that fails anyway, since a valid
// submission is paid its score and stages do not count. Runs are recorded with
// their code, so such a program is easy to find afterwards (__file__, fd 3).
//
// # Line numbers
//
// The seal adds one prelude line (after a module docstring and any
// `from __future__` imports, which Python requires first) and keeps one line per
// marker, so a traceback's line N in the sealed program is original line
// N - 1 - (markers above it). Program.OriginalLine and Program.MapOutput map
// them back before output is shown to a policy.
package instrument

import (
	"bytes"
	"context"
	"crypto/subtle"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// stages are the progress stages of SPEC.md §2, in the order a program reaches them.
var stages = []string{
	"imported packages",
	"loaded data",
	"defined model",
	"training loss",
	"trained model",
	"test loss",
	"predicted test labels",
}

// DefaultPython is the interpreter that runs the embedded helper when none is given.
const DefaultPython = "/usr/bin/python3"

// Instrumenter inserts canonical marker lines into a program and changes nothing else.
type Instrumenter interface {
	Insert(ctx context.Context, code string) (marked string, err error)
}

// reporter is implemented by this package's instrumenters: besides the marked
// code it says how it was made ("ast", "lm", "lm->ast: reason").
type reporter interface {
	insert(ctx context.Context, code string) (marked, method string, err error)
}

// checker is implemented by instrumenters that know which Python to run the
// verifier with.
type checker interface {
	pythonPath() string
}

// Program is a sealed program ready to run, with what is needed to read its markers.
type Program struct {
	Code   string // sealed code, ready to run
	Method string // "none" | "ast" | "lm" | "lm->ast: <reason>"
	Points int    // markers inserted

	nonce   string // hex; never shown to the policy
	stageOf []int  // insertion id -> index into stages
	lineMap []int  // sealed line (1-based, index) -> original line, 0 for added lines
}

// Prepare instruments code with in and seals it. A nil in runs the code unchanged,
// with no markers. Failures of the instrumenter's machinery are returned as
// errors; a program that does not parse is not one (it comes back unchanged).
func Prepare(ctx context.Context, in Instrumenter, code string) (*Program, error) {
	if in == nil {
		return &Program{Code: code, Method: "none"}, nil
	}
	var marked, method string
	var err error
	if r, ok := in.(reporter); ok {
		marked, method, err = r.insert(ctx, code)
	} else {
		method = "custom"
		marked, err = in.Insert(ctx, code)
	}
	if err != nil {
		return nil, fmt.Errorf("instrument (%s): %w", method, err)
	}
	python := DefaultPython
	if c, ok := in.(checker); ok {
		python = c.pythonPath()
	}
	p, err := seal(ctx, python, code, marked)
	if err != nil {
		return nil, fmt.Errorf("instrument (%s): %w", method, err)
	}
	p.Method = method
	return p, nil
}

// Stages returns the distinct stages reached, in the order of SPEC.md §2, from the bytes the
// program wrote to fd 3. Lines without the nonce, unknown ids, garbage and an
// unterminated last line (a write cut short by a crash) are ignored.
func (p *Program) Stages(markers []byte) []string {
	reached := make([]bool, len(stages))
	if p != nil && p.nonce != "" {
		nonce := []byte(p.nonce)
		for len(markers) > 0 {
			i := bytes.IndexByte(markers, '\n')
			if i < 0 {
				break // partial last line
			}
			line := markers[:i]
			markers = markers[i+1:]
			sp := bytes.IndexByte(line, ' ')
			if sp != len(nonce) || subtle.ConstantTimeCompare(line[:sp], nonce) != 1 {
				continue
			}
			id, err := strconv.Atoi(string(line[sp+1:]))
			if err != nil || id < 0 || id >= len(p.stageOf) || string(line[sp+1:]) != strconv.Itoa(id) {
				continue
			}
			reached[p.stageOf[id]] = true
		}
	}
	out := []string{}
	for i, ok := range reached {
		if ok {
			out = append(out, stages[i])
		}
	}
	return out
}

// OriginalLine maps a line number of the sealed code (as in a traceback) to the
// line of the code the policy wrote; 0 means a line the seal added.
func (p *Program) OriginalLine(sealed int) int {
	if p == nil || p.lineMap == nil {
		return sealed // not sealed: the lines are the policy's own
	}
	if sealed < 1 || sealed >= len(p.lineMap) {
		return 0
	}
	return p.lineMap[sealed]
}

var tracebackLine = regexp.MustCompile(`(File "([^"\n]*)", line )(\d+)`)

// MapOutput rewrites traceback locations in out that point into the program's
// own file (matched by its base name, e.g. "solution.py") to the policy's line
// numbers, so output fed back in an improve prompt refers to the code it wrote.
func (p *Program) MapOutput(out, file string) string {
	if p == nil || p.lineMap == nil || file == "" {
		return out
	}
	return tracebackLine.ReplaceAllStringFunc(out, func(m string) string {
		sub := tracebackLine.FindStringSubmatch(m)
		name := sub[2]
		if name != file && !strings.HasSuffix(name, "/"+file) {
			return m
		}
		n, err := strconv.Atoi(sub[3])
		if err != nil {
			return m
		}
		orig := p.OriginalLine(n)
		if orig == 0 {
			return sub[1] + "?"
		}
		return sub[1] + strconv.Itoa(orig)
	})
}
