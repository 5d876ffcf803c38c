package dataset

import (
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"benchserve/internal/jsonscan"
)

// scanner validates JSON read from a stream through a fixed buffer, without
// building values; callers pick out what they need as it goes. It follows
// Python's json module: NaN, Infinity and -Infinity are accepted as
// numbers, control characters in strings are not, and the text must be
// UTF-8 (Python decodes the file before parsing).
//
// It is internal/jsonscan's job, reading a file of any size in bounded
// memory (the ShareGPT file is ~670 MB) with Python's messages, so it keeps
// its own tokenizer for values that straddle its buffer; within a buffer it
// uses jsonscan's run finder, escape table and \u reader.
type scanner struct {
	r    io.Reader
	buf  []byte
	pos  int   // next unread byte in buf
	end  int   // end of valid bytes in buf
	base int64 // file offset of buf[0]
	eof  bool
	err  error // first syntax or read error; scanning stops there
	poll func() error
}

// syntaxError is invalid JSON at a byte offset of the file.
type syntaxError struct {
	off int64
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

// maxDepth bounds nesting, as Python's recursion limit does.
const maxDepth = 1000

func newScanner(r io.Reader, size int) *scanner {
	return &scanner{r: r, buf: make([]byte, size)}
}

// offset is the file offset of the next unread byte.
func (s *scanner) offset() int64 { return s.base + int64(s.pos) }

func (s *scanner) fail(msg string) { s.failAt(s.offset(), msg) }

func (s *scanner) failAt(off int64, msg string) {
	if s.err == nil {
		s.err = &syntaxError{off: off, msg: msg}
	}
}

// fill makes at least n bytes available at buf[pos:] unless the input ends
// first, and reports whether it did.
func (s *scanner) fill(n int) bool {
	for s.end-s.pos < n {
		if s.eof || s.err != nil {
			return false
		}
		if s.pos > 0 {
			copy(s.buf, s.buf[s.pos:s.end])
			s.end -= s.pos
			s.base += int64(s.pos)
			s.pos = 0
		}
		if s.poll != nil {
			if err := s.poll(); err != nil {
				s.err = err
				return false
			}
		}
		k, err := s.r.Read(s.buf[s.end:])
		s.end += k
		if errors.Is(err, io.EOF) {
			s.eof = true
		} else if err != nil {
			s.err = err
			return false
		}
	}
	return true
}

// peek skips whitespace and returns the next byte, or 0 at the end of input.
func (s *scanner) peek() byte {
	for {
		for s.pos < s.end {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\n', '\r':
				s.pos++
			default:
				return c
			}
		}
		if !s.fill(1) {
			return 0
		}
	}
}

// expect consumes c after optional whitespace.
func (s *scanner) expect(c byte, what string) bool {
	if s.peek() != c {
		s.unexpected(what)
		return false
	}
	s.pos++
	return true
}

