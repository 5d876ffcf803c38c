package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ardanlabs/jinja"

	"benchserve/internal/py/pyjson"
)

// jsonValue decodes one JSON value into a template value the way Python's
// json.loads does: objects keep their key order (templates dump them back
// with tojson), numbers with a '.' or an exponent are floats, others ints.
func jsonValue(data []byte) (jinja.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return jinja.Undefined(), err
	}
	if _, err := dec.Token(); err != io.EOF {
		return jinja.Undefined(), errors.New("invalid JSON: more data after the value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (jinja.Value, error) {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return jinja.Undefined(), fmt.Errorf("invalid JSON: %v", err)
	}
	switch t := tok.(type) {
	case nil:
		return jinja.None(), nil
	case bool:
		return jinja.NewBool(t), nil
	case string:
		return jinja.NewString(t), nil
	case json.Number:
		return numberValue(string(t)), nil
	case json.Delim:
		if t == '[' {
			var items []jinja.Value
			for dec.More() {
				item, err := decodeValue(dec)
				if err != nil {
					return jinja.Undefined(), err
				}
				items = append(items, item)
			}
			if _, err := dec.Token(); err != nil {
				return jinja.Undefined(), fmt.Errorf("invalid JSON: %v", err)
			}
			return jinja.NewList(items), nil
		}
		d := jinja.NewDict()
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return jinja.Undefined(), fmt.Errorf("invalid JSON: %v", err)
			}
			v, err := decodeValue(dec)
			if err != nil {
				return jinja.Undefined(), err
			}
			// A repeated key keeps its first place and its last value, as
			// a Python dict built by json.loads.
			d.AsDict().Set(key.(string), v)
		}
		if _, err := dec.Token(); err != nil {
			return jinja.Undefined(), fmt.Errorf("invalid JSON: %v", err)
		}
		return d, nil
	}
	return jinja.Undefined(), fmt.Errorf("invalid JSON: unexpected %v", tok)
}

func numberValue(s string) jinja.Value {
	if !strings.ContainsAny(s, ".eE") {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return jinja.NewInt(n)
		}
	}
	// Python keeps big ints exact; a float is the nearest we have.
	f, _ := strconv.ParseFloat(s, 64)
	return jinja.NewFloat(f)
}

// goValue converts a kwarg given from Go: json.RawMessage keeps its key
// order, other values go through jinja.FromGoValue.
func goValue(v any) (jinja.Value, error) {
	switch t := v.(type) {
	case json.RawMessage:
		return jsonValue(t)
	case jinja.Value:
		return t, nil
	case float32:
		return jinja.NewFloat(float64(t)), nil
	case int32:
		return jinja.NewInt(int64(t)), nil
	case uint:
		return jinja.NewInt(int64(t)), nil
	}
	return jinja.FromGoValue(v), nil
}

// pyDumpOptions are json.dumps' keyword arguments as transformers' tojson
// filter passes them (ensure_ascii defaults to False there).
type pyDumpOptions struct {
	ensureASCII bool
	indent      *string // nil: no newlines
	itemSep     string
	keySep      string
	sortKeys    bool
	// scratch is where strings are encoded before they are written,
	// shared by the calls for one value.
	scratch *[]byte
}

// quote writes s as a JSON string.
func (o pyDumpOptions) quote(sb *strings.Builder, s string) {
	*o.scratch = pyjson.AppendQuoted((*o.scratch)[:0], s, o.ensureASCII)
	sb.Write(*o.scratch)
}

