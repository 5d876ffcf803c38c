package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"benchserve/internal/jsonscan"
)

// jsonDoc reads a tokenizer.json quickly: encoding/json needs about a second
// for a 30 MB file, so the vocabulary and merges are read by hand, and only
// the small components go through encoding/json. text is the whole file as
// one string, so that keys without escapes are substrings of it and cost no
// allocation.
//
// The validating pass (skip) is its own: it follows serde_json, which the
// tokenizers library parses with (no NaN or Infinity, unlike
// internal/jsonscan's json.loads rules), words errors as encoding/json does
// with a line and column, and records where the outer values end. Strings,
// escapes and the walks over validated text are internal/jsonscan's.
type jsonDoc struct {
	file string
	data []byte
	text string
	// ends remembers where the outer objects and arrays end, found when skip
	// validates the document, so that reading them needs no second scan.
	ends map[int]int
}

// jsonSpan is one member of an object: its key and where its value lies.
type jsonSpan struct {
	key        string
	start, end int
}

func (d *jsonDoc) errorf(pos int, format string, args ...any) error {
	if pos > len(d.data) {
		pos = len(d.data)
	}
	line := 1 + bytes.Count(d.data[:pos], []byte{'\n'})
	col := pos - bytes.LastIndexByte(d.data[:pos], '\n')
	return fmt.Errorf("%s: line %d, column %d (byte %d): %s", d.file, line, col, pos, fmt.Sprintf(format, args...))
}

