package grade

import (
	"bytes"
	"slices"
	"unicode"
	"unicode/utf8"
)

// The jaccard metric is defined by Python's str.lower().split(); these helpers
// reproduce both, including the two places where Go's unicode package differs:
// Python lower-cases U+0130 to "i̇" (two runes) and a capital sigma at the end of
// a word to ς, and Python's split also breaks on the separators U+001C..U+001F.

// pyLower appends the Python str.lower() of s to dst.
func pyLower(dst, s []byte) []byte {
	ascii := true
	for _, c := range s {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		for _, c := range s {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
		}
		return dst
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRune(s[i:])
		switch r {
		case 'İ':
			dst = append(dst, "i\u0307"...)
		case 'Σ':
			if finalSigma(s, i, size) {
				dst = utf8.AppendRune(dst, 'ς')
			} else {
				dst = utf8.AppendRune(dst, 'σ')
			}
		default:
			dst = utf8.AppendRune(dst, unicode.ToLower(r))
		}
		i += size
	}
	return dst
}

// finalSigma applies Unicode's Final_Sigma condition (as CPython does) to the
// capital sigma at s[i:i+size]: a cased letter before it and none after it,
// skipping case-ignorable runes both ways.
func finalSigma(s []byte, i, size int) bool {
	j := i
	before := false
	for j > 0 {
		r, sz := utf8.DecodeLastRune(s[:j])
		j -= sz
		if !caseIgnorable(r) {
			before = cased(r)
			break
		}
	}
	if !before {
		return false
	}
	for j = i + size; j < len(s); {
		r, sz := utf8.DecodeRune(s[j:])
		j += sz
		if !caseIgnorable(r) {
			return !cased(r)
		}
	}
	return true
}

func cased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

// caseIgnorable is Unicode's Case_Ignorable: Mn, Me, Cf, Lm, Sk and the
// Word_Break MidLetter, MidNumLet and Single_Quote characters.
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '·', 0x387, 0x55F, 0x5F4, 0x2018, 0x2019, 0x2024, 0x2027,
		0xFE13, 0xFE52, 0xFE55, 0xFF07, 0xFF0E, 0xFF1A:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

// pySpace is Python's str.isspace for the purpose of str.split().
func pySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1C && r <= 0x1F)
}

// appendWords appends the whitespace-separated words of s to dst.
func appendWords(dst [][]byte, s []byte) [][]byte {
	start := -1
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(s[i:])
		}
		if pySpace(r) {
			if start >= 0 {
				dst = append(dst, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
		i += size
	}
	if start >= 0 {
		dst = append(dst, s[start:])
	}
	return dst
}

// sortedUnique sorts words and drops repeats in place.
func sortedUnique(words [][]byte) [][]byte {
	slices.SortFunc(words, bytes.Compare)
	return slices.CompactFunc(words, bytes.Equal)
}

// wordSet is the sorted set of lower-cased words of a text.
func wordSet(text []byte) []string {
	words := sortedUnique(appendWords(nil, pyLower(nil, text)))
	set := make([]string, len(words))
	for i, w := range words {
		set[i] = string(w)
	}
	return set
}

// jaccardScratch holds buffers reused across rows.
type jaccardScratch struct {
	lower []byte
	words [][]byte
}

// jaccard scores a predicted text against an answer's word set (non-empty).
func (s *jaccardScratch) jaccard(pred []byte, truth []string) float64 {
	s.lower = pyLower(s.lower[:0], pred)
	s.words = sortedUnique(appendWords(s.words[:0], s.lower))
	common := 0
	i, j := 0, 0
	for i < len(s.words) && j < len(truth) {
		switch c := bytes.Compare(s.words[i], []byte(truth[j])); {
		case c == 0:
			common++
			i++
			j++
		case c < 0:
			i++
		default:
			j++
		}
	}
	return float64(common) / float64(len(s.words)+len(truth)-common)
}