// unexpected records an error at the next byte, saying what was wanted.
func (s *scanner) unexpected(what string) {
	if s.err != nil {
		return
	}
	if s.pos >= s.end {
		s.fail("unexpected end of file, expecting " + what)
		return
	}
	s.fail(fmt.Sprintf("unexpected %s, expecting %s", quoteByte(s.buf[s.pos]), what))
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// stringInfo is what scanString learns about one string token.
type stringInfo struct {
	off int64 // offset of the first content byte, after the quote
	n   int64 // content bytes, escapes undecoded
	esc bool  // content has escapes
	// key holds the decoded content when it is short ASCII, for matching
	// object keys; keyOK is false when it is not.
	key   [16]byte
	keyN  int
	keyOK bool
}

// is reports whether the string, decoded, equals k.
func (si stringInfo) is(k string) bool {
	return si.keyOK && string(si.key[:si.keyN]) == k
}

func (si *stringInfo) addKeyBytes(b []byte) {
	if si.keyN+len(b) > len(si.key) {
		si.keyOK = false
		return
	}
	si.keyN += copy(si.key[si.keyN:], b)
}

func (si *stringInfo) addKey(r rune) {
	if !si.keyOK {
		return
	}
	if r >= utf8.RuneSelf || si.keyN == len(si.key) {
		si.keyOK = false
		return
	}
	si.key[si.keyN] = byte(r)
	si.keyN++
}

// scanString reads a string token; the next byte must be its opening quote.
func (s *scanner) scanString(si *stringInfo) bool {
	s.pos++ // opening quote
	*si = stringInfo{off: s.offset(), keyOK: true}
	for {
		if s.pos >= s.end && !s.fill(1) {
			s.failAt(si.off-1, "unterminated string")
			return false
		}
		i := jsonscan.ASCIIRun(s.buf[:s.end], s.pos)
		if si.keyOK {
			si.addKeyBytes(s.buf[s.pos:i])
		}
		s.pos = i
		if i >= s.end {
			continue
		}
		switch c := s.buf[i]; {
		case c == '"':
			si.n = s.offset() - si.off
			s.pos++
			return true
		case c == '\\':
			if !s.scanEscape(si) {
				return false
			}
		case c < 0x20:
			s.fail(fmt.Sprintf("invalid control character %s in string", quoteByte(c)))
			return false
		default:
			if !s.scanNonASCII() {
				return false
			}
			si.keyOK = false
		}
	}
}

// scanNonASCII validates the run of non-ASCII bytes at pos, which inside
// a string can only be whole UTF-8 sequences.
func (s *scanner) scanNonASCII() bool {
	j := s.pos
	for j < s.end && s.buf[j] >= utf8.RuneSelf {
		j++
	}
	if j == s.end && !s.eof {
		// The run may continue past the buffer: one rune at a time.
		s.fill(utf8.UTFMax)
		j = s.pos + 1
		if r, size := utf8.DecodeRune(s.buf[s.pos:s.end]); r != utf8.RuneError || size > 1 {
			j = s.pos + size
		}
	}
	if run := s.buf[s.pos:j]; !utf8.Valid(run) {
		for len(run) > 0 {
			if r, size := utf8.DecodeRune(run); r == utf8.RuneError && size <= 1 {
				break
			} else {
				run = run[size:]
				s.pos += size
			}
		}
		s.fail("invalid UTF-8 in string")
		return false
	}
	s.pos = j
	return true
}

// scanEscape reads one backslash escape.
func (s *scanner) scanEscape(si *stringInfo) bool {
	si.esc = true
	if !s.fill(2) {
		s.failAt(si.off-1, "unterminated string")
		return false
	}
	c := s.buf[s.pos+1]
	if c != 'u' {
		r, ok := jsonscan.Unescape(c)
		if !ok {
			s.pos++
			if c >= 0x20 && c < 0x7f {
				s.fail(fmt.Sprintf("invalid escape \\%c in string", c))
			} else {
				s.fail(fmt.Sprintf("invalid escape: backslash then %s in string", quoteByte(c)))
			}
			return false
		}
		si.addKey(rune(r))
		s.pos += 2
		return true
	}
	if !s.fill(6) {
		s.failAt(si.off-1, "unterminated string")
		return false
	}
	r, ok := jsonscan.Hex4(s.buf, s.pos+2)
	if !ok {
		s.fail("invalid \\uXXXX escape in string")
		return false
	}
	si.addKey(r) // surrogates are not ASCII, so they never match a key
	s.pos += 6
	return true
}

// skipValue validates one value of any kind.
func (s *scanner) skipValue(depth int) bool {
	switch c := s.peek(); c {
	case '"':
		var si stringInfo
		return s.scanString(&si)
	case '{':
		return s.object(depth, func(stringInfo) bool { return s.skipValue(depth + 1) })
	case '[':
		return s.array(depth, func(int) bool { return s.skipValue(depth + 1) })
	default:
		return s.scalar()
	}
}

// object reads an object, calling member for each key with the scanner
// just past the colon; member must consume the value.
func (s *scanner) object(depth int, member func(key stringInfo) bool) bool {
	if depth >= maxDepth {
		s.fail("nesting too deep")
		return false
	}
	s.pos++ // {
	if s.peek() == '}' {
		s.pos++
		return true
	}
	var key stringInfo
	for {
		if s.peek() != '"' {
			s.unexpected("a string key")
			return false
		}
		if !s.scanString(&key) || !s.expect(':', "':'") || !member(key) {
			return false
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return true
		default:
			s.unexpected("',' or '}'")
			return false
		}
	}
}

// array reads an array, calling elem for each element index; elem must
// consume the element.
func (s *scanner) array(depth int, elem func(i int) bool) bool {
	if depth >= maxDepth {
		s.fail("nesting too deep")
		return false
	}
	s.pos++ // [
	if s.peek() == ']' {
		s.pos++
		return true
	}
	for i := 0; ; i++ {
		if !elem(i) {
			return false
		}
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return true
		default:
			s.unexpected("',' or ']'")
			return false
		}
	}
}

// scalar reads a number or a literal.
func (s *scanner) scalar() bool {
	c := s.peek()
	switch {
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == 'N':
		return s.literal("NaN")
	case c == 'I':
		return s.literal("Infinity")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	s.unexpected("a value")
	return false
}

func (s *scanner) literal(word string) bool {
	if !s.fill(len(word)) || string(s.buf[s.pos:s.pos+len(word)]) != word {
		s.unexpected("a value")
		return false
	}
	s.pos += len(word)
	return true
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?, or -Infinity.
func (s *scanner) number() bool {
	if s.buf[s.pos] == '-' {
		s.pos++
		if s.fill(1) && s.buf[s.pos] == 'I' {
			return s.literal("Infinity")
		}
	}
	if !s.fill(1) || !isDigit(s.buf[s.pos]) {
		s.unexpected("a digit")
		return false
	}
	if s.buf[s.pos] == '0' {
		s.pos++
	} else {
		s.digits()
	}
	if s.fill(1) && s.buf[s.pos] == '.' {
		s.pos++
		if !s.fill(1) || !isDigit(s.buf[s.pos]) {
			s.unexpected("a digit")
			return false
		}
		s.digits()
	}
	if s.fill(1) && (s.buf[s.pos] == 'e' || s.buf[s.pos] == 'E') {
		s.pos++
		if s.fill(1) && (s.buf[s.pos] == '+' || s.buf[s.pos] == '-') {
			s.pos++
		}
		if !s.fill(1) || !isDigit(s.buf[s.pos]) {
			s.unexpected("a digit")
			return false
		}
		s.digits()
	}
	return s.err == nil
}

func (s *scanner) digits() {
	for s.fill(1) && isDigit(s.buf[s.pos]) {
		s.pos++
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// finish checks that only whitespace follows the top-level value.
func (s *scanner) finish() bool {
	if s.err != nil {
		return false
	}
	if s.peek() != 0 || s.pos < s.end {
		s.fail("extra data after the top-level value")
		return false
	}
	return s.err == nil
}
