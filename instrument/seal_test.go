package instrument

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// sealCase is an original program, the instrumenter's marked version, and
// seal's verdict: an error containing wantErr, or acceptance with points
// markers.
type sealCase struct {
	name, original, marked string
	wantErr                string // "" means accepted
	points                 int
}

// sealAccepted are marked versions seal accepts.
var sealAccepted = []sealCase{
	{"after a statement",
		"import os\nx = 1\n", "import os\n__mlerl_stage__(\"imported packages\")\nx = 1\n", "", 1},
	{"in a function and after it",
		"def f():\n    a = 1\n    return a\nf()\n",
		"def f():\n    a = 1\n    __mlerl_stage__(\"loaded data\")\n    return a\nf()\n__mlerl_stage__(\"trained model\")\n", "", 2},
	{"single quotes",
		"x = 1\n", "x = 1\n__mlerl_stage__('loaded data')\n", "", 1},
	{"CRLF line endings",
		"x = 1\r\ny = 2\r\n", "x = 1\r\n__mlerl_stage__(\"loaded data\")\r\ny = 2\r\n", "", 1},
	{"at the end of an if body before else",
		"if x:\n    a = 1\nelse:\n    a = 2\n", "if x:\n    a = 1\n    __mlerl_stage__(\"loaded data\")\nelse:\n    a = 2\n", "", 1},
	{"policy's own marker line stays unsealed",
		"__mlerl_stage__(\"trained model\")\nx = 1\n", "__mlerl_stage__(\"trained model\")\nx = 1\n__mlerl_stage__(\"loaded data\")\n", "", 1},
	{"no markers", "x = 1\n", "x = 1\n", "", 0},
}

// sealRejected are marked versions seal rejects: edits, and markers where
// they are not statements of their own (and one accepted exception).
var sealRejected = []sealCase{
	{"line edited",
		"x = 1\ny = 2\n", "x = 1\n__mlerl_stage__(\"loaded data\")\ny = 3\n", "neither original line 2 nor a marker", 0},
	{"line deleted",
		"x = 1\ny = 2\n", "x = 1\n__mlerl_stage__(\"loaded data\")\n", "neither original line 2 nor a marker", 0},
	{"lines reordered",
		"x = 1\ny = 2\n", "y = 2\nx = 1\n__mlerl_stage__(\"loaded data\")\n", "neither", 0},
	{"extra statement",
		"x = 1\n", "x = 1\nprint('loaded data')\n", "nor a marker", 0},
	{"unknown stage",
		"x = 1\n", "x = 1\n__mlerl_stage__(\"won the competition\")\n", "unknown stage", 0},
	{"marker with a comment",
		"x = 1\n", "x = 1\n__mlerl_stage__(\"loaded data\")  # done\n", "nor a marker", 0},
	{"marker inside a string",
		"s = \"\"\"a\nb\"\"\"\n", "s = \"\"\"a\n__mlerl_stage__(\"loaded data\")\nb\"\"\"\n", "not a statement of its own", 0},
	{"marker inside brackets",
		"x = f(1,\n      2)\n", "x = f(1,\n__mlerl_stage__(\"loaded data\")\n      ,2)\n", "neither", 0},
	{"marker inside brackets, lines kept",
		"x = [1,\n     2]\n", "x = [1,\n__mlerl_stage__(\"loaded data\"),\n     2]\n", "nor a marker", 0},
	{"marker inside a call's arguments",
		"x = f(\n  1)\n", "x = f(\n__mlerl_stage__(\"loaded data\")\n  )\n", "neither", 0},
	{"marker after a backslash",
		"x = 1 + \\\n    2\n", "x = 1 + \\\n__mlerl_stage__(\"loaded data\")\n    2\n", "does not compile", 0},
	{"marker between body and else",
		"if x:\n    a = 1\nelse:\n    a = 2\n", "if x:\n    a = 1\n__mlerl_stage__(\"loaded data\")\nelse:\n    a = 2\n", "does not compile", 0},
	{"marker dedented inside a block",
		"for i in r:\n    a = 1\n    b = 2\n", "for i in r:\n    a = 1\n__mlerl_stage__(\"loaded data\")\n    b = 2\n", "does not compile", 0},
	{"marker between decorator and def",
		"@dec\ndef f():\n    pass\n", "@dec\n__mlerl_stage__(\"loaded data\")\ndef f():\n    pass\n", "does not compile", 0},
	{"marker before __future__ import",
		"from __future__ import annotations\nx = 1\n", "__mlerl_stage__(\"loaded data\")\nfrom __future__ import annotations\nx = 1\n", "does not compile", 0},
	{"marker moves a statement into a block",
		"if x:\n    a = 1\nb = 2\n", "if x:\n    a = 1\n    __mlerl_stage__(\"loaded data\")\nb = 2\n", "", 1},
	{"original does not parse",
		"x = (\n", "x = (\n__mlerl_stage__(\"loaded data\")\n", "original does not compile", 0},
}

