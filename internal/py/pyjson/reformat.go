package pyjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
)

// Reformat appends raw, a JSON text, as json.dumps(json.loads(raw)) writes
// it: key order kept (a repeated key keeps its first place and its last
// value), integers exact, other numbers as floats.
func Reformat(dst, raw []byte) ([]byte, error) {
	v, err := decodeDocument(raw)
	if err != nil {
		return dst, err
	}
	return v.append(dst), nil
}

// ParseObject parses a JSON object, keeping its key order, with every value
// re-encoded in json.dumps form.
func ParseObject(raw []byte) (*Object, error) {
	v, err := decodeDocument(raw)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(*objectValue)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	o := &Object{}
	for i, k := range obj.keys {
		o.Set(k, obj.vals[i].append(nil))
	}
	return o, nil
}

// decodeDocument decodes raw, one JSON value and nothing after it.
func decodeDocument(raw []byte) (value, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: data after the top-level value")
	}
	return v, nil
}

type value interface{ append([]byte) []byte }

// invalid words a decoder error; a text cut short (a quote the shell ate,
// a pasted fragment) says so rather than "EOF".
func invalid(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("invalid JSON: it ends early, before the value is complete")
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

type objectValue struct {
	keys []string
	vals []value
}

func (o *objectValue) append(dst []byte) []byte {
	dst = append(dst, '{')
	for i, k := range o.keys {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = AppendString(dst, k)
		dst = append(dst, ": "...)
		dst = o.vals[i].append(dst)
	}
	return append(dst, '}')
}

type arrayValue []value

func (a arrayValue) append(dst []byte) []byte {
	dst = append(dst, '[')
	for i, v := range a {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = v.append(dst)
	}
	return append(dst, ']')
}

type rawValue []byte

func (r rawValue) append(dst []byte) []byte { return append(dst, r...) }

func decodeValue(dec *json.Decoder) (value, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, invalid(err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := &objectValue{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, invalid(err)
				}
				k, _ := kt.(string)
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				replaced := false
				for i, ek := range obj.keys {
					if ek == k {
						obj.vals[i] = v
						replaced = true
						break
					}
				}
				if !replaced {
					obj.keys = append(obj.keys, k)
					obj.vals = append(obj.vals, v)
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, invalid(err)
			}
			return obj, nil
		case '[':
			var arr arrayValue
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, invalid(err)
			}
			if arr == nil {
				arr = arrayValue{}
			}
			return arr, nil
		}
		return nil, fmt.Errorf("invalid JSON: unexpected %v", t)
	case string:
		return rawValue(AppendString(nil, t)), nil
	case json.Number:
		return rawValue(number(string(t))), nil
	case bool:
		return rawValue(AppendBool(nil, t)), nil
	case nil:
		return rawValue(Null), nil
	}
	return nil, fmt.Errorf("invalid JSON: unexpected token %v", tok)
}

// number re-encodes a JSON number as Python would after json.loads: an
// integer keeps every digit (Python ints are exact), anything with a
// fraction or exponent becomes a float.
func number(s string) []byte {
	if !strings.ContainsAny(s, ".eE") {
		var b big.Int
		if _, ok := b.SetString(s, 10); ok {
			return b.Append(nil, 10)
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return []byte(s)
	}
	return AppendFloat(nil, f)
}
