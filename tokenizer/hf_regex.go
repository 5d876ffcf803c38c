package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// matcher finds the matches of a pattern, in order and not overlapping, as
// the library's regex engine (Oniguruma) does in find_iter.
type matcher interface {
	matches(s string, fn func(start, end int))
}

// patternJSON is a Split or Replace pattern: {"String": "..."} or
// {"Regex": "..."}.
type patternJSON struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

func (p patternJSON) matcher() (matcher, error) {
	switch {
	case p.String != nil && *p.String != "":
		return literalMatcher(*p.String), nil
	case p.String != nil:
		return compileRegex(regexp2.Escape(*p.String))
	case p.Regex != nil:
		return compileRegex(*p.Regex)
	}
	return nil, fmt.Errorf("pattern: neither String nor Regex")
}

func (p *patternJSON) UnmarshalJSON(b []byte) error {
	type plain patternJSON
	var q plain
	if err := json.Unmarshal(b, &q); err != nil {
		return err
	}
	*p = patternJSON(q)
	return nil
}

type literalMatcher string

func (l literalMatcher) matches(s string, fn func(start, end int)) {
	for at := 0; ; {
		i := strings.Index(s[at:], string(l))
		if i < 0 {
			return
		}
		fn(at+i, at+i+len(l))
		at += i + len(l)
	}
}

// compileRegex returns a hand-written matcher for the split patterns of the
// common models, which regexp2 runs slowly, and regexp2 for the others.
func compileRegex(pat string) (matcher, error) {
	switch pat {
	case llama3Pattern:
		return fastSplit{digits: 3}, nil
	case qwen2Pattern:
		return fastSplit{digits: 1}, nil
	case gpt2Pattern:
		return fastSplit{gpt2: true}, nil
	case o200kPattern:
		return o200kSplit{}, nil
	case deepseekDigits:
		return runMatcher{unicode.IsNumber, 3}, nil
	case deepseekCJK:
		return runMatcher{isDeepseekCJK, 0}, nil
	case deepseekWords:
		return deepseekSplit{}, nil
	}
	re, err := regexp2.Compile(pat, regexp2.None, regexp2.OptionMaxBacktrackingStackSize(-1))
	if err != nil {
		return nil, fmt.Errorf("regex %q: %v", pat, err)
	}
	return regexMatcher{re}, nil
}

type regexMatcher struct{ re *regexp2.Regexp }

func (m regexMatcher) matches(s string, fn func(start, end int)) {
	runes := []rune(s)
	offs := make([]int, 0, len(runes)+1)
	for i := range s {
		offs = append(offs, i)
	}
	offs = append(offs, len(s))
	prevEnd := -1
	for at := 0; at <= len(runes); {
		mt, err := m.re.FindRunesMatchStartingAt(runes, at)
		if err != nil || mt == nil {
			return
		}
		st, n := mt.RuneIndex, mt.RuneLength
		if n == 0 {
			at = st + 1
			if st == prevEnd {
				continue // Oniguruma skips an empty match right after a match
			}
		} else {
			at = st + n
		}
		fn(offs[st], offs[st+n])
		prevEnd = st + n
	}
}

// The split patterns of Llama-3, Qwen2/3 (and their relatives) and GPT-2's
// ByteLevel pre-tokenizer.
const (
	llama3Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	qwen2Pattern  = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	gpt2Pattern   = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
)

// fastSplit matches llama3Pattern (digits 3), qwen2Pattern (digits 1) or
// gpt2Pattern, trying the alternatives in order as a backtracking engine
// does. Every character starts a match of these patterns, so the matches
// tile the string.
type fastSplit struct {
	digits int
	gpt2   bool
}

// Character classes: letter (\p{L}), number (\p{N}), space (\s, Unicode
// White_Space), other.
const (
	clsOther = iota
	clsLetter
	clsNumber
	clsSpace
)

