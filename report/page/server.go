package page

import (
	"fmt"
	"strings"

	"benchserve/metrics"
)

// ServerSeries is a --server-metrics-file: one read per row, "t" (seconds
// after the run's start) and each gauge's and counter's value by key.
type ServerSeries struct {
	Name string
	Rows []map[string]float64
}

// ReadServerSeries reads a --server-metrics-file.
func ReadServerSeries(path string) (ServerSeries, error) {
	lines, err := ReadLines(path)
	if err != nil {
		return ServerSeries{}, err
	}
	s := ServerSeries{Name: path}
	for _, l := range lines {
		if _, ok := l.Num["t"]; !ok {
			return s, fmt.Errorf("%s: not a --server-metrics-file (a line without \"t\")", path)
		}
		s.Rows = append(s.Rows, l.Num)
	}
	return s, nil
}

// serverCharts draw a server's reads over time: requests running and
// waiting, KV-cache usage, and generated tokens a second (the counter's
// rate between reads), under whichever of the engines' names
// (metrics.Engines) the server exports (a name without labels matches
// every series of it).
func serverCharts(id string, s ServerSeries) []Chart {
	pick := func(names ...string) (string, bool) {
		for _, n := range names {
			for k := range s.Rows[len(s.Rows)-1] {
				if k == n || strings.HasPrefix(k, n+"{") {
					return k, true
				}
			}
		}
		return "", false
	}
	series := func(name, key string, scale float64, rate bool) Series {
		out := Series{Name: name}
		for i, r := range s.Rows {
			v, ok := r[key]
			if !ok {
				continue
			}
			if rate {
				if i == 0 {
					continue
				}
				dt := r["t"] - s.Rows[i-1]["t"]
				prev, ok := s.Rows[i-1][key]
				if !ok || dt <= 0 || v < prev {
					continue
				}
				v = (v - prev) / dt
			}
			out.X, out.Y = append(out.X, r["t"]), append(out.Y, v*scale)
		}
		return out
	}
	var out []Chart
	q := Chart{ID: id + "-queue", Title: "Server: requests running and waiting", XLabel: "time since the start (s)", YLabel: "requests"}
	if k, ok := pick(metrics.Names(func(e metrics.Engine) string { return e.Running })...); ok {
		q.Series = append(q.Series, series("running", k, 1, false))
	}
	if k, ok := pick(metrics.Names(func(e metrics.Engine) string { return e.Waiting })...); ok {
		q.Series = append(q.Series, series("waiting", k, 1, false))
	}
	if len(q.Series) > 0 {
		out = append(out, q)
	}
	if k, ok := pick(metrics.Names(func(e metrics.Engine) string { return e.KVUsage })...); ok {
		out = append(out, Chart{ID: id + "-kv", Title: "Server: KV-cache usage", XLabel: "time since the start (s)", YLabel: "KV cache in use (%)",
			Series: []Series{series("KV cache", k, 100, false)}})
	}
	if k, ok := pick(metrics.Names(func(e metrics.Engine) string { return e.GenTokens })...); ok {
		out = append(out, Chart{ID: id + "-gen", Title: "Server: generated tokens per second", XLabel: "time since the start (s)", YLabel: "tokens/s (between reads)",
			Series: []Series{series("generated tok/s", k, 1, true)}})
	}
	return out
}
