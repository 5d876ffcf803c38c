// Package jsonscan picks a few fields out of a JSON document without
// allocating: values are slices of the input, strings are decoded into a
// buffer the caller reuses. It validates what it walks (Parse validates the
// whole document), so a malformed chunk is an error, as it is for json.loads.
package jsonscan

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the type of a JSON value.
type Kind uint8

// The kinds of JSON values.
const (
	Invalid Kind = iota
	Null
	False
	True
	Number
	String
	Object
	Array
)

var kindNames = [...]string{"invalid", "null", "false", "true", "number", "string", "object", "array"}

func (k Kind) String() string { return kindNames[k] }

// maxDepth bounds nesting, as Python's recursion limit does for json.loads.
const maxDepth = 1000

// Value is one JSON value: Raw is its exact text in the document. Values
// come from Parse or from walking one; the walks trust that Parse checked
// the text (given anything else they stop early, but never panic).
type Value struct {
	Kind Kind
	Raw  []byte
}

// SyntaxError is a malformed document; Offset counts bytes from 0.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset+1, e.Msg)
}

// Parse validates doc as one JSON value with optional surrounding whitespace.
// Like Python's json.loads it accepts NaN, Infinity and -Infinity.
func Parse(doc []byte) (Value, error) {
	i := skipSpace(doc, 0)
	if i == len(doc) {
		return Value{}, &SyntaxError{i, "empty document"}
	}
	end, kind, err := skip(doc, i, 0)
	if err != nil {
		return Value{}, err
	}
	if j := skipSpace(doc, end); j != len(doc) {
		return Value{}, &SyntaxError{j, "data after the value: " + quoteByte(doc[j])}
	}
	return Value{Kind: kind, Raw: doc[i:end]}, nil
}

// ParseObject is Parse for a document expected to be an object: in the
// same pass it calls fn with each top-level member (key as written, see
// KeyIs). fn may see members of a document that later proves malformed. A
// valid document that is not an object is returned with no call to fn.
func ParseObject(doc []byte, fn func(key []byte, v Value)) (Value, error) {
	i := skipSpace(doc, 0)
	if i == len(doc) || doc[i] != '{' {
		return Parse(doc)
	}
	start := i
	i = skipSpace(doc, i+1)
	if i < len(doc) && doc[i] == '}' {
		i++
	} else {
		for {
			if i >= len(doc) || doc[i] != '"' {
				return Value{}, &SyntaxError{i, "expected a key"}
			}
			kend, err := skipString(doc, i)
			if err != nil {
				return Value{}, err
			}
			j := skipSpace(doc, kend)
			if j >= len(doc) || doc[j] != ':' {
				return Value{}, &SyntaxError{j, "expected ':'"}
			}
			j = skipSpace(doc, j+1)
			vend, kind, err := skip(doc, j, 1)
			if err != nil {
				return Value{}, err
			}
			fn(doc[i+1:kend-1], Value{Kind: kind, Raw: doc[j:vend]})
			i = skipSpace(doc, vend)
			if i >= len(doc) {
				return Value{}, &SyntaxError{i, "unexpected end in object"}
			}
			if doc[i] == '}' {
				i++
				break
			}
			if doc[i] != ',' {
				return Value{}, &SyntaxError{i, "expected ',' or '}'"}
			}
			i = skipSpace(doc, i+1)
		}
	}
	if j := skipSpace(doc, i); j != len(doc) {
		return Value{}, &SyntaxError{j, "data after the value: " + quoteByte(doc[j])}
	}
	return Value{Kind: Object, Raw: doc[start:i]}, nil
}

// ObjectIter walks the members of an object.
type ObjectIter struct {
	d []byte
	i int
	n int
}

// Members returns an iterator over v's members; it yields nothing when v is
// not an object.
func (v Value) Members() ObjectIter {
	if v.Kind != Object {
		return ObjectIter{i: -1}
	}
	return ObjectIter{d: v.Raw, i: 1}
}

// Next returns the next member: its key as written (between the quotes,
// escapes not decoded; compare it with KeyIs) and its value.
func (it *ObjectIter) Next() (key []byte, val Value, ok bool) {
	if it.i < 0 {
		return nil, Value{}, false
	}
	d := it.d
	i := skipSpace(d, it.i)
	if it.n > 0 {
		if i >= len(d) || d[i] != ',' {
			it.i = -1
			return nil, Value{}, false
		}
		i = skipSpace(d, i+1)
	}
	if i >= len(d) || d[i] != '"' {
		it.i = -1
		return nil, Value{}, false
	}
	kend := endString(d, i)
	j := skipSpace(d, kend)
	if j >= len(d) || d[j] != ':' || kend-i < 2 {
		it.i = -1
		return nil, Value{}, false
	}
	j = skipSpace(d, j+1)
	vend, kind := skipTrusted(d, j)
	it.i = vend
	it.n++
	return d[i+1 : kend-1], Value{Kind: kind, Raw: d[j:vend]}, true
}

// ArrayIter walks the elements of an array.
type ArrayIter struct {
	d []byte
	i int
	n int
}

// Elements returns an iterator over v's elements; it yields nothing when v
// is not an array.
func (v Value) Elements() ArrayIter {
	if v.Kind != Array {
		return ArrayIter{i: -1}
	}
	return ArrayIter{d: v.Raw, i: 1}
}

