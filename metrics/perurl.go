package metrics

import "benchserve/record"

// URLFigures are one server's share of a run of several --base-url.
type URLFigures struct {
	Completed, Failed int
	// OutputTokens is the completed requests' output tokens.
	OutputTokens int
	// Over the whole run's duration, so that the URLs' figures add up
	// to the run's.
	RequestThroughput, OutputThroughput float64
	// TTFT and E2E of the completed requests, in milliseconds (as the
	// run's; More is not set).
	TTFT, E2E Stats
}

// PerURL splits recs by their URL index into k shares, for a run of dur
// seconds.
func PerURL(recs []record.Record, k int, dur float64) []URLFigures {
	out := make([]URLFigures, k)
	ttft := make([][]float64, k)
	e2e := make([][]float64, k)
	for i := range recs {
		r := &recs[i]
		if r.URL < 0 || r.URL >= k {
			continue
		}
		f := &out[r.URL]
		if r.Cancelled() {
			continue // cancelled on purpose: neither completed nor failed, as in the run's counts
		}
		if !r.Success {
			f.Failed++
			continue
		}
		f.Completed++
		f.OutputTokens += r.OutputLen
		ttft[r.URL] = append(ttft[r.URL], r.TTFT)
		e2e[r.URL] = append(e2e[r.URL], r.Latency)
	}
	for u := range out {
		f := &out[u]
		if dur > 0 {
			f.RequestThroughput = float64(f.Completed) / dur
			f.OutputThroughput = float64(f.OutputTokens) / dur
		}
		f.TTFT, f.E2E = describeInPlace(ttft[u]), describeInPlace(e2e[u])
		f.TTFT.Max, f.E2E.Max = 0, 0
	}
	return out
}
