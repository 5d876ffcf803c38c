package tokenizer

import (
	"strings"

	"github.com/ardanlabs/jinja"
)

// The jinja engine looks its built-in filters up before the template's
// variables, and prints values its own way. So that templates render as
// in transformers (Jinja2 with transformers' tojson), the template source
// is rewritten before compiling: the filters in pyFilters are renamed to
// names the engine does not know, which it then finds among the variables
// (chatVars sets them), and every {{ expr }} becomes
// {{ (expr)|<printName> }}, which prints as Jinja2 does. No template
// variable starts with renamePrefix.
const (
	renamePrefix = "__benchserve_"
	printName    = renamePrefix + "print"
)

// pyFilters are the filters replaced, by their name in templates.
var pyFilters = map[string]func([]jinja.Value, map[string]jinja.Value) (jinja.Value, error){
	"tojson": tojsonFilter,
	"trim":   trimFilter,
	"string": stringFilter,
}

// rewriteTemplate applies the rewrite to {{ }} and {% %} tags, leaving
// text, comments, {% raw %} blocks and string literals alone.
func rewriteTemplate(src string) string {
	var sb strings.Builder
	sb.Grow(len(src) + len(src)/8)
	i, last := 0, 0 // src[last:i] is copied as is
	for i+1 < len(src) {
		if src[i] != '{' {
			i++
			continue
		}
		switch src[i+1] {
		case '#':
			end := strings.Index(src[i+2:], "#}")
			if end < 0 {
				i = len(src)
				continue
			}
			i += 2 + end + 2
		case '%':
			start := i + 2
			if isRawTag(src[start:]) {
				i = skipRaw(src, start)
				continue
			}
			_, inner := tagEnd(src, start, "%}")
			sb.WriteString(src[last:start])
			sb.WriteString(renameFilters(src[start:inner]))
			i, last = inner, inner
		case '{':
			start := i + 2
			if start < len(src) && src[start] == '-' {
				start++
			}
			end, inner := tagEnd(src, start, "}}")
			sb.WriteString(src[last:start])
			expr := src[start:inner]
			if strings.TrimSpace(expr) == "" || inner == end {
				sb.WriteString(expr) // empty or unterminated: let the engine complain
			} else {
				sb.WriteString(" (")
				sb.WriteString(renameFilters(expr))
				sb.WriteString(")|" + printName + " ")
			}
			i, last = inner, inner
		default:
			i++
		}
	}
	if last == 0 {
		return src
	}
	sb.WriteString(src[last:])
	return sb.String()
}

// tagEnd finds the closer of the tag whose body starts at start, skipping
// string literals. inner is where the body ends (before a "-" trim mark),
// end is past the closer; both are len(src) when there is none, and never
// equal otherwise.
func tagEnd(src string, start int, closer string) (end, inner int) {
	for j := start; j < len(src); {
		switch c := src[j]; {
		case c == '\'' || c == '"':
			j = skipString(src, j)
		case strings.HasPrefix(src[j:], closer):
			inner = j
			if inner > start && src[inner-1] == '-' {
				inner--
			}
			return j + len(closer), inner
		default:
			j++
		}
	}
	return len(src), len(src)
}

// renameFilters renames the filters of pyFilters where they follow '|' in
// a tag body, outside string literals.
func renameFilters(body string) string {
	var sb strings.Builder
	last := 0
	for j := 0; j < len(body); {
		switch c := body[j]; {
		case c == '\'' || c == '"':
			j = skipString(body, j)
		case c == '|':
			k := j + 1
			for k < len(body) && (body[k] == ' ' || body[k] == '\t' || body[k] == '\n' || body[k] == '\r') {
				k++
			}
			e := k
			for e < len(body) && isIdentByte(body[e]) {
				e++
			}
			if _, ok := pyFilters[body[k:e]]; ok {
				sb.WriteString(body[last:k])
				sb.WriteString(renamePrefix)
				sb.WriteString(body[k:e])
				last = e
			}
			j = max(e, j+1)
		default:
			j++
		}
	}
	if last == 0 {
		return body
	}
	sb.WriteString(body[last:])
	return sb.String()
}

// isRawTag reports whether the statement whose body starts at s is
// "raw", with an optional '-'.
func isRawTag(s string) bool {
	s = strings.TrimPrefix(s, "-")
	s = strings.TrimLeft(s, " \t\n\r")
	if !strings.HasPrefix(s, "raw") {
		return false
	}
	return len(s) == 3 || !isIdentByte(s[3])
}

// skipRaw returns the index after the {% endraw %} that closes the raw
// block whose tag body starts at j, or len(src).
func skipRaw(src string, j int) int {
	for {
		k := strings.Index(src[j:], "{%")
		if k < 0 {
			return len(src)
		}
		k += j
		body := strings.TrimLeft(strings.TrimPrefix(src[k+2:], "-"), " \t\n\r")
		if strings.HasPrefix(body, "endraw") {
			if e := strings.Index(src[k:], "%}"); e >= 0 {
				return k + e + 2
			}
			return len(src)
		}
		j = k + 2
	}
}

// skipString returns the index after the string literal starting at j.
func skipString(src string, j int) int {
	q := src[j]
	j++
	for j < len(src) {
		switch src[j] {
		case '\\':
			j += 2
			continue
		case q:
			return j + 1
		}
		j++
	}
	return len(src)
}

func isIdentByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_'
}
