package sim

import (
	"strconv"

	"benchserve/internal/py/pyjson"
)

// appendJSONString appends s as a JSON string as json.dumps(s,
// ensure_ascii=False) writes it, with pyjson's one escaper: non-ASCII
// characters as they are, invalid UTF-8 as U+FFFD.
func appendJSONString(b []byte, s string) []byte { return pyjson.AppendQuoted(b, s, false) }

// appendFloat writes f as JSON (shortest form that round-trips).
func appendFloat(b []byte, f float64) []byte {
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// quoted returns s as a JSON string.
func quoted(s string) []byte { return appendJSONString(nil, s) }