var asciiClass = func() (t [128]uint8) {
	for c := range 128 {
		r := rune(c)
		switch {
		case unicode.IsLetter(r):
			t[c] = clsLetter
		case unicode.IsNumber(r):
			t[c] = clsNumber
		case unicode.IsSpace(r):
			t[c] = clsSpace
		}
	}
	return
}()

// classAt returns the class of the character at i and its size.
func classAt(s string, i int) (uint8, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	switch {
	case unicode.IsLetter(r):
		return clsLetter, n
	case unicode.IsNumber(r):
		return clsNumber, n
	case unicode.IsSpace(r):
		return clsSpace, n
	}
	return clsOther, n
}

func (f fastSplit) matches(s string, fn func(start, end int)) {
	for i := 0; i < len(s); {
		n := f.matchAt(s, i)
		fn(i, i+n)
		i += n
	}
}

// run returns the end of the run of characters of class cls from i.
func run(s string, i int, cls uint8) int {
	for i < len(s) {
		c, n := classAt(s, i)
		if c != cls {
			break
		}
		i += n
	}
	return i
}

// contraction is the length of 's 't 're 've 'm 'll 'd at i (0 if none).
// Case-insensitively (the Llama-3 pattern), 's also matches ſ (U+017F),
// which Oniguruma folds to s.
func contraction(s string, i int, fold bool) int {
	if s[i] != '\'' || i+1 >= len(s) {
		return 0
	}
	c := s[i+1]
	if fold {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if strings.HasPrefix(s[i+1:], "ſ") {
			return 3
		}
	}
	switch c {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v', 'l':
		if i+2 >= len(s) {
			return 0
		}
		c2 := s[i+2]
		if fold && c2 >= 'A' && c2 <= 'Z' {
			c2 += 'a' - 'A'
		}
		if c == 'r' && c2 == 'e' || c == 'v' && c2 == 'e' || c == 'l' && c2 == 'l' {
			return 3
		}
	}
	return 0
}

func (f fastSplit) matchAt(s string, i int) int {
	if n := contraction(s, i, !f.gpt2); n > 0 {
		return n
	}
	cls, n := classAt(s, i)
	if f.gpt2 {
		// ' ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+'
		if s[i] == ' ' && i+1 < len(s) {
			if c2, _ := classAt(s, i+1); c2 != clsSpace {
				return run(s, i+1, c2) - i
			}
		}
		if cls != clsSpace {
			return run(s, i, cls) - i
		}
		return spaceRun(s, i, false)
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if cls == clsLetter {
		return run(s, i, clsLetter) - i
	}
	if cls != clsNumber && s[i] != '\r' && s[i] != '\n' && i+n < len(s) {
		if c2, _ := classAt(s, i+n); c2 == clsLetter {
			return run(s, i+n, clsLetter) - i
		}
	}
	// \p{N}{1,3}
	if cls == clsNumber {
		j := i
		for k := 0; k < f.digits && j < len(s); k++ {
			c, m := classAt(s, j)
			if c != clsNumber {
				break
			}
			j += m
		}
		return j - i
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	start := i
	if s[i] == ' ' && i+1 < len(s) {
		if c2, _ := classAt(s, i+1); c2 == clsOther {
			start = i + 1
			cls = clsOther
		}
	}
	if cls == clsOther {
		j := run(s, start, clsOther)
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j - i
	}
	return spaceRun(s, i, true)
}

// spaceRun matches the whitespace alternatives at i, a space:
// \s*[\r\n]+ (when crlf), then \s+(?!\S), then \s+.
func spaceRun(s string, i int, crlf bool) int {
	end := i
	lastNL := -1
	prev := i
	for end < len(s) {
		c, n := classAt(s, end)
		if c != clsSpace {
			break
		}
		if s[end] == '\r' || s[end] == '\n' {
			lastNL = end
		}
		prev = end
		end += n
	}
	if crlf && lastNL >= 0 {
		return lastNL + 1 - i
	}
	if end == len(s) || prev == i {
		return end - i
	}
	return prev - i
}
