package report

import (
	"strconv"

	"benchserve/internal/py/pyjson"
	"benchserve/metrics"
)

// URLShare is one --base-url's share of a run of several: its URL, with
// any credentials redacted, and its figures.
type URLShare struct {
	URL string
	metrics.URLFigures
}

// perURLRows are the Per URL section's lines: each URL, then its figures.
func perURLRows(us []URLShare) []Row {
	var rows []Row
	for i, u := range us {
		rows = append(rows,
			Row{"URL " + strconv.Itoa(i) + ":", u.URL},
			Row{"  Successful requests:", strconv.Itoa(u.Completed)},
			Row{"  Failed requests:", strconv.Itoa(u.Failed)},
			Row{"  Request throughput (req/s):", F(u.RequestThroughput)},
			Row{"  Output token throughput (tok/s):", F(u.OutputThroughput)},
		)
		rows = append(rows, latencyRows(u.TTFT, u.E2E)...)
	}
	return rows
}

// perURLKey is the per_url key: a list of one object per URL, in
// --base-url's order.
func perURLKey(us []URLShare) []byte {
	b := []byte{'['}
	for i, u := range us {
		if i > 0 {
			b = append(b, ", "...)
		}
		o := &pyjson.Object{}
		o.Set("url", pyjson.String(u.URL))
		o.Set("completed", pyjson.Int(u.Completed))
		o.Set("failed", pyjson.Int(u.Failed))
		o.Set("request_throughput", pyjson.Float(u.RequestThroughput))
		o.Set("output_throughput", pyjson.Float(u.OutputThroughput))
		o.Set("total_output_tokens", pyjson.Int(u.OutputTokens))
		latencyKeys(o, u.TTFT, u.E2E)
		b = o.Append(b)
	}
	return append(b, ']')
}
