// Package metrics turns records into the reference tool's figures, with
// NumPy's statistics (mean, median, population std, linear percentiles).
package metrics

// Stats are the statistics of one latency, in milliseconds.
type Stats struct {
	Mean, Median, Std, P90, P95, P99, Max float64
	// More holds the percentiles Options.Percentiles asked for
	// (--metric-percentiles), in their order, computed as P90..P99 are;
	// nil when none were asked for, zeros when there were no values.
	More []float64
}

// Summary is the reference tool's BenchmarkMetrics plus the run's duration,
// accept length and cache report.
type Summary struct {
	// Duration is the benchmark duration in seconds.
	Duration float64

	Completed int
	// Failed counts the records that did not succeed, but for those the
	// client cancelled on purpose: Cancelled (--request-cancellation-rate).
	Failed    int
	Cancelled int

	TotalInput             int
	TotalInputText         int
	TotalInputVision       int
	TotalOutput            int
	TotalOutputRetokenized int

	RequestThroughput           float64
	InputThroughput             float64
	OutputThroughput            float64
	OutputThroughputRetokenized float64
	TotalThroughput             float64
	TotalThroughputRetokenized  float64

	E2E, TTFT, TPOT, ITL Stats

	// Concurrency is the sum of the successful latencies over the duration.
	Concurrency float64
	// MaxOutputTokensPerS and MaxConcurrentRequests are the peaks over
	// one-second buckets (§5.3 of the spec).
	MaxOutputTokensPerS   float64
	MaxConcurrentRequests int
	// TokensPerSecond and ConcurrentPerSecond are the one-second buckets
	// the peaks are taken from (for --plot-throughput).
	TokensPerSecond     []int
	ConcurrentPerSecond []int

	// AcceptLength is the server's average speculative accept length, nil
	// when it reports none.
	AcceptLength *float64

	// OutputLens is each record's output length, 0 for failures, in record
	// order (the details array "output_lens").
	OutputLens []int

	// Cache is set when --cache-report asked for it.
	Cache *CacheReport
	// Audio is set when requests received audio (speech backends).
	Audio *AudioReport
}

// CacheReport sums the prefix-cache figures of the successful requests.
type CacheReport struct {
	TotalPromptTokens int
	TotalCached       int
	HitRatePct        float64
	HasDetails        bool
	Device, Host      int
	Storage           int
	StorageBackend    string // "" when no request reported storage hits
}

// ByName is the statistics of a --percentile-metrics name: ttft, tpot,
// itl or e2el.
func (s *Summary) ByName(metric string) Stats {
	switch metric {
	case "ttft":
		return s.TTFT
	case "tpot":
		return s.TPOT
	case "itl":
		return s.ITL
	case "e2el":
		return s.E2E
	}
	return Stats{}
}

// setRates sets the throughputs from the counts, for a run of dur > 0
// seconds.
func (s *Summary) setRates(dur float64) {
	s.RequestThroughput = float64(s.Completed) / dur
	s.InputThroughput = float64(s.TotalInput) / dur
	s.OutputThroughput = float64(s.TotalOutput) / dur
	s.OutputThroughputRetokenized = float64(s.TotalOutputRetokenized) / dur
	s.TotalThroughput = float64(s.TotalInput+s.TotalOutput) / dur
	s.TotalThroughputRetokenized = float64(s.TotalInput+s.TotalOutputRetokenized) / dur
}
