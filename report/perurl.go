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
			Row{"  TTFT mean / median / P99 (ms):", F(u.TTFT.Mean) + " / " + F(u.TTFT.Median) + " / " + F(u.TTFT.P99)},
			Row{"  E2E mean / median / P99 (ms):", F(u.E2E.Mean) + " / " + F(u.E2E.Median) + " / " + F(u.E2E.P99)},
		)
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
		o.Set("mean_ttft_ms", pyjson.Float(u.TTFT.Mean))
		o.Set("median_ttft_ms", pyjson.Float(u.TTFT.Median))
		o.Set("p99_ttft_ms", pyjson.Float(u.TTFT.P99))
		o.Set("mean_e2e_latency_ms", pyjson.Float(u.E2E.Mean))
		o.Set("median_e2e_latency_ms", pyjson.Float(u.E2E.Median))
		o.Set("p99_e2e_latency_ms", pyjson.Float(u.E2E.P99))
		b = o.Append(b)
	}
	return append(b, ']')
}
