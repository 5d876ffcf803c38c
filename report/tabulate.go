package report

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"benchserve/internal/py/pyfmt"
)

// GithubTable returns what Python's tabulate(rows, headers,
// tablefmt="github") returns, without a trailing newline: tabulate 0.8.9 as
// Debian ships it, which 0.9.0 and 0.10.0 print alike (tabulate's master
// after 0.10.0 adds pipe's alignment colons to the rule). A cell is an int,
// a float64, a string or nil (Python's None, printed empty); any other value
// is printed with fmt.Sprint and typed as that string would be.
//
// Each column is typed over its cells as tabulate types it: all ints (or
// int strings) → int, all numbers (or number strings) → float, anything else
// → str. A float column is re-printed with format(float(v), "g"), so a
// pre-formatted "123456.79" prints as 123457; an int column prints its
// cells as given. Numbers are aligned on the decimal point and flushed
// right, strings are stripped and flushed left, headers follow their
// column. A column is as wide as its widest cell and at least its header
// plus 2, with one space of padding each side.
//
// Not reproduced: ANSI colour codes and terminal links (tabulate leaves them
// out of widths), wide characters (wcwidth), and Python's limit of 4300
// digits on int(str); widths count runes. "True" or "False" in a float
// column, where tabulate raises ValueError, is printed as given.
func GithubTable(headers []string, rows [][]any) string {
	ncols := 0
	for _, r := range rows {
		ncols = max(ncols, len(r))
	}
	if ncols == 0 {
		rows = nil // [[]] prints as [] does: headers only
	}
	// tabulate pads missing headers on the left, judged by the first row,
	// and its zips drop columns beyond the headers (or headers beyond the
	// columns).
	if len(headers) > 0 && len(rows) > 0 && len(headers) < len(rows[0]) {
		headers = append(make([]string, len(rows[0])-len(headers)), headers...)
	}
	switch {
	case len(headers) == 0 && len(rows) == 0:
		return ""
	case len(rows) == 0:
		ncols = len(headers)
	case len(headers) > 0:
		ncols = min(ncols, len(headers))
		headers = headers[:ncols]
	}

	cols := make([][]string, ncols) // aligned cells, column by column
	widths := make([]int, ncols)
	numeric := make([]bool, ncols)
	for c := range ncols {
		cells := make([]any, len(rows))
		for i, r := range rows {
			if c < len(r) {
				cells[i] = tabCell(r[c])
			}
		}
		minw := 0
		if len(headers) > 0 {
			minw = tabWidth(headers[c]) + 2 // tabulate's MIN_PADDING
		}
		cols[c], widths[c], numeric[c] = tabColumn(cells, minw)
	}

	var b strings.Builder
	line := func(cells func(c int) string) {
		b.WriteByte('|')
		for c := range ncols {
			b.WriteByte(' ')
			b.WriteString(cells(c))
			b.WriteString(" |")
		}
	}
	if len(headers) > 0 {
		line(func(c int) string {
			if numeric[c] {
				return tabPadLeft(headers[c], widths[c])
			}
			return tabPadRight(headers[c], widths[c])
		})
		b.WriteByte('\n')
	}
	// The github format's line above the table is hidden under headers,
	// so a table without headers starts with it.
	b.WriteByte('|')
	for c := range ncols {
		b.WriteString(strings.Repeat("-", widths[c]+2))
		b.WriteByte('|')
	}
	for i := range rows {
		b.WriteByte('\n')
		line(func(c int) string { return cols[c][i] })
	}
	return b.String()
}

// Column types in tabulate's order of generality (_more_generic).
const (
	tabNone = iota
	tabBool
	tabInt
	tabFloat
	tabStr
)