func TestSealVerification(t *testing.T) {
	needPython(t)
	for _, tc := range slices.Concat(sealAccepted, sealRejected) {
		t.Run(tc.name, func(t *testing.T) { testSealCase(t, tc) })
	}
}

// testSealCase seals tc.marked against tc.original and checks the verdict,
// the points and that the nonce appears only in the prelude.
func testSealCase(t *testing.T, tc sealCase) {
	p, err := seal(context.Background(), DefaultPython, tc.original, tc.marked)
	if tc.wantErr != "" {
		if err == nil {
			t.Fatalf("accepted, want error containing %q; sealed:\n%s", tc.wantErr, p.Code)
		}
		if !strings.Contains(err.Error(), tc.wantErr) {
			t.Fatalf("error %q, want it to contain %q", err, tc.wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("rejected: %v", err)
	}
	if p.Points != tc.points {
		t.Errorf("points %d, want %d", p.Points, tc.points)
	}
	if tc.points > 0 && strings.Count(p.Code, p.nonce) != 1 {
		t.Errorf("nonce appears %d times in the sealed code, want once (the prelude)", strings.Count(p.Code, p.nonce))
	}
}

// TestSealLayout checks where the prelude goes, that each sealed marker line
// replaces exactly one canonical one, and the line mapping for tracebacks.
func TestSealLayout(t *testing.T) {
	needPython(t)
	original := "#!/usr/bin/env python3\n\"\"\"Doc\nstring.\"\"\"\nfrom __future__ import annotations\nimport os\nx = 1\n"
	marked := "#!/usr/bin/env python3\n\"\"\"Doc\nstring.\"\"\"\nfrom __future__ import annotations\nimport os\n__mlerl_stage__(\"imported packages\")\nx = 1\n__mlerl_stage__(\"loaded data\")\n"
	p, err := seal(context.Background(), DefaultPython, original, marked)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(p.Code, "\n")
	want := []string{
		"#!/usr/bin/env python3", "\"\"\"Doc", "string.\"\"\"", "from __future__ import annotations",
		prelude(p.nonce), "import os", "_mlerl_mark(0)", "x = 1", "_mlerl_mark(1)", "",
	}
	if !slices.Equal(lines, want) {
		t.Fatalf("sealed code\n%s\nwant\n%s", p.Code, strings.Join(want, "\n"))
	}
	if len(p.nonce) != 32 {
		t.Errorf("nonce %q, want 32 hex digits", p.nonce)
	}
	for sealedLine, wantOrig := range map[int]int{1: 1, 4: 4, 5: 0, 6: 5, 7: 0, 8: 6, 9: 0, 10: 7, 11: 0, 0: 0} {
		if got := p.OriginalLine(sealedLine); got != wantOrig {
			t.Errorf("OriginalLine(%d) = %d, want %d", sealedLine, got, wantOrig)
		}
	}
	out := "Traceback (most recent call last):\n  File \"/w/solution.py\", line 8, in <module>\n  File \"/usr/lib/x.py\", line 8, in f\n  File \"solution.py\", line 5\n"
	wantOut := "Traceback (most recent call last):\n  File \"/w/solution.py\", line 6, in <module>\n  File \"/usr/lib/x.py\", line 8, in f\n  File \"solution.py\", line ?\n"
	if got := p.MapOutput(out, "solution.py"); got != wantOut {
		t.Errorf("MapOutput\n%s\nwant\n%s", got, wantOut)
	}

	// Two seals of the same program use different nonces.
	q, err := seal(context.Background(), DefaultPython, original, marked)
	if err != nil {
		t.Fatal(err)
	}
	if q.nonce == p.nonce {
		t.Errorf("nonce repeated across seals: %s", p.nonce)
	}
}

func TestStagesParsing(t *testing.T) {
	n := "0123456789abcdef0123456789abcdef"
	p := &Program{nonce: n, stageOf: []int{1, 4, 1, 6}}
	cases := []struct {
		name    string
		markers string
		want    []string
	}{
		{"nothing", "", []string{}},
		{"in order", n + " 0\n" + n + " 1\n", []string{load, fit}},
		{"out of order and repeated", n + " 3\n" + n + " 2\n" + n + " 0\n" + n + " 1\n" + n + " 1\n", []string{load, fit, pred}},
		{"partial last line", n + " 0\n" + n + " 1", []string{load}},
		{"wrong nonce", "1123456789abcdef0123456789abcdef 1\n", []string{}},
		{"short nonce", n[:31] + " 1\n", []string{}},
		{"unknown id", n + " 4\n" + n + " -1\n" + n + " 99999999999999999999\n", []string{}},
		{"non-canonical ids", n + " +1\n" + n + " 01\n" + n + " 1 \n" + n + "  1\n", []string{}},
		{"stage names instead of ids", n + " trained model\n", []string{}},
		{"garbage around valid lines", "\x00\xff\n\n" + n + " 3\nloaded data\n" + n, []string{pred}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := p.Stages([]byte(tc.markers))
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	var nilProgram *Program
	if got := nilProgram.Stages([]byte(n + " 0\n")); len(got) != 0 {
		t.Errorf("nil program reached %q", got)
	}
}

func FuzzStages(f *testing.F) {
	n := "0123456789abcdef0123456789abcdef"
	f.Add([]byte(n + " 0\n" + n + " 2\n"))
	f.Add([]byte("\x00\n" + n + " 1"))
	p := &Program{nonce: n, stageOf: []int{0, 3, 6}}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := p.Stages(b)
		if len(got) > 3 {
			t.Fatalf("more stages than insertions: %q", got)
		}
		for i := 1; i < len(got); i++ {
			if stageIndex[got[i-1]] >= stageIndex[got[i]] {
				t.Fatalf("not distinct and ordered: %q", got)
			}
		}
	})
}

// FuzzAlign: whatever align accepts is the original plus marker lines.
func FuzzAlign(f *testing.F) {
	f.Add("x = 1\n", "x = 1\n__mlerl_stage__(\"loaded data\")\n")
	f.Add("a\nb", "a\n__mlerl_stage__('trained model')\nb")
	f.Fuzz(func(t *testing.T, original, marked string) {
		ins, err := align(original, marked)
		if err != nil {
			return
		}
		lines := strings.Split(marked, "\n")
		for k := len(ins) - 1; k >= 0; k-- {
			lines = slices.Delete(lines, ins[k].line, ins[k].line+1)
		}
		if strings.Join(lines, "\n") != original {
			t.Fatalf("accepted an edit: %q -> %q", original, marked)
		}
	})
}

func ExampleProgram_Stages() {
	p := &Program{nonce: "n0", stageOf: []int{0, 1}}
	fmt.Println(p.Stages([]byte("n0 1\nn0 0\nforged 1\n")))
	// Output: [imported packages loaded data]
}
