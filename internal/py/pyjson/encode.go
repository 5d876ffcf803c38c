// Package pyjson writes JSON as CPython's json.dumps does with its defaults:
// ", " and ": " separators, non-ASCII escaped as \uXXXX, floats as repr(),
// and the bare tokens Infinity, -Infinity and NaN. Result lines and request
// bodies written with it are byte-identical to the reference tool's.
package pyjson

import (
	"math"
	"strconv"
	"unicode/utf8"

	"benchserve/internal/py/pyfmt"
)

const hex = "0123456789abcdef"

// AppendString appends s as a JSON string with ensure_ascii: every byte
// outside space..'~' is escaped, characters above U+FFFF as surrogate pairs.
// Invalid UTF-8 is written as U+FFFD.
func AppendString(dst []byte, s string) []byte { return AppendQuoted(dst, s, true) }

// AppendQuoted appends s as a JSON string as json.dumps writes it: '"',
// '\\' and the control characters escaped (\n, \r, \t, \b and \f short,
// the others as \u00XX), and, with ensureASCII, DEL and every non-ASCII
// character as \uXXXX (surrogate pairs above U+FFFF); without it they are
// written as they are. Invalid UTF-8 is written as \ufffd either way, so the
// result is always valid UTF-8.
func AppendQuoted(dst []byte, s string, ensureASCII bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= ' ' && c <= '~' && c != '"' && c != '\\' {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if !ensureASCII && size > 1 {
				i += size // valid UTF-8, kept
				continue
			}
			dst = append(dst, s[start:i]...)
			if r >= 0x10000 {
				r -= 0x10000
				dst = appendU(dst, 0xd800+(r>>10))
				dst = appendU(dst, 0xdc00+(r&0x3ff))
			} else {
				dst = appendU(dst, r)
			}
			i += size
			start = i
			continue
		}
		if c == 0x7f && !ensureASCII {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = appendU(dst, rune(c))
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendU(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

// AppendFloat appends f as json.dumps writes a float.
func AppendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	}
	return pyfmt.AppendFloat(dst, f)
}

// AppendInt appends an integer.
func AppendInt(dst []byte, i int64) []byte { return strconv.AppendInt(dst, i, 10) }

// AppendBool appends true or false.
func AppendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

// Value builders return one encoded value, for Object.Set.

// String encodes s.
func String(s string) []byte { return AppendString(nil, s) }

// Float encodes f.
func Float(f float64) []byte { return AppendFloat(nil, f) }

// Int encodes i.
func Int(i int) []byte { return AppendInt(nil, int64(i)) }

// Bool encodes b.
func Bool(b bool) []byte { return AppendBool(nil, b) }

// Null is the encoded None.
var Null = []byte("null")

// Ints encodes a list of ints.
func Ints(v []int) []byte {
	dst := []byte{'['}
	for i, x := range v {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = strconv.AppendInt(dst, int64(x), 10)
	}
	return append(dst, ']')
}

// Strings encodes a list of strings.
func Strings(v []string) []byte {
	dst := []byte{'['}
	for i, x := range v {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = AppendString(dst, x)
	}
	return append(dst, ']')
}