// tabColumn types, formats and aligns one column's cells; it returns the
// cells padded to the column's width, that width, and whether the column
// is numeric (aligned on the decimal point, header flushed right).
func tabColumn(cells []any, minw int) ([]string, int, bool) {
	typ := tabBool // tabulate's reduce starts from bool: all-None is bool
	for _, v := range cells {
		typ = max(typ, tabType(v))
	}
	out := make([]string, len(cells))
	for i, v := range cells {
		out[i] = tabFormat(v, typ)
	}
	numeric := typ == tabInt || typ == tabFloat
	if numeric {
		// Pad the right so the decimal points line up; no strip here.
		decs := make([]int, len(out))
		most := -1
		for i, s := range out {
			decs[i] = tabAfterPoint(s)
			most = max(most, decs[i])
		}
		for i := range out {
			out[i] += strings.Repeat(" ", most-decs[i])
		}
	} else {
		for i := range out {
			out[i] = strings.TrimFunc(out[i], tabIsSpace)
		}
	}
	width := minw
	for _, s := range out {
		width = max(width, tabWidth(s))
	}
	for i := range out {
		if numeric {
			out[i] = tabPadLeft(out[i], width)
		} else {
			out[i] = tabPadRight(out[i], width)
		}
	}
	return out, width, numeric
}

// tabCell keeps the kinds of cell GithubTable types and prints anything else.
func tabCell(v any) any {
	switch v.(type) {
	case nil, int, float64, string:
		return v
	}
	return fmt.Sprint(v)
}

// tabType is tabulate's _type: bool strings first, then int, then float.
func tabType(v any) int {
	switch v := v.(type) {
	case nil:
		return tabNone
	case int:
		return tabInt
	case float64:
		return tabFloat
	case string:
		switch {
		case v == "True" || v == "False":
			return tabBool
		case tabIsInt(v):
			return tabInt
		case tabIsNumber(v):
			return tabFloat
		}
	}
	return tabStr
}

// tabFormat is tabulate's _format with floatfmt "g" and missingval "".
func tabFormat(v any, typ int) string {
	switch v := v.(type) {
	case int:
		if typ == tabFloat {
			return pyfmt.G(float64(v))
		}
		return strconv.Itoa(v)
	case float64:
		if typ == tabFloat {
			return pyfmt.G(v)
		}
		return pyfmt.Float(v) // str(float) in a str column
	case string:
		if typ == tabFloat {
			if f, err := pyfmt.ParseFloat(v); err == nil {
				return pyfmt.G(f)
			}
		}
		return v
	}
	return "" // nil: tabulate's missingval
}

// tabIsInt is tabulate's _isint for a string: Python's int(s) accepts it
// (of any size).
func tabIsInt(s string) bool {
	_, err := pyfmt.ParseInt(s)
	return err == nil || errors.Is(err, strconv.ErrRange)
}

// tabIsNumber is tabulate's _isnumber for a string: float(s) accepts it, and
// an infinite or NaN value is spelt exactly inf, -inf or nan (any case), so
// "1e999" and "infinity" are text.
func tabIsNumber(s string) bool {
	f, err := pyfmt.ParseFloat(s)
	if err != nil {
		return false
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		switch strings.ToLower(s) {
		case "inf", "-inf", "nan":
			return true
		}
		return false
	}
	return true
}

// tabAfterPoint is tabulate's _afterpoint: the runes after the last '.' (or,
// with none, after the last 'e': "1e+07" counts 3), -1 for an integer or
// text.
func tabAfterPoint(s string) int {
	if !tabIsNumber(s) || tabIsInt(s) {
		return -1
	}
	pos := strings.LastIndexByte(s, '.')
	if pos < 0 {
		pos = strings.LastIndexAny(s, "eE")
	}
	if pos < 0 {
		return -1
	}
	return tabWidth(s[pos+1:])
}

// tabIsSpace is Python's str.isspace for one rune, which str.strip uses: Go's
// unicode.IsSpace plus the ASCII separators U+001C to U+001F.
func tabIsSpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

func tabWidth(s string) int { return utf8.RuneCountInString(s) }

func tabPadLeft(s string, w int) string {
	return strings.Repeat(" ", max(0, w-tabWidth(s))) + s
}

func tabPadRight(s string, w int) string {
	return s + strings.Repeat(" ", max(0, w-tabWidth(s)))
}