func (d *jsonDoc) ws(i int) int {
	for i < len(d.data) {
		switch d.data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skip validates the value at i and returns where it ends.
func (d *jsonDoc) skip(i int) (int, error) {
	return d.skipDepth(i, 0)
}

func (d *jsonDoc) skipDepth(i, depth int) (int, error) {
	i = d.ws(i)
	end, err := d.skipValue(i, depth)
	if err == nil && depth <= 2 && i < len(d.data) && (d.data[i] == '{' || d.data[i] == '[') {
		if d.ends == nil {
			d.ends = map[int]int{}
		}
		d.ends[i] = end
	}
	return end, err
}

func (d *jsonDoc) skipValue(i, depth int) (int, error) {
	if depth > 1000 {
		return 0, d.errorf(i, "JSON nested too deeply")
	}
	i = d.ws(i)
	if i >= len(d.data) {
		return 0, d.errorf(i, "unexpected end of JSON input")
	}
	switch c := d.data[i]; {
	case c == '"':
		_, end, err := d.str(i)
		return end, err
	case c == '{':
		i = d.ws(i + 1)
		if i < len(d.data) && d.data[i] == '}' {
			return i + 1, nil
		}
		for {
			i = d.ws(i)
			if i >= len(d.data) {
				return 0, d.errorf(i, "unexpected end of JSON input")
			}
			if d.data[i] != '"' {
				return 0, d.errorf(i, "expected a string key, found %q", d.data[i])
			}
			_, end, err := d.str(i)
			if err != nil {
				return 0, err
			}
			i = d.ws(end)
			if i >= len(d.data) {
				return 0, d.errorf(i, "unexpected end of JSON input")
			}
			if d.data[i] != ':' {
				return 0, d.errorf(i, "expected ':' after object key, found %q", d.data[i])
			}
			if i, err = d.skipDepth(i+1, depth+1); err != nil {
				return 0, err
			}
			if i, err = d.sep(i, '}'); err != nil || i < 0 {
				return -i, err
			}
		}
	case c == '[':
		i = d.ws(i + 1)
		if i < len(d.data) && d.data[i] == ']' {
			return i + 1, nil
		}
		for {
			var err error
			if i, err = d.skipDepth(i, depth+1); err != nil {
				return 0, err
			}
			if i, err = d.sep(i, ']'); err != nil || i < 0 {
				return -i, err
			}
		}
	case c == 't':
		return d.lit(i, "true")
	case c == 'f':
		return d.lit(i, "false")
	case c == 'n':
		return d.lit(i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return d.num(i)
	default:
		return 0, d.errorf(i, "invalid character %q looking for a value", c)
	}
}

// sep reads the ',' or closing bracket after a member: it returns the
// position after ',' or, negated, the position after the closing bracket.
func (d *jsonDoc) sep(i int, closer byte) (int, error) {
	i = d.ws(i)
	if i >= len(d.data) {
		return 0, d.errorf(i, "unexpected end of JSON input")
	}
	switch d.data[i] {
	case ',':
		return i + 1, nil
	case closer:
		return -(i + 1), nil
	}
	return 0, d.errorf(i, "expected ',' or %q, found %q", closer, d.data[i])
}

func (d *jsonDoc) lit(i int, word string) (int, error) {
	if !bytes.HasPrefix(d.data[i:], []byte(word)) {
		if len(d.data)-i < len(word) && bytes.HasPrefix([]byte(word), d.data[i:]) {
			return 0, d.errorf(len(d.data), "unexpected end of JSON input")
		}
		return 0, d.errorf(i, "invalid literal, expected %s", word)
	}
	return i + len(word), nil
}

func (d *jsonDoc) num(i int) (int, error) {
	start := i
	if d.data[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if digits() == 0 {
		return 0, d.errorf(i, "invalid number")
	}
	if i < len(d.data) && d.data[i] == '.' {
		i++
		if digits() == 0 {
			return 0, d.errorf(i, "invalid number")
		}
	}
	if i < len(d.data) && (d.data[i] == 'e' || d.data[i] == 'E') {
		i++
		if i < len(d.data) && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, d.errorf(i, "invalid number")
		}
	}
	if i == start {
		return 0, d.errorf(i, "invalid number")
	}
	return i, nil
}

// str reads the string at i (which holds '"').
func (d *jsonDoc) str(i int) (string, int, error) {
	start := i + 1
	j := jsonscan.StringRun(d.data, start)
	switch {
	case j >= len(d.data):
		return "", 0, d.errorf(j, "unexpected end of JSON input in string")
	case d.data[j] == '"':
		return d.text[start:j], j + 1, nil
	case d.data[j] == '\\':
		return d.strSlow(i)
	}
	return "", 0, d.errorf(j, "invalid control character in string")
}

// strSlow decodes a string with escapes.
func (d *jsonDoc) strSlow(i int) (string, int, error) {
	b, end, err := jsonscan.UnquoteAt(nil, d.data, i)
	var se *jsonscan.SyntaxError
	if errors.As(err, &se) {
		return "", 0, d.errorf(se.Offset, "%s", se.Msg)
	}
	return string(b), end, err
}

// object returns the members of the object at i, which skip has validated.
func (d *jsonDoc) object(i int) ([]jsonSpan, error) {
	i = d.ws(i)
	if i >= len(d.data) || d.data[i] != '{' {
		return nil, d.errorf(i, "expected an object")
	}
	var out []jsonSpan
	err := d.eachMember(i, func(key string, start, end int) error {
		out = append(out, jsonSpan{key, start, end})
		return nil
	})
	return out, err
}

// eachMember calls fn for each member of the (validated) object at i.
func (d *jsonDoc) eachMember(i int, fn func(key string, start, end int) error) error {
	i = d.ws(i)
	if i >= len(d.data) || d.data[i] != '{' {
		return d.errorf(i, "expected an object")
	}
	i = d.ws(i + 1)
	if d.data[i] == '}' {
		return nil
	}
	for {
		i = d.ws(i)
		key, end, err := d.str(i)
		if err != nil {
			return err
		}
		i = d.ws(end) + 1 // ':'
		start := d.ws(i)
		end = d.skipFast(start)
		if err := fn(key, start, end); err != nil {
			return err
		}
		i = d.ws(end)
		if d.data[i] == '}' {
			return nil
		}
		i++
	}
}

// eachElement calls fn for each element of the (validated) array at i.
func (d *jsonDoc) eachElement(i int, fn func(start, end int) error) error {
	i = d.ws(i)
	if i >= len(d.data) || d.data[i] != '[' {
		return d.errorf(i, "expected an array")
	}
	i = d.ws(i + 1)
	if d.data[i] == ']' {
		return nil
	}
	for {
		start := d.ws(i)
		end := d.skipFast(start)
		if err := fn(start, end); err != nil {
			return err
		}
		i = d.ws(end)
		if d.data[i] == ']' {
			return nil
		}
		i++
	}
}

// skipFast finds the end of a value already validated by skip: from the
// ends skip recorded for the outer objects and arrays, else with
// jsonscan's walk over validated text.
func (d *jsonDoc) skipFast(i int) int {
	if end, ok := d.ends[i]; ok {
		return end
	}
	return jsonscan.End(d.data, i)
}

// int reads the integer at [start, end).
func (d *jsonDoc) int(start, end int) (int, error) {
	v, err := strconv.Atoi(d.text[start:end])
	if err != nil {
		return 0, d.errorf(start, "expected an integer, found %s", d.snippet(start, end))
	}
	return v, nil
}

func (d *jsonDoc) snippet(start, end int) string {
	if end-start > 40 {
		return d.text[start:start+40] + "..."
	}
	return d.text[start:end]
}

func (d *jsonDoc) isNull(start, end int) bool {
	return d.text[start:end] == "null"
}

// unmarshal decodes [start, end) with encoding/json, naming what in errors.
func (d *jsonDoc) unmarshal(start, end int, what string, v any) error {
	if err := json.Unmarshal(d.data[start:end], v); err != nil {
		pos := start
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case asErr(err, &te):
			pos += int(te.Offset)
			return d.errorf(pos, "%s: field %q: cannot use %s as %s", what, te.Field, te.Value, te.Type)
		case asErr(err, &se):
			pos += int(se.Offset)
		}
		return d.errorf(pos, "%s: %v", what, err)
	}
	return nil
}

// pow10 is serde_json's POW10: 1e0 … 1e308, made when a tokenizer.json
// is first read.
var pow10 = sync.OnceValue(func() (t *[309]float64) {
	t = new([309]float64)
	for i := range t {
		t[i], _ = strconv.ParseFloat("1e"+strconv.Itoa(i), 64)
	}
	return
})

// serdeFloat parses a JSON number as serde_json does without its
// float_roundtrip feature (as the tokenizers library is built): at most 19
// or 20 significant digits kept in a u64, then one multiplication or
// division by a power of ten. The result can differ from the correctly
// rounded value in the last bit, and Unigram scores must match the
// library's to the bit for ties to break the same way.
func serdeFloat(s string) (float64, bool) {
	i := 0
	neg := false
	if i < len(s) && s[i] == '-' {
		neg = true
		i++
	}
	const maxU = ^uint64(0)
	overflow := func(sig uint64, d uint64) bool {
		return sig > maxU/10 || sig == maxU/10 && d > maxU%10
	}
	var sig uint64
	exp := 0
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		d := uint64(s[i] - '0')
		if exp > 0 || overflow(sig, d) {
			exp++ // this digit and the next are dropped
		} else {
			sig = sig*10 + d
		}
		i++
		digits++
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		frac := 0
		dropping := false
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			d := uint64(s[i] - '0')
			if dropping || overflow(sig, d) {
				dropping = true
			} else {
				sig = sig*10 + d
				exp--
			}
			i++
			frac++
		}
		if frac == 0 {
			return 0, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		pos := true
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			pos = s[i] == '+'
			i++
		}
		e, n := 0, 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if e < 1<<24 {
				e = e*10 + int(s[i]-'0')
			}
			i++
			n++
		}
		if n == 0 {
			return 0, false
		}
		if pos {
			exp += e
		} else {
			exp -= e
		}
	}
	if i != len(s) {
		return 0, false
	}
	f, pow10 := float64(sig), pow10()
	for {
		a := exp
		if a < 0 {
			a = -a
		}
		if a < len(pow10) {
			if exp >= 0 {
				f *= pow10[a]
			} else {
				f /= pow10[a]
			}
			break
		}
		if f == 0 {
			break
		}
		if exp >= 0 {
			return 0, false
		}
		f /= 1e308
		exp += 308
	}
	if neg {
		f = -f
	}
	return f, true
}

// quickPair reads ["a","b"] (validated), when written plainly.
func (d *jsonDoc) quickPair(i int) (a, b string, ok bool) {
	i = d.ws(i + 1)
	if i >= len(d.data) || d.data[i] != '"' {
		return "", "", false
	}
	a, i, err := d.str(i)
	if err != nil {
		return "", "", false
	}
	i = d.ws(i)
	if i >= len(d.data) || d.data[i] != ',' {
		return "", "", false
	}
	i = d.ws(i + 1)
	if i >= len(d.data) || d.data[i] != '"' {
		return "", "", false
	}
	b, i, err = d.str(i)
	if err != nil {
		return "", "", false
	}
	i = d.ws(i)
	return a, b, i < len(d.data) && d.data[i] == ']'
}
