package llm

import (
	"strings"
)

// Reply is a model's answer split into the plan (the prose before the code
// block) and the program (the first Python code block).
type Reply struct {
	Plan string
	Code string
	// Problem says why Code is empty: "no code block", "code block not closed".
	Problem string
}

// parseReply takes the first fenced block tagged python (or py, python3), or
// failing that the first untagged block; blocks in other languages (a bash
// "pip install" line) are skipped. A block with no closing fence is not a
// program: the reply was cut at max_tokens and running half a program would
// only teach the policy about truncation.
func parseReply(s string) Reply {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.SplitAfter(s, "\n")
	type block struct {
		lang       string
		start, end int // line indices: fence line, closing fence line (-1: not closed)
	}
	var blocks []block
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "```") {
			continue
		}
		b := block{lang: strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "`"))), start: i, end: -1}
		for j := i + 1; j < len(lines); j++ {
			if strings.TrimSpace(lines[j]) == "```" {
				b.end = j
				break
			}
		}
		blocks = append(blocks, b)
		if b.end < 0 {
			break
		}
		i = b.end
	}
	pick := -1
	for i, b := range blocks {
		if b.lang == "python" || b.lang == "py" || b.lang == "python3" {
			pick = i
			break
		}
	}
	if pick < 0 {
		for i, b := range blocks {
			if b.lang == "" {
				pick = i
				break
			}
		}
	}
	if pick < 0 {
		return Reply{Plan: strings.TrimSpace(s), Problem: "no code block"}
	}
	b := blocks[pick]
	plan := strings.TrimSpace(strings.Join(lines[:b.start], ""))
	if b.end < 0 {
		return Reply{Plan: plan, Problem: "code block not closed (reply cut at max tokens?)"}
	}
	code := strings.Join(lines[b.start+1:b.end], "")
	if strings.TrimSpace(code) == "" {
		return Reply{Plan: plan, Problem: "empty code block"}
	}
	return Reply{Plan: plan, Code: code}
}

// failingProgram is what runs when a reply holds no program: it exits at once
// with the reason, so the episode earns the failure reward honestly and the
// reason shows in its output.
func failingProgram(problem string) string {
	return "raise SystemExit(" + pyQuote("mlerl: the model's reply had no runnable program: "+problem) + ")\n"
}

func pyQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
