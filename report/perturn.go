package report

import (
	"strconv"

	"benchserve/internal/py/pyjson"
	"benchserve/metrics"
)

const perTurnTitle = "Per turn"

// perTurnRows are the Per turn section's lines: each turn index, then the
// time between turns and the client's lag over the due times.
func perTurnRows(pt *metrics.PerTurn) []Row {
	var rows []Row
	for _, f := range pt.Turns {
		rows = append(rows, Row{"Turn " + strconv.Itoa(f.Turn) + ":", strconv.Itoa(f.Completed) + " successful, " + strconv.Itoa(f.Failed) + " failed"})
		rows = append(rows, latencyRows(f.TTFT, f.E2E)...)
		rows = append(rows, Row{"  Mean input tokens:", F(f.InputTokens)})
		if pt.Cached {
			rows = append(rows, Row{"  Mean cached tokens:", F(f.CachedTokens)})
		}
	}
	b, l := pt.Between, pt.Lag
	return append(rows,
		Row{"Turns after the first sent:", strconv.Itoa(pt.Gaps)},
		Row{"Between turns mean/med/P99/max (ms):", F(b.Mean) + " / " + F(b.Median) + " / " + F(b.P99) + " / " + F(b.Max)},
		Row{"Turn lag mean / P99 / max (ms):", F(l.Mean) + " / " + F(l.P99) + " / " + F(l.Max)},
	)
}

// perTurnKey is the per_turn key: an object with a list of one object
// per turn index, and the time between turns.
func perTurnKey(pt *metrics.PerTurn) []byte {
	turns := []byte{'['}
	for i, f := range pt.Turns {
		if i > 0 {
			turns = append(turns, ", "...)
		}
		o := &pyjson.Object{}
		o.Set("turn", pyjson.Int(f.Turn))
		o.Set("completed", pyjson.Int(f.Completed))
		o.Set("failed", pyjson.Int(f.Failed))
		latencyKeys(o, f.TTFT, f.E2E)
		o.Set("mean_input_tokens", pyjson.Float(f.InputTokens))
		if pt.Cached {
			o.Set("mean_cached_tokens", pyjson.Float(f.CachedTokens))
		}
		turns = o.Append(turns)
	}
	o := &pyjson.Object{}
	o.Set("turns", append(turns, ']'))
	o.Set("turns_after_first", pyjson.Int(pt.Gaps))
	o.Set("mean_time_between_turns_ms", pyjson.Float(pt.Between.Mean))
	o.Set("median_time_between_turns_ms", pyjson.Float(pt.Between.Median))
	o.Set("p99_time_between_turns_ms", pyjson.Float(pt.Between.P99))
	o.Set("max_time_between_turns_ms", pyjson.Float(pt.Between.Max))
	o.Set("mean_turn_lag_ms", pyjson.Float(pt.Lag.Mean))
	o.Set("p99_turn_lag_ms", pyjson.Float(pt.Lag.P99))
	o.Set("max_turn_lag_ms", pyjson.Float(pt.Lag.Max))
	return o.Bytes()
}
