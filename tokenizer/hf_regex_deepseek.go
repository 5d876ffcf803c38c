package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// The three split patterns of DeepSeek-V3 (and R1), applied in turn.
const (
	deepseekDigits = `\p{N}{1,3}`
	deepseekCJK    = `[一-龥぀-ゟ゠-ヿ]+`
	// deepseekWords holds real CR and LF characters, as the file does.
	deepseekWords = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"
)

// runMatcher matches runs of characters for which in is true, at most max
// characters long (0: unbounded), as `[class]+` or `[class]{1,max}` do.
type runMatcher struct {
	in  func(rune) bool
	max int
}

func (m runMatcher) matches(s string, fn func(start, end int)) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !m.in(r) {
			i += n
			continue
		}
		j, k := i+n, 1
		for j < len(s) && (m.max == 0 || k < m.max) {
			r, n := utf8.DecodeRuneInString(s[j:])
			if !m.in(r) {
				break
			}
			j += n
			k++
		}
		fn(i, j)
		i = j
	}
}

func isDeepseekCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FA5 || r >= 0x3040 && r <= 0x309F || r >= 0x30A0 && r <= 0x30FF
}

// deepseekSplit matches deepseekWords by hand. Not every character starts a
// match (digits alone do not), so the search moves on one character when
// none does.
type deepseekSplit struct{}

// Flags for deepseekWords.
const (
	dLetter = 1 << iota // \p{L}
	dMark               // \p{M}
	dPunct              // \p{P} or \p{S}
	dSpace              // \s
)

func deepseekFlags(s string, i int) (uint8, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			return dLetter, 1
		case c >= '0' && c <= '9':
			return 0, 1
		case asciiClass[c] == clsSpace:
			return dSpace, 1
		case c > ' ' && c < 0x7F:
			return dPunct, 1
		}
		return 0, 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	switch {
	case unicode.IsLetter(r):
		return dLetter, n
	case unicode.IsMark(r):
		return dMark, n
	case unicode.IsPunct(r) || unicode.IsSymbol(r):
		return dPunct, n
	case unicode.IsSpace(r):
		return dSpace, n
	}
	return 0, n
}

func (deepseekSplit) matches(s string, fn func(start, end int)) {
	for i := 0; i < len(s); {
		if n := deepseekMatchAt(s, i); n > 0 {
			fn(i, i+n)
			i += n
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		i += n
	}
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// deepseekMatchAt returns the length of the match at i, 0 if none.
func deepseekMatchAt(s string, i int) int {
	c := s[i]
	// [ASCII punctuation][A-Za-z]+
	if c > ' ' && c < 0x7F && !isASCIILetter(c) && (c < '0' || c > '9') && i+1 < len(s) && isASCIILetter(s[i+1]) {
		j := i + 1
		for j < len(s) && isASCIILetter(s[j]) {
			j++
		}
		return j - i
	}
	f, n := deepseekFlags(s, i)
	// [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
	start := -1
	if f&(dLetter|dMark) != 0 {
		start = i
	} else if f&(dLetter|dPunct) == 0 && c != '\r' && c != '\n' && i+n < len(s) {
		if g, _ := deepseekFlags(s, i+n); g&(dLetter|dMark) != 0 {
			start = i + n
		}
	}
	if start >= 0 {
		j := start
		for j < len(s) {
			g, m := deepseekFlags(s, j)
			if g&(dLetter|dMark) == 0 {
				break
			}
			j += m
		}
		return j - i
	}
	// ' ?[\p{P}\p{S}]+[\r\n]*'
	start = -1
	if f&dPunct != 0 {
		start = i
	} else if c == ' ' && i+1 < len(s) {
		if g, _ := deepseekFlags(s, i+1); g&dPunct != 0 {
			start = i + 1
		}
	}
	if start >= 0 {
		j := start
		for j < len(s) {
			g, m := deepseekFlags(s, j)
			if g&dPunct == 0 {
				break
			}
			j += m
		}
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j - i
	}
	if f&dSpace != 0 {
		return spaceRun(s, i, true)
	}
	return 0
}
