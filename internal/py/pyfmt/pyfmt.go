// Package pyfmt formats values as CPython prints them, so that text the
// reference tool prints with str(), repr() or format specs comes out the same,
// and parses numbers as CPython's int() and float() read them.
package pyfmt

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Float returns repr(f) (also str(f)) as CPython 3 prints it: the shortest
// digits that round-trip, in fixed notation when the decimal exponent is in
// (-4, 16], else in exponent notation with at least two exponent digits.
func Float(f float64) string {
	return string(AppendFloat(nil, f))
}

// AppendFloat appends Float(f) to dst.
func AppendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(f):
		return append(dst, "nan"...)
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // [-]d[.ddd]e±XX
	neg := e[0] == '-'
	if neg {
		e = e[1:]
		dst = append(dst, '-')
	}
	ei := 0
	for e[ei] != 'e' {
		ei++
	}
	exp, _ := strconv.Atoi(string(e[ei+1:]))
	var digits []byte
	digits = append(digits, e[0])
	if ei > 1 {
		digits = append(digits, e[2:ei]...)
	}
	decpt := exp + 1 // value = 0.DIGITS × 10^decpt
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			dst = append(dst, "0."...)
			for i := 0; i < -decpt; i++ {
				dst = append(dst, '0')
			}
			dst = append(dst, digits...)
		case decpt >= len(digits):
			dst = append(dst, digits...)
			for i := len(digits); i < decpt; i++ {
				dst = append(dst, '0')
			}
			dst = append(dst, ".0"...)
		default:
			dst = append(dst, digits[:decpt]...)
			dst = append(dst, '.')
			dst = append(dst, digits[decpt:]...)
		}
		return dst
	}
	dst = append(dst, digits[0])
	if len(digits) > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'e')
	if exp < 0 {
		dst = append(dst, '-')
		exp = -exp
	} else {
		dst = append(dst, '+')
	}
	if exp < 10 {
		dst = append(dst, '0')
	}
	return strconv.AppendInt(dst, int64(exp), 10)
}

// Fixed returns format(f, ".<prec>f") as CPython prints it ("inf", "nan",
// "-inf" for the special values; Go would print "+Inf").
func Fixed(f float64, prec int) string {
	if s, ok := special(f); ok {
		return s
	}
	return strconv.FormatFloat(f, 'f', prec, 64)
}

// G returns format(f, "g"): six significant digits, trailing zeros
// dropped, exponent form for large and small numbers.
func G(f float64) string {
	if s, ok := special(f); ok {
		return s
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

// special is CPython's text for inf, -inf and nan.
func special(f float64) (string, bool) {
	switch {
	case math.IsInf(f, 1):
		return "inf", true
	case math.IsInf(f, -1):
		return "-inf", true
	case math.IsNaN(f):
		return "nan", true
	}
	return "", false
}

// Left pads s on the right with spaces to width w, as "{:<w}" does; a longer
// s is kept whole. Width counts code points, as Python's does.
func Left(s string, w int) string {
	n := utf8.RuneCountInString(s)
	if n >= w {
		return s
	}
	return s + strings.Repeat(" ", w-n)
}

// Center returns "{s:{c}^{n}}": s centred in n columns of c, the odd pad
// character going to the right, as CPython's str.format does.
func Center(s string, c byte, n int) string {
	if len(s) >= n {
		return s
	}
	pad := n - len(s)
	left := pad / 2
	return strings.Repeat(string(c), left) + s + strings.Repeat(string(c), pad-left)
}

// Quote returns repr(s) for a Python str: single quotes unless s holds a
// single quote and no double quote; backslash, the quote and control
// characters escaped; printable non-ASCII characters kept.
func Quote(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == ' ' || (r > ' ' && r < 0x7f) || (r >= 0xa0 && unicode.IsPrint(r)):
			b.WriteRune(r)
		case r < 0x100:
			b.WriteString(`\x`)
			b.WriteString(hex2(uint32(r), 2))
		case r < 0x10000:
			b.WriteString(`\u`)
			b.WriteString(hex2(uint32(r), 4))
		default:
			b.WriteString(`\U`)
			b.WriteString(hex2(uint32(r), 8))
		}
	}
	b.WriteByte(q)
	return b.String()
}

func hex2(v uint32, n int) string {
	s := strconv.FormatUint(uint64(v), 16)
	return strings.Repeat("0", n-len(s)) + s
}
