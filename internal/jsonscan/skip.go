package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"strconv"
)

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(d []byte, i int) int {
	for i < len(d) && isSpace(d[i]) {
		i++
	}
	return i
}

func quoteByte(c byte) string { return strconv.QuoteRune(rune(c)) }

// skip validates the value starting at d[i] and returns where it ends.
func skip(d []byte, i, depth int) (int, Kind, error) {
	if i >= len(d) {
		return i, Invalid, &SyntaxError{i, "unexpected end"}
	}
	switch c := d[i]; {
	case c == '"':
		end, err := skipString(d, i)
		return end, String, err
	case c == '{':
		end, err := skipObject(d, i, depth+1)
		return end, Object, err
	case c == '[':
		end, err := skipArray(d, i, depth+1)
		return end, Array, err
	case c == '-' || (c >= '0' && c <= '9'):
		if hasWord(d, i, "-Infinity") {
			return i + 9, Number, nil
		}
		end, err := skipNumber(d, i)
		return end, Number, err
	case hasWord(d, i, "true"):
		return i + 4, True, nil
	case hasWord(d, i, "false"):
		return i + 5, False, nil
	case hasWord(d, i, "null"):
		return i + 4, Null, nil
	case hasWord(d, i, "NaN"):
		return i + 3, Number, nil
	case hasWord(d, i, "Infinity"):
		return i + 8, Number, nil
	default:
		return i, Invalid, &SyntaxError{i, "unexpected character " + quoteByte(c)}
	}
}

func hasWord(d []byte, i int, w string) bool {
	return len(d)-i >= len(w) && string(d[i:i+len(w)]) == w
}

// Masks for finding, eight bytes at a time, a byte that ends a plain run
// in a string.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// specialMask has the high bit set in each byte of x that is '"', '\\' or
// below 0x20. Borrows can set bits only above the first such byte, so the
// lowest set bit is exact. Bytes >= 0x80 never count.
func specialMask(x uint64) uint64 {
	q := x ^ (ones * '"')
	b := x ^ (ones * '\\')
	return ((q-ones)&^q | (b-ones)&^b | (x-ones*0x20)&^x) & highs
}

