package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"benchserve/internal/jsonscan"
	"benchserve/internal/py/pyjson"
)

// Threshold is one --threshold: a result key, a comparison and a limit
// ("p99_ttft_ms<500").
type Threshold struct {
	Expr  string
	Key   string
	Op    string
	Limit float64
}

// Outcome is a threshold checked against a result. Value is nil when the
// result has no number for the key (null, as accept_length without
// speculative decoding): such a threshold fails, so that a gate which
// could not be checked never passes.
type Outcome struct {
	Threshold
	Value *float64
	Pass  bool
}

// ops in the order they are tried: two-character operators first.
var ops = []string{"<=", ">=", "==", "!=", "<", ">"}

// ParseThreshold parses "KEY OP NUMBER" (spaces allowed around the
// operator), OP one of <, <=, >, >=, ==, !=.
func ParseThreshold(expr string) (Threshold, error) {
	at, op := -1, ""
	for _, o := range ops {
		if i := strings.Index(expr, o); i >= 0 && (at < 0 || i < at || (i == at && len(o) > len(op))) {
			at, op = i, o
		}
	}
	if at < 0 {
		return Threshold{}, fmt.Errorf("--threshold %q: expected KEY OP NUMBER with OP one of <, <=, >, >=, ==, != (e.g. p99_ttft_ms<500)", expr)
	}
	key := strings.TrimSpace(expr[:at])
	num := strings.TrimSpace(expr[at+len(op):])
	if key == "" || strings.IndexFunc(key, func(r rune) bool {
		return !(r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) >= 0 {
		return Threshold{}, fmt.Errorf("--threshold %q: %q is not a result key (e.g. p99_ttft_ms<500)", expr, key)
	}
	limit, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(limit) {
		return Threshold{}, fmt.Errorf("--threshold %q: %q is not a number", expr, num)
	}
	return Threshold{Expr: expr, Key: key, Op: op, Limit: limit}, nil
}

// CheckKeys refuses thresholds on keys the result will not have, naming
// the keys they may use.
func CheckKeys(ts []Threshold, keys []string) error {
	known := map[string]bool{}
	for _, k := range keys {
		known[k] = true
	}
	for _, t := range ts {
		if !known[t.Key] {
			return fmt.Errorf("--threshold %q: no numeric result key %q; keys: %s", t.Expr, t.Key, strings.Join(keys, ", "))
		}
	}
	return nil
}

// NumericKeys are the keys of a result line whose values are numbers, in
// the line's order, and their values.
func NumericKeys(line []byte) ([]string, map[string]float64) {
	var keys []string
	vals := map[string]float64{}
	var buf []byte
	jsonscan.ParseObject(line, func(raw []byte, v jsonscan.Value) {
		f, ok := v.Float()
		if !ok {
			return
		}
		buf = jsonscan.AppendUnquoted(buf[:0], raw)
		k := string(buf)
		if _, seen := vals[k]; !seen {
			keys = append(keys, k)
		}
		vals[k] = f
	})
	return keys, vals
}

// Evaluate checks each threshold against the numeric keys of line.
func Evaluate(ts []Threshold, line []byte) []Outcome {
	_, vals := NumericKeys(line)
	out := make([]Outcome, len(ts))
	for i, t := range ts {
		out[i].Threshold = t
		v, ok := vals[t.Key]
		if !ok {
			continue
		}
		out[i].Value = &v
		out[i].Pass = compare(v, t.Op, t.Limit)
	}
	return out
}

func compare(v float64, op string, limit float64) bool {
	switch op {
	case "<":
		return v < limit
	case "<=":
		return v <= limit
	case ">":
		return v > limit
	case ">=":
		return v >= limit
	case "==":
		return v == limit
	case "!=":
		return v != limit
	}
	return false
}

// Failed lists the expressions of the outcomes that failed.
func Failed(os []Outcome) []string {
	var bad []string
	for _, o := range os {
		if !o.Pass {
			bad = append(bad, o.Expr)
		}
	}
	return bad
}

// thresholdRows are the console lines of the Thresholds section.
func thresholdRows(os []Outcome) []Row {
	rows := make([]Row, len(os))
	for i, o := range os {
		v := "FAIL (no value)"
		if o.Value != nil {
			word := "FAIL"
			if o.Pass {
				word = "pass"
			}
			v = word + " (" + strconv.FormatFloat(*o.Value, 'g', 6, 64) + ")"
		}
		rows[i] = Row{Label: o.Expr, Value: v}
	}
	return rows
}

// thresholdKeys are the outcomes as JSONL keys: thresholds, a list of
// {"expr", "value", "pass"}, and thresholds_passed.
func thresholdKeys(o *pyjson.Object, os []Outcome) {
	b := []byte{'['}
	all := true
	for i, t := range os {
		if i > 0 {
			b = append(b, ", "...)
		}
		e := &pyjson.Object{}
		e.Set("expr", pyjson.String(t.Expr))
		e.Set("key", pyjson.String(t.Key))
		e.Set("op", pyjson.String(t.Op))
		e.Set("limit", pyjson.Float(t.Limit))
		if t.Value != nil {
			e.Set("value", pyjson.Float(*t.Value))
		} else {
			e.Set("value", pyjson.Null)
		}
		e.Set("pass", pyjson.Bool(t.Pass))
		b = e.Append(b)
		all = all && t.Pass
	}
	o.Set("thresholds", append(b, ']'))
	o.Set("thresholds_passed", pyjson.Bool(all))
}
