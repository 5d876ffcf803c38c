package tokenizer

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ardanlabs/jinja"

	"benchserve/internal/py/pyfmt"
)

// Python's str() and the filters built on it, for the places where the
// jinja engine's text conversion differs from Jinja2's: Jinja2 prints
// None as "None", floats as repr() does ("1.0"), and containers with
// repr()'d items; the engine prints "", "1" and naive quotes.

// printFilter is what {{ x }} outputs: str(x), "" for Undefined.
func printFilter(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 {
		return jinja.NewString(""), nil
	}
	if args[0].IsString() {
		return args[0], nil
	}
	return jinja.NewString(pyStr(args[0])), nil
}

// stringFilter is Jinja2's |string: str(x).
func stringFilter(args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	return printFilter(args, kwargs)
}

// trimFilter is Jinja2's |trim(chars=None): str(x).strip(chars).
func trimFilter(args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 {
		return jinja.NewString(""), nil
	}
	chars := jinja.None()
	if len(args) > 1 {
		chars = args[1]
	}
	if v, ok := kwargs["chars"]; ok {
		chars = v
	}
	s := pyStr(args[0])
	if chars.IsNone() || chars.IsUndefined() {
		return jinja.NewString(strings.TrimFunc(s, pyIsSpace)), nil
	}
	if !chars.IsString() {
		return jinja.Undefined(), fmt.Errorf("trim: strip arg must be None or str, not %s", pyTypeName(chars))
	}
	return jinja.NewString(strings.Trim(s, chars.AsString())), nil
}

// pyIsSpace is str.isspace for one character: Go's white space plus the
// separators U+001C..U+001F, which Python counts too.
func pyIsSpace(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f }

// pyStr is Python's str(v) for the values a template holds.
func pyStr(v jinja.Value) string {
	switch {
	case v.IsUndefined():
		return ""
	case v.IsString():
		return v.AsString()
	}
	return pyRepr(v)
}

// pyRepr is Python's repr(v).
func pyRepr(v jinja.Value) string {
	var sb strings.Builder
	writeRepr(&sb, v, 0)
	return sb.String()
}

func writeRepr(sb *strings.Builder, v jinja.Value, depth int) {
	if depth > 500 {
		sb.WriteString("...")
		return
	}
	switch {
	case v.IsUndefined():
		sb.WriteString("Undefined")
	case v.IsNone():
		sb.WriteString("None")
	case v.IsBool():
		if v.AsBool() {
			sb.WriteString("True")
		} else {
			sb.WriteString("False")
		}
	case v.IsInt():
		sb.WriteString(strconv.FormatInt(v.AsInt(), 10))
	case v.IsFloat():
		sb.WriteString(pyfmt.Float(v.AsFloat()))
	case v.IsString():
		writeStrRepr(sb, v.AsString())
	case v.IsList():
		sb.WriteByte('[')
		for i, item := range v.AsList().Items {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeRepr(sb, item, depth+1)
		}
		sb.WriteByte(']')
	case v.IsDict():
		d := v.AsDict()
		sb.WriteByte('{')
		for i, k := range d.Keys {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeStrRepr(sb, k)
			sb.WriteString(": ")
			writeRepr(sb, d.Data[k], depth+1)
		}
		sb.WriteByte('}')
	default:
		fmt.Fprintf(sb, "<function %s>", v.AsCallable().Name)
	}
}

// writeStrRepr is repr(str): single quotes unless the text has a single
// quote and no double quote; \\, the quote, \t \n \r escaped; other
// non-printable characters as \xNN, \uNNNN or \UNNNNNNNN.
func writeStrRepr(sb *strings.Builder, s string) {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	sb.WriteByte(quote)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == rune(quote) || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r == '\t':
			sb.WriteString(`\t`)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r == utf8.RuneError && size == 1:
			// Only Go strings can hold invalid UTF-8; JSON input cannot.
			fmt.Fprintf(sb, `\x%02x`, s[i-1])
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(sb, `\x%02x`, r)
		case r < utf8.RuneSelf || unicode.IsPrint(r):
			sb.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(sb, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(sb, `\u%04x`, r)
		default:
			fmt.Fprintf(sb, `\U%08x`, r)
		}
	}
	sb.WriteByte(quote)
}
