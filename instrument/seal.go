package instrument

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// markerLine is the canonical marker statement an instrumenter inserts: alone on
// its line, any indentation, either quote style (language models vary).
var markerLine = regexp.MustCompile(`^([ \t\f]*)__mlerl_stage__\((?:"([a-z ]+)"|'([a-z ]+)')\)(\r?)$`)

// maxMarkers bounds what a (language-model) instrumenter may insert; a program
// needs a handful, one per stage and place.
const maxMarkers = 500

// maxCode bounds the program text sent to the helper; policies write a few KiB.
const maxCode = 1 << 20

var stageIndex = func() map[string]int {
	m := make(map[string]int, len(stages))
	for i, s := range stages {
		m[s] = i
	}
	return m
}()

// insertion is one marker line of the marked program.
type insertion struct {
	line  int // 0-based index into the marked program's lines
	stage int
}

// align checks, line for line, that marked is original with canonical marker
// lines inserted and nothing else, and returns the insertions. Matching is
// greedy (a marked line equal to the next original line is that line): if any
// alignment exists the greedy one does, since marker lines are interchangeable.
func align(original, marked string) ([]insertion, error) {
	orig := strings.Split(original, "\n")
	mk := strings.Split(marked, "\n")
	var ins []insertion
	j := 0
	for i, line := range mk {
		if j < len(orig) && line == orig[j] {
			j++
			continue
		}
		m := markerLine.FindStringSubmatch(line)
		if m == nil {
			if j < len(orig) {
				return nil, fmt.Errorf("line %d of the instrumented code is neither original line %d nor a marker: %.80q", i+1, j+1, line)
			}
			return nil, fmt.Errorf("line %d of the instrumented code is extra and not a marker: %.80q", i+1, line)
		}
		name := m[2] + m[3]
		st, ok := stageIndex[name]
		if !ok {
			return nil, fmt.Errorf("line %d: unknown stage %q", i+1, name)
		}
		ins = append(ins, insertion{line: i, stage: st})
		if len(ins) > maxMarkers {
			return nil, fmt.Errorf("more than %d markers", maxMarkers)
		}
	}
	if j < len(orig) {
		return nil, fmt.Errorf("original line %d is missing from the instrumented code: %.80q", j+1, orig[j])
	}
	return ins, nil
}

// verify is the whole check an instrumenter's output must pass: the line
// alignment here, then the helper's proof on the syntax tree that every marker
// is a statement of its own and nothing else changed. It returns the insertions
// and the line after which the prelude may go.
func verify(ctx context.Context, python, original, marked string) ([]insertion, int, error) {
	ins, err := align(original, marked)
	if err != nil {
		return nil, 0, err
	}
	if len(ins) == 0 {
		return nil, 0, nil
	}
	if len(marked) > 2*maxCode {
		return nil, 0, fmt.Errorf("instrumented code is %d bytes, over the %d limit", len(marked), 2*maxCode)
	}
	lines := make([]int, len(ins))
	for k, in := range ins {
		lines[k] = in.line + 1
	}
	var rep struct {
		OK           bool   `json:"ok"`
		Error        string `json:"error"`
		PreludeAfter int    `json:"prelude_after"`
	}
	req := map[string]any{"mode": "check", "original": original, "marked": marked, "marker_lines": lines}
	if err := runHelper(ctx, python, req, &rep); err != nil {
		return nil, 0, fmt.Errorf("verifying markers: %w", err)
	}
	if !rep.OK {
		return nil, 0, fmt.Errorf("markers rejected: %s", rep.Error)
	}
	return ins, rep.PreludeAfter, nil
}

// prelude defines the marker function on one line. It writes "<nonce> <id>\n"
// with one unbuffered os.write, so a crash right after a stage still leaves its
// marker, and concurrent writers (forked workers) cannot interleave within a
// line (pipe writes under PIPE_BUF are atomic). os.write is bound at definition
// so the program cannot intercept it by patching os; OSError (fd 3 closed, no
// reader) is ignored so markers never break a program. __mlerl_stage__ is a
// no-op so a program calling it itself neither crashes nor earns anything.
func prelude(nonce string) string {
	return `import os as _mlerl_os; exec("def _mlerl_mark(i, _w=_mlerl_os.write, _p=b'` + nonce +
		` '):\n    try: _w(3, _p + b'%d\\n' % i)\n    except OSError: pass\ndef __mlerl_stage__(*a, **k): pass\n")`
}

// seal verifies marked against original and rewrites its markers into
// nonce-carrying calls.
func seal(ctx context.Context, python, original, marked string) (*Program, error) {
	ins, preludeAfter, err := verify(ctx, python, original, marked)
	if err != nil {
		return nil, err
	}
	if len(ins) == 0 {
		return &Program{Code: original}, nil
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, fmt.Errorf("making nonce: %w", err)
	}
	nonce := hex.EncodeToString(raw[:])

	mk := strings.Split(marked, "\n")
	if preludeAfter == 0 {
		// Keep a shebang and a coding declaration (which must be on line 1 or 2) first.
		for preludeAfter < len(mk) && strings.HasPrefix(mk[preludeAfter], "#") {
			preludeAfter++
		}
	}
	if preludeAfter > len(mk) {
		return nil, fmt.Errorf("prelude position %d past the end (%d lines)", preludeAfter, len(mk))
	}
	isMarker := make(map[int]int, len(ins)) // marked line -> insertion id
	stageOf := make([]int, len(ins))
	for id, in := range ins {
		if in.line < preludeAfter {
			return nil, fmt.Errorf("marker on line %d comes before the module's docstring or __future__ imports end", in.line+1)
		}
		isMarker[in.line] = id
		stageOf[id] = in.stage
	}
	out := make([]string, 0, len(mk)+1)
	lineMap := make([]int, 1, len(mk)+2) // index 0 unused: lines are 1-based
	orig := 0
	for i, line := range mk {
		if i == preludeAfter {
			out = append(out, prelude(nonce))
			lineMap = append(lineMap, 0)
		}
		if id, ok := isMarker[i]; ok {
			m := markerLine.FindStringSubmatch(line)
			out = append(out, m[1]+"_mlerl_mark("+strconv.Itoa(id)+")"+m[4])
			lineMap = append(lineMap, 0)
			continue
		}
		orig++
		out = append(out, line)
		lineMap = append(lineMap, orig)
	}
	if preludeAfter == len(mk) {
		out = append(out, prelude(nonce))
		lineMap = append(lineMap, 0)
	}
	return &Program{
		Code:    strings.Join(out, "\n"),
		Points:  len(ins),
		nonce:   nonce,
		stageOf: stageOf,
		lineMap: lineMap,
	}, nil
}