// Next returns the next element.
func (it *ArrayIter) Next() (Value, bool) {
	if it.i < 0 {
		return Value{}, false
	}
	d := it.d
	i := skipSpace(d, it.i)
	if it.n > 0 {
		if i >= len(d) || d[i] != ',' {
			it.i = -1
			return Value{}, false
		}
		i = skipSpace(d, i+1)
	} else if i < len(d) && d[i] == ']' {
		it.i = -1
		return Value{}, false
	}
	if i >= len(d) {
		it.i = -1
		return Value{}, false
	}
	end, kind := skipTrusted(d, i)
	it.i = end
	it.n++
	return Value{Kind: kind, Raw: d[i:end]}, true
}

// Get returns the value of the last member named key (a Python dict keeps
// the last of repeated keys), if v is an object that has one.
func (v Value) Get(key string) (Value, bool) {
	it := v.Members()
	var found Value
	ok := false
	for k, val, more := it.Next(); more; k, val, more = it.Next() {
		if KeyIs(k, key) {
			found, ok = val, true
		}
	}
	return found, ok
}

// First returns the first element of an array.
func (v Value) First() (Value, bool) {
	it := v.Elements()
	return it.Next()
}

// IsNull reports whether v is null or absent (the zero Value).
func (v Value) IsNull() bool { return v.Kind == Null || v.Kind == Invalid }

// Truthy is Python's truth value of the decoded value: false for null,
// false, 0, "", {} and [].
func (v Value) Truthy() bool {
	switch v.Kind {
	case True:
		return true
	case String:
		return len(v.Raw) > 2
	case Object, Array:
		for i := 1; i < len(v.Raw)-1; i++ {
			if !isSpace(v.Raw[i]) {
				return true
			}
		}
		return false
	case Number:
		f, ok := v.Float()
		return ok && f != 0
	}
	return false
}

// AppendString appends the decoded string to dst. A lone surrogate becomes
// U+FFFD. It appends nothing when v is not a string.
func (v Value) AppendString(dst []byte) []byte {
	if v.Kind != String || len(v.Raw) < 2 {
		return dst
	}
	return appendUnquoted(dst, v.Raw[1:len(v.Raw)-1])
}

// Int returns an integral number as an int64: 12, -3, 12.0 and 1e3 qualify.
func (v Value) Int() (int64, bool) {
	if v.Kind != Number {
		return 0, false
	}
	r := v.Raw
	neg := len(r) > 0 && r[0] == '-'
	if neg {
		r = r[1:]
	}
	var n uint64
	digits := len(r) > 0
	for _, c := range r {
		if c < '0' || c > '9' {
			digits = false
			break
		}
		n = n*10 + uint64(c-'0')
	}
	switch {
	case digits && len(r) <= 18:
		if neg {
			return -int64(n), true
		}
		return int64(n), true
	case digits:
		i, err := strconv.ParseInt(string(v.Raw), 10, 64)
		return i, err == nil
	}
	f, ok := v.Float()
	if !ok || f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

// Float returns a number as a float64.
func (v Value) Float() (float64, bool) {
	if v.Kind != Number {
		return 0, false
	}
	switch string(v.Raw) {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	f, err := strconv.ParseFloat(string(v.Raw), 64)
	if err != nil && !isRange(err) {
		return 0, false
	}
	return f, true
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// KeyIs reports whether a key as written (escapes not decoded) names name.
func KeyIs(raw []byte, name string) bool {
	if len(raw) == len(name) {
		if string(raw) == name {
			return true
		}
	}
	if len(raw) < len(name) {
		return false
	}
	hasEscape := false
	for _, c := range raw {
		if c == '\\' {
			hasEscape = true
			break
		}
	}
	if !hasEscape || len(name) > 64 {
		return false
	}
	var buf [64]byte
	dec := appendUnquoted(buf[:0], raw)
	return string(dec) == name
}

// AppendUnquoted appends the decoded inside of a string literal that has
// been validated (quotes excluded). A lone surrogate escape becomes
// U+FFFD. Given a broken escape, it appends the rest as it is.
func AppendUnquoted(dst, s []byte) []byte { return appendUnquoted(dst, s) }

func appendUnquoted(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			j := i + 1
			for j < len(s) && s[j] != '\\' {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
			continue
		}
		if i+1 >= len(s) {
			return append(dst, s[i:]...)
		}
		if e := s[i+1]; e != 'u' {
			if r, ok := Unescape(e); ok {
				dst = append(dst, r)
			} else {
				dst = append(dst, e)
			}
			i += 2
			continue
		}
		r, ok := Hex4(s, i+2)
		if !ok {
			return append(dst, s[i:]...)
		}
		i += 6
		if utf16.IsSurrogate(r) {
			if r2, ok := Hex4(s, i+2); ok && i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
				if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
					dst = utf8.AppendRune(dst, pair)
					i += 6
					continue
				}
			}
			r = utf8.RuneError
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

// UnquoteAt validates the string literal that starts at d[i] (a '"') and
// appends its decoded value to dst (a lone surrogate escape becomes
// U+FFFD, as encoding/json has it). end is the offset just past the
// closing quote; a malformed literal is a *SyntaxError.
func UnquoteAt(dst, d []byte, i int) (out []byte, end int, err error) {
	end, err = skipString(d, i)
	if err != nil {
		return dst, end, err
	}
	return appendUnquoted(dst, d[i+1:end-1]), end, nil
}

// IsString reports whether raw is exactly one valid JSON string literal,
// quotes included.
func IsString(raw []byte) bool {
	if len(raw) < 2 || raw[0] != '"' {
		return false
	}
	end, err := skipString(raw, 0)
	return err == nil && end == len(raw)
}
