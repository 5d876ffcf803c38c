package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// o200kPattern is the split pattern of GPT-OSS (OpenAI's o200k_base).
const o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// o200kSplit matches o200kPattern by hand, as a backtracking engine would.
// Every character starts a match, so the matches tile the string.
type o200kSplit struct{}

// Character flags for o200kPattern: upper is [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}],
// lower is [\p{Ll}\p{Lm}\p{Lo}\p{M}].
const (
	oUpper = 1 << iota
	oLower
	oLetter // \p{L}
	oNumber // \p{N}
	oSpace  // \s
)

func o200kFlags(s string, i int) (uint8, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		switch {
		case c >= 'a' && c <= 'z':
			return oLower | oLetter, 1
		case c >= 'A' && c <= 'Z':
			return oUpper | oLetter, 1
		case c >= '0' && c <= '9':
			return oNumber, 1
		}
		return spaceFlag(asciiClass[c]), 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	switch {
	case unicode.IsLetter(r):
		switch {
		case unicode.Is(unicode.Ll, r):
			return oLower | oLetter, n
		case unicode.Is(unicode.Lu, r), unicode.Is(unicode.Lt, r):
			return oUpper | oLetter, n
		}
		return oUpper | oLower | oLetter, n // Lm, Lo
	case unicode.IsMark(r):
		return oUpper | oLower, n
	case unicode.IsNumber(r):
		return oNumber, n
	case unicode.IsSpace(r):
		return oSpace, n
	}
	return 0, n
}

func spaceFlag(cls uint8) uint8 {
	if cls == clsSpace {
		return oSpace
	}
	return 0
}

func (o200kSplit) matches(s string, fn func(start, end int)) {
	for i := 0; i < len(s); {
		n := o200kMatchAt(s, i)
		fn(i, i+n)
		i += n
	}
}

// o200kLetters tries the two letter alternatives at j (after the optional
// prefix); it returns the end of the match or -1.
func o200kLetters(s string, j int, first bool) int {
	// The run of upper characters, and the last lower one inside it.
	k := j
	lastLower := -1
	for k < len(s) {
		f, n := o200kFlags(s, k)
		if f&oUpper == 0 {
			break
		}
		if f&oLower != 0 {
			lastLower = k + n
		}
		k += n
	}
	if first {
		// upper* lower+: the lower run after the upper run, or else the
		// upper run given back to its last lower character.
		if k < len(s) {
			if f, _ := o200kFlags(s, k); f&oLower != 0 {
				for k < len(s) {
					f, n := o200kFlags(s, k)
					if f&oLower == 0 {
						break
					}
					k += n
				}
				return k
			}
		}
		return lastLower
	}
	// upper+ lower*
	if k == j {
		return -1
	}
	for k < len(s) {
		f, n := o200kFlags(s, k)
		if f&oLower == 0 {
			break
		}
		k += n
	}
	return k
}

func o200kMatchAt(s string, i int) int {
	f, n := o200kFlags(s, i)
	prefix := f&(oLetter|oNumber) == 0 && s[i] != '\r' && s[i] != '\n'
	for _, first := range []bool{true, false} {
		end := -1
		if prefix && i+n < len(s) {
			end = o200kLetters(s, i+n, first)
		}
		if end < 0 {
			end = o200kLetters(s, i, first)
		}
		if end >= 0 {
			if end < len(s) {
				end += contraction(s, end, true)
			}
			return end - i
		}
	}
	if f&oNumber != 0 {
		j := i
		for k := 0; k < 3 && j < len(s); k++ {
			g, m := o200kFlags(s, j)
			if g&oNumber == 0 {
				break
			}
			j += m
		}
		return j - i
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
	start := i
	if s[i] == ' ' && i+1 < len(s) {
		if g, _ := o200kFlags(s, i+1); g&(oSpace|oLetter|oNumber) == 0 {
			start = i + 1
		}
	}
	if start > i || f&(oSpace|oLetter|oNumber) == 0 {
		j := start
		for j < len(s) {
			g, m := o200kFlags(s, j)
			if g&(oSpace|oLetter|oNumber) != 0 {
				break
			}
			j += m
		}
		for j < len(s) && (s[j] == '\r' || s[j] == '\n' || s[j] == '/') {
			j++
		}
		return j - i
	}
	return spaceRun(s, i, true)
}
