package argparse

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"benchserve/internal/py/pyfmt"
)

// Repr returns Python's repr() of the string s: single quotes unless s holds
// a ' and no ", backslash escapes for the quote, the backslash, \t \n \r and
// unprintable characters. Bytes that are not UTF-8 print as \udcXX, the
// surrogate that Python's surrogateescape decoding of argv gives them.
func Repr(s string) string {
	quote := '\''
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteRune(quote)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&b, `\udc%02x`, s[i])
			i++
			continue
		}
		i += size
		switch {
		case r == quote || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < ' ' || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x7f || unicode.IsPrint(r):
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteRune(quote)
	return b.String()
}

// ReprValue returns Python's repr() of a parsed value: None for nil, True or
// False, ints, floats as CPython prints them (inf, 8.0), quoted strings and
// lists of these.
func ReprValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case bool:
		if v {
			return "True"
		}
		return "False"
	case int:
		return strconv.Itoa(v)
	case float64:
		return pyfmt.Float(v)
	case string:
		return Repr(v)
	case []any:
		return reprList(v)
	case []string:
		return reprList(v)
	case []int:
		return reprList(v)
	case []float64:
		return reprList(v)
	}
	return fmt.Sprintf("<%T>", v)
}

func reprList[T any](items []T) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(ReprValue(it))
	}
	b.WriteByte(']')
	return b.String()
}