// StringRun returns the index of the first byte at or after i in d that
// ends a run of plain string content: '"', '\\' or a control character
// (below 0x20); len(d) if none does. UTF-8 text (bytes 0x80 and up) is
// plain, so it runs at full speed; the bytes are tested eight at a time.
func StringRun(d []byte, i int) int {
	for ; i+8 <= len(d); i += 8 {
		if m := specialMask(binary.LittleEndian.Uint64(d[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(d) && d[i] != '"' && d[i] != '\\' && d[i] >= 0x20 {
		i++
	}
	return i
}

// ASCIIRun is StringRun for a reader that also validates UTF-8: a
// non-ASCII byte ends the run too.
func ASCIIRun(d []byte, i int) int {
	for ; i+8 <= len(d); i += 8 {
		x := binary.LittleEndian.Uint64(d[i:])
		if m := specialMask(x) | x&highs; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(d) && d[i] != '"' && d[i] != '\\' && d[i] >= 0x20 && d[i] < 0x80 {
		i++
	}
	return i
}

// Unescape returns the byte that the escape \c stands for, for the short
// escapes: '"', '\\', '/', b, f, n, r and t. It reports false for any
// other c (\u is read with Hex4).
func Unescape(c byte) (byte, bool) {
	r := unescapes[c]
	return r, r != 0
}

var unescapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// Hex4 reads the four hex digits of a \u escape at d[i:].
func Hex4(d []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(d) {
		return 0, false
	}
	var r rune
	for _, c := range d[i : i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

func skipString(d []byte, i int) (int, error) {
	j := i + 1
	for {
		if j = StringRun(d, j); j >= len(d) {
			break
		}
		switch d[j] {
		case '"':
			return j + 1, nil
		case '\\':
			if j+1 >= len(d) {
				return j, &SyntaxError{j, "unterminated string"}
			}
			switch c := d[j+1]; {
			case c == 'u':
				if _, ok := Hex4(d, j+2); !ok {
					return j, &SyntaxError{j, `bad \u escape`}
				}
				j += 6
			case unescapes[c] != 0:
				j += 2
			default:
				return j, &SyntaxError{j, "bad escape " + quoteByte(c)}
			}
		default: // below 0x20
			return j, &SyntaxError{j, "control character in string"}
		}
	}
	return len(d), &SyntaxError{i, "unterminated string"}
}

func skipDigits(d []byte, i int) int {
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		i++
	}
	return i
}

func skipNumber(d []byte, i int) (int, error) {
	start := i
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = skipDigits(d, i)
	default:
		return i, &SyntaxError{start, "bad number"}
	}
	if i < len(d) && d[i] == '.' {
		j := skipDigits(d, i+1)
		if j == i+1 {
			return j, &SyntaxError{start, "bad number"}
		}
		i = j
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := skipDigits(d, i)
		if j == i {
			return j, &SyntaxError{start, "bad number"}
		}
		i = j
	}
	return i, nil
}

// plainInt reports whether d[i:] starts with a non-negative integer
// followed by ',' or ']', and where it ends; anything else (a sign, a
// fraction, an exponent, a leading zero before digits) is left to skip.
func plainInt(d []byte, i int) (int, bool) {
	j := i
	if j < len(d) && d[j] == '0' {
		j++
	} else {
		for j < len(d) && d[j] >= '0' && d[j] <= '9' {
			j++
		}
	}
	if j == i || j >= len(d) || (d[j] != ',' && d[j] != ']') {
		return i, false
	}
	return j, true
}

func skipObject(d []byte, i, depth int) (int, error) {
	if depth > maxDepth {
		return i, &SyntaxError{i, "nested too deeply"}
	}
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(d) || d[i] != '"' {
			return i, &SyntaxError{i, "expected a key"}
		}
		end, err := skipString(d, i)
		if err != nil {
			return end, err
		}
		i = skipSpace(d, end)
		if i >= len(d) || d[i] != ':' {
			return i, &SyntaxError{i, "expected ':'"}
		}
		i = skipSpace(d, i+1)
		if i, _, err = skip(d, i, depth); err != nil {
			return i, err
		}
		i = skipSpace(d, i)
		if i >= len(d) {
			return i, &SyntaxError{i, "unexpected end in object"}
		}
		switch d[i] {
		case ',':
			i = skipSpace(d, i+1)
		case '}':
			return i + 1, nil
		default:
			return i, &SyntaxError{i, "expected ',' or '}'"}
		}
	}
}

func skipArray(d []byte, i, depth int) (int, error) {
	if depth > maxDepth {
		return i, &SyntaxError{i, "nested too deeply"}
	}
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == ']' {
		return i + 1, nil
	}
	for {
		if j, ok := plainInt(d, i); ok { // most long arrays hold token ids
			i = j
		} else {
			var err error
			if i, _, err = skip(d, i, depth); err != nil {
				return i, err
			}
		}
		i = skipSpace(d, i)
		if i >= len(d) {
			return i, &SyntaxError{i, "unexpected end in array"}
		}
		switch d[i] {
		case ',':
			i = skipSpace(d, i+1)
		case ']':
			return i + 1, nil
		default:
			return i, &SyntaxError{i, "expected ',' or ']'"}
		}
	}
}

// End returns where the value at d[i] ends in a document already
// validated (by Parse, or by a caller's own validation), without checking
// it again. On other input it stops somewhere within d, never past it.
func End(d []byte, i int) int {
	end, _ := skipTrusted(d, i)
	return end
}

// skipTrusted is End, also returning the value's kind.
func skipTrusted(d []byte, i int) (int, Kind) {
	if i >= len(d) {
		return len(d), Invalid
	}
	switch c := d[i]; c {
	case '"':
		return endString(d, i), String
	case '{', '[':
		kind := Object
		if c == '[' {
			kind = Array
		}
		depth := 0
		for j := i; j < len(d); j++ {
			switch d[j] {
			case '"':
				j = endString(d, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, kind
				}
			}
		}
		return len(d), kind
	case 't':
		return min(i+4, len(d)), True
	case 'f':
		return min(i+5, len(d)), False
	case 'n':
		return min(i+4, len(d)), Null
	}
	j := i + 1
	for j < len(d) && d[j] != ',' && d[j] != '}' && d[j] != ']' && !isSpace(d[j]) {
		j++
	}
	return j, Number
}

// endString returns the index after the closing quote of the string that
// starts at d[i].
func endString(d []byte, i int) int {
	j := i + 1
	for {
		if j = StringRun(d, j); j >= len(d) {
			return len(d)
		}
		switch d[j] {
		case '"':
			return j + 1
		case '\\':
			j += 2 // the escaped byte; a \u's hex digits hold no quote
		default:
			j++
		}
	}
}
