package pyfmt

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode"
)

var errSyntax = errors.New("invalid literal")

// ParseInt parses s as Python's int(s) does: surrounding whitespace, an
// optional sign, decimal digits (any Unicode decimal digit counts) with
// single underscores between them. Unlike Python, values outside the int64
// range are rejected.
func ParseInt(s string) (int, error) {
	t, ok := toASCII(s)
	if !ok {
		return 0, errSyntax
	}
	sign := ""
	if t != "" && (t[0] == '+' || t[0] == '-') {
		sign, t = t[:1], t[1:]
	}
	digits, ok := stripUnderscores(t)
	if !ok || digits == "" {
		return 0, errSyntax
	}
	n, err := strconv.ParseInt(sign+digits, 10, 0)
	if err != nil {
		return 0, err
	}
	return int(n), nil
}

// ParseFloat parses s as Python's float(s) does: surrounding whitespace, an
// optional sign, then inf, infinity or nan in any case, or a decimal number
// ("1", "1.", ".5", "1e-3") with single underscores between digits. Values too
// large become ±inf and values too small become 0, as in Python.
func ParseFloat(s string) (float64, error) {
	t, ok := toASCII(s)
	if !ok {
		return 0, errSyntax
	}
	body := t
	if body != "" && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	switch strings.ToLower(body) {
	case "inf", "infinity":
		if t[0] == '-' {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	case "nan":
		return math.NaN(), nil
	}
	mant, exp := body, ""
	if i := strings.IndexAny(body, "eE"); i >= 0 {
		mant, exp = body[:i], body[i+1:]
		if exp != "" && (exp[0] == '+' || exp[0] == '-') {
			exp = exp[1:]
		}
		if e, ok := stripUnderscores(exp); !ok || e == "" {
			return 0, errSyntax
		}
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	i, ok1 := stripUnderscores(intPart)
	f, ok2 := stripUnderscores(frac)
	if !ok1 || !ok2 || i == "" && f == "" {
		return 0, errSyntax
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(t, "_", ""), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, err
	}
	return v, nil
}

// toASCII does what CPython does before parsing a number: non-ASCII
// whitespace becomes a space and Unicode decimal digits become ASCII ones;
// then ASCII whitespace is trimmed. Any other non-ASCII rune fails.
func toASCII(s string) (string, bool) {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if !ascii {
		var b strings.Builder
		for _, r := range s {
			switch {
			case r < 0x80:
				b.WriteRune(r)
			case unicode.IsSpace(r):
				b.WriteByte(' ')
			case unicode.Is(unicode.Nd, r):
				b.WriteByte('0' + decimalValue(r))
			default:
				return "", false
			}
		}
		s = b.String()
	}
	return strings.Trim(s, " \t\n\r\v\f"), true
}

// decimalValue gives the value of a Unicode decimal digit. Unicode puts the
// digits of every script in runs of ten from 0 to 9, and runs that touch
// (the mathematical digits) are whole runs, so the offset from the start of
// the contiguous block, modulo 10, is the digit.
func decimalValue(r rune) byte {
	start := r
	for unicode.Is(unicode.Nd, start-1) {
		start--
	}
	return byte((r - start) % 10)
}

// stripUnderscores checks that s is ASCII digits with single underscores
// between digits, and returns the digits alone. An empty s is valid.
func stripUnderscores(s string) (string, bool) {
	if !strings.Contains(s, "_") {
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return "", false
			}
		}
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			b.WriteByte(c)
		case c == '_' && i > 0 && i+1 < len(s) && isDigit(s[i-1]) && isDigit(s[i+1]):
		default:
			return "", false
		}
	}
	return b.String(), true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