// tojsonFilter is transformers' tojson filter:
// json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False).
func tojsonFilter(args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 {
		return jinja.Undefined(), errors.New("tojson: no value")
	}
	// Positional arguments after the value follow the signature.
	params := []string{"ensure_ascii", "indent", "separators", "sort_keys"}
	if len(args)-1 > len(params) {
		return jinja.Undefined(), fmt.Errorf("tojson() takes at most %d arguments (%d given)", len(params)+1, len(args))
	}
	given := map[string]jinja.Value{}
	for i, a := range args[1:] {
		given[params[i]] = a
	}
	for k, v := range kwargs {
		if !slices.Contains(params, k) {
			return jinja.Undefined(), fmt.Errorf("tojson() got an unexpected keyword argument '%s'", k)
		}
		if _, dup := given[k]; dup {
			return jinja.Undefined(), fmt.Errorf("tojson() got multiple values for argument '%s'", k)
		}
		given[k] = v
	}
	opt := pyDumpOptions{scratch: new([]byte)}
	if v, ok := given["ensure_ascii"]; ok {
		opt.ensureASCII = v.IsTruthy()
	}
	if v, ok := given["sort_keys"]; ok {
		opt.sortKeys = v.IsTruthy()
	}
	if v, ok := given["indent"]; ok && !v.IsNone() && !v.IsUndefined() {
		var ind string
		switch {
		case v.IsString():
			ind = v.AsString()
		case v.IsInt() || v.IsBool():
			n := int64(0)
			if v.IsInt() {
				n = v.AsInt()
			} else if v.AsBool() {
				n = 1
			}
			ind = strings.Repeat(" ", int(max(0, min(n, 1<<10))))
		default:
			return jinja.Undefined(), fmt.Errorf("tojson: indent must be an int or a string, not %s", pyTypeName(v))
		}
		opt.indent = &ind
	}
	opt.itemSep, opt.keySep = ", ", ": "
	if opt.indent != nil {
		opt.itemSep = ","
	}
	if v, ok := given["separators"]; ok && !v.IsNone() && !v.IsUndefined() {
		if !v.IsList() || v.AsList().Len() != 2 || !v.AsList().Get(0).IsString() || !v.AsList().Get(1).IsString() {
			return jinja.Undefined(), errors.New("tojson: separators must be a pair of strings")
		}
		opt.itemSep, opt.keySep = v.AsList().Get(0).AsString(), v.AsList().Get(1).AsString()
	}
	var sb strings.Builder
	if err := pyDump(&sb, args[0], opt, 0); err != nil {
		return jinja.Undefined(), err
	}
	return jinja.NewString(sb.String()), nil
}

// pyDump writes v as Python's json.dumps does.
func pyDump(sb *strings.Builder, v jinja.Value, opt pyDumpOptions, depth int) error {
	if depth > 1000 {
		return errors.New("tojson: maximum recursion depth exceeded")
	}
	newline := func(d int) {
		if opt.indent != nil {
			sb.WriteByte('\n')
			for range d {
				sb.WriteString(*opt.indent)
			}
		}
	}
	switch {
	case v.IsNone():
		sb.WriteString("null")
	case v.IsBool():
		if v.AsBool() {
			sb.WriteString("true")
		} else {
			sb.WriteString("false")
		}
	case v.IsInt():
		sb.WriteString(strconv.FormatInt(v.AsInt(), 10))
	case v.IsFloat():
		var buf [32]byte
		sb.Write(pyjson.AppendFloat(buf[:0], v.AsFloat()))
	case v.IsString():
		opt.quote(sb, v.AsString())
	case v.IsList():
		items := v.AsList().Items
		if len(items) == 0 {
			sb.WriteString("[]")
			return nil
		}
		sb.WriteByte('[')
		for i, item := range items {
			if i > 0 {
				sb.WriteString(opt.itemSep)
			}
			newline(depth + 1)
			if err := pyDump(sb, item, opt, depth+1); err != nil {
				return err
			}
		}
		newline(depth)
		sb.WriteByte(']')
	case v.IsDict():
		d := v.AsDict()
		if d.Len() == 0 {
			sb.WriteString("{}")
			return nil
		}
		keys := d.Keys
		if opt.sortKeys {
			keys = slices.Clone(keys)
			slices.Sort(keys) // Python compares str by code point, as Go by UTF-8 bytes
		}
		sb.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				sb.WriteString(opt.itemSep)
			}
			newline(depth + 1)
			opt.quote(sb, k)
			sb.WriteString(opt.keySep)
			if err := pyDump(sb, d.Data[k], opt, depth+1); err != nil {
				return err
			}
		}
		newline(depth)
		sb.WriteByte('}')
	default:
		//lint:ignore ST1005 Python's own message, byte for byte
		return fmt.Errorf("Object of type %s is not JSON serializable", pyTypeName(v))
	}
	return nil
}

// pyTypeName is the Python type name of v, for messages.
func pyTypeName(v jinja.Value) string {
	switch {
	case v.IsUndefined():
		return "Undefined"
	case v.IsNone():
		return "NoneType"
	case v.IsBool():
		return "bool"
	case v.IsInt():
		return "int"
	case v.IsFloat():
		return "float"
	case v.IsString():
		return "str"
	case v.IsList():
		return "list"
	case v.IsDict():
		return "dict"
	}
	return "function"
}
