package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// replaceInvalid returns s with each maximal invalid UTF-8 subsequence
// replaced by one U+FFFD, as Python's bytes.decode("utf-8", "replace") does.
// strings.ToValidUTF8 differs: it folds a whole run of bad bytes into one.
func replaceInvalid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s) + 8)
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n == 1 {
			sb.WriteRune(utf8.RuneError)
			n = invalidPrefix(s)
		} else {
			sb.WriteString(s[:n])
		}
		s = s[n:]
	}
	return sb.String()
}

// invalidPrefix is the length of the maximal subpart at the start of s, which
// holds no valid character: a lead byte and the continuation bytes that could
// still have completed it (Unicode §3.9, Table 3-7), at least one byte.
func invalidPrefix(s string) int {
	need, lo, hi := 0, byte(0x80), byte(0xBF)
	switch c := s[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	i := 1
	for ; i <= need && i < len(s); i++ {
		c := s[i]
		if i == 1 && (c < lo || c > hi) || i > 1 && (c < 0x80 || c > 0xBF) {
			break
		}
	}
	return i
}
