package report

import (
	"strconv"
	"strings"

	"benchserve/internal/py/pyjson"
	"benchserve/metrics"
)

const perSessionTitle = "Per session"

// perSessionRows are the Per session section's lines: the sessions'
// counts, durations and turns, then the time between turns, the client's
// lag over the due times and the sessions' arrival lag.
func perSessionRows(ps *metrics.PerSession) []Row {
	d := ps.Duration
	var by []string
	for n, c := range ps.ByTurns {
		if c > 0 {
			by = append(by, strconv.Itoa(n)+": "+strconv.Itoa(c))
		}
	}
	return []Row{
		{"Sessions started:", strconv.Itoa(ps.Started)},
		{"Sessions completed / truncated:", strconv.Itoa(ps.Completed) + " / " + strconv.Itoa(ps.Truncated)},
		{"Session duration mean/med/P99 (ms):", F(d.Mean) + " / " + F(d.Median) + " / " + F(d.P99)},
		{"Mean turns completed:", F(ps.TurnsMean)},
		{"Sessions by turns completed:", strings.Join(by, ", ")},
		{"Between turns mean/med/P99/max (ms):", fourStats(ps.Between)},
		{"Turn lag mean/med/P99/max (ms):", fourStats(ps.Lag)},
		{"Arrival lag mean/med/P99/max (ms):", fourStats(ps.ArrivalLag)},
	}
}

func fourStats(s metrics.Stats) string {
	return F(s.Mean) + " / " + F(s.Median) + " / " + F(s.P99) + " / " + F(s.Max)
}

// perSessionKey is the per_session key: an object of the same figures.
func perSessionKey(ps *metrics.PerSession) []byte {
	o := &pyjson.Object{}
	o.Set("started", pyjson.Int(ps.Started))
	o.Set("completed", pyjson.Int(ps.Completed))
	o.Set("truncated", pyjson.Int(ps.Truncated))
	o.Set("mean_duration_ms", pyjson.Float(ps.Duration.Mean))
	o.Set("median_duration_ms", pyjson.Float(ps.Duration.Median))
	o.Set("p99_duration_ms", pyjson.Float(ps.Duration.P99))
	o.Set("max_duration_ms", pyjson.Float(ps.Duration.Max))
	o.Set("mean_turns_completed", pyjson.Float(ps.TurnsMean))
	o.Set("sessions_by_turns_completed", pyjson.Ints(ps.ByTurns))
	o.Set("turns_after_first", pyjson.Int(ps.Gaps))
	for _, m := range []struct {
		name string
		st   metrics.Stats
	}{{"time_between_turns", ps.Between}, {"turn_lag", ps.Lag}, {"arrival_lag", ps.ArrivalLag}} {
		o.Set("mean_"+m.name+"_ms", pyjson.Float(m.st.Mean))
		o.Set("median_"+m.name+"_ms", pyjson.Float(m.st.Median))
		o.Set("p99_"+m.name+"_ms", pyjson.Float(m.st.P99))
		o.Set("max_"+m.name+"_ms", pyjson.Float(m.st.Max))
	}
	return o.Bytes()
}
