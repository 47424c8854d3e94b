package report

import (
	"html"
	"strings"
)

var pyKeywords = map[string]bool{}
var pyBuiltins = map[string]bool{}

func init() {
	for _, k := range strings.Fields("False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield") {
		pyKeywords[k] = true
	}
	for _, k := range strings.Fields("print len range int float str list dict set tuple min max sum abs round open enumerate zip sorted isinstance super self") {
		pyBuiltins[k] = true
	}
}

// Highlight marks up Python source for pre.code: keywords, builtins,
// strings, comments and numbers. It is a scanner, not a parser: good enough
// for the programs the policies write, and it never drops a character.
func Highlight(src string) string {
	var b strings.Builder
	span := func(cls, text string) {
		b.WriteString(`<span class="` + cls + `">` + html.EscapeString(text) + "</span>")
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '#':
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				j = len(src) - i
			}
			span("c", src[i:i+j])
			i += j
		case c == '"' || c == '\'':
			j := stringEnd(src, i)
			span("s", src[i:j])
			i = j
		case isDigit(c):
			j := i
			for j < len(src) && (isWord(src[j]) || src[j] == '.') {
				j++
			}
			span("n", src[i:j])
			i = j
		case isWord(c):
			j := i
			for j < len(src) && isWord(src[j]) {
				j++
			}
			w := src[i:j]
			switch {
			case pyKeywords[w]:
				span("k", w)
			case pyBuiltins[w]:
				span("b", w)
			default:
				b.WriteString(html.EscapeString(w))
			}
			i = j
		default:
			b.WriteString(html.EscapeString(src[i : i+1]))
			i++
		}
	}
	return b.String()
}

// stringEnd is the index just past the string literal starting at i
// (single- or triple-quoted; an unterminated one runs to the end of line,
// or of the source for a triple quote).
func stringEnd(src string, i int) int {
	q := src[i : i+1]
	if strings.HasPrefix(src[i:], q+q+q) {
		if j := strings.Index(src[i+3:], q+q+q); j >= 0 {
			return i + 3 + j + 3
		}
		return len(src)
	}
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case src[i]:
			return j + 1
		case '\n':
			return j
		}
	}
	return len(src)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isWord(c byte) bool  { return c == '_' || isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'z' }
