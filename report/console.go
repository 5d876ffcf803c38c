package report

import (
	"io"
	"slices"
	"strconv"

	"benchserve/internal/py/pyfmt"
	"benchserve/metrics"
)

// Console writes the reference tool's result block to w: a blank line, the
// "Serving Benchmark Result" rule, one line per figure and a closing rule of
// 50 "=". When requests failed, one more line, "Failed requests:", follows
// the closing rule (ours; the reference prints no such line), so the block
// itself stays byte-identical.
func Console(w io.Writer, run Run, s metrics.Summary) error {
	embedding := run.embedding()
	b := []byte{'\n'}
	b = rule(b, " Serving Benchmark Result ", '=')
	b = text(b, "Backend:", run.Backend)
	rate := "trace"
	switch {
	case run.RateLabel != "":
		rate = run.RateLabel
	case !run.Trace:
		rate = pyfmt.Float(run.RequestRate)
	}
	b = text(b, "Traffic request rate:", rate)
	conc := "not set"
	if run.MaxConcurrency != nil && *run.MaxConcurrency != 0 {
		conc = strconv.Itoa(*run.MaxConcurrency)
	}
	b = text(b, "Max request concurrency:", conc)
	b = integer(b, "Successful requests:", s.Completed)
	b = fixed(b, "Benchmark duration (s):", s.Duration)
	b = integer(b, "Total input tokens:", s.TotalInput)
	b = integer(b, "Total input text tokens:", s.TotalInputText)
	if run.Images {
		b = integer(b, "Total input vision tokens:", s.TotalInputVision)
	}
	if !embedding {
		b = integer(b, "Total generated tokens:", s.TotalOutput)
		b = integer(b, "Total generated tokens (retokenized):", s.TotalOutputRetokenized)
	}
	b = fixed(b, "Request throughput (req/s):", s.RequestThroughput)
	if run.RerankDocs > 0 {
		b = fixed(b, "Document throughput (docs/s):", run.docThroughput(s))
	}
	if g := run.Goodput; g != nil {
		b = fixed(b, "Request goodput (req/s):", g.RequestGoodput)
		if !embedding {
			b = fixed(b, "Output token goodput (tok/s):", g.TokenGoodput)
		}
		b = fixed(b, "SLO attainment (%):", g.Attainment*100)
	}
	b = fixed(b, "Input token throughput (tok/s):", s.InputThroughput)
	if !embedding {
		b = fixed(b, "Output token throughput (tok/s):", s.OutputThroughput)
		b = fixed(b, "Peak output token throughput (tok/s):", s.MaxOutputTokensPerS)
	}
	b = integer(b, "Peak concurrent requests:", s.MaxConcurrentRequests)
	if !embedding {
		b = fixed(b, "Total token throughput (tok/s):", s.TotalThroughput)
	}
	b = fixed(b, "Concurrency:", s.Concurrency)
	// Python's "if accept_length:" skips None and 0.0.
	if s.AcceptLength != nil && *s.AcceptLength != 0 {
		b = fixed(b, "Accept length:", *s.AcceptLength)
	}
	b = rule(b, "End-to-End Latency", '-')
	b = latencies(b, "E2E Latency", s.E2E, false)
	b = chosen(b, run, s, "e2el", "E2E Latency")
	if !embedding {
		b = rule(b, "Time to First Token", '-')
		b = latencies(b, "TTFT", s.TTFT, false)
		b = chosen(b, run, s, "ttft", "TTFT")
		b = rule(b, "Time per Output Token (excl. 1st token)", '-')
		b = latencies(b, "TPOT", s.TPOT, false)
		b = chosen(b, run, s, "tpot", "TPOT")
		b = rule(b, "Inter-Token Latency", '-')
		b = latencies(b, "ITL", s.ITL, true)
		b = chosen(b, run, s, "itl", "ITL")
	}
	if run.CacheReport {
		b = cacheBlock(b, cacheOf(s))
	}
	if s.Audio != nil {
		b = audioBlock(b, s.Audio)
	}
	b = append(b, "==================================================\n"...)
	if s.Failed > 0 {
		b = integer(b, "Failed requests:", s.Failed)
	}
	if s.Cancelled > 0 {
		b = integer(b, "Cancelled requests (injected):", s.Cancelled)
	}
	_, err := w.Write(b)
	return err
}

// cacheOf is the summary's cache report, zero when the metrics left it out,
// as the reference's sums over no request would be.
func cacheOf(s metrics.Summary) metrics.CacheReport {
	if s.Cache == nil {
		return metrics.CacheReport{}
	}
	return *s.Cache
}

func cacheBlock(b []byte, c metrics.CacheReport) []byte {
	b = rule(b, "Cache Hit Details", '-')
	b = integer(b, "Total prompt tokens:", c.TotalPromptTokens)
	b = integer(b, "Total cached tokens:", c.TotalCached)
	split := c.HasDetails && c.TotalCached > 0
	storage := "  Storage:"
	if c.StorageBackend != "" {
		storage = "  Storage (" + c.StorageBackend + "):"
	}
	if split {
		b = integer(b, "  Device:", c.Device)
		b = integer(b, "  Host:", c.Host)
		if c.Storage > 0 {
			b = integer(b, storage, c.Storage)
		}
	}
	b = percent(b, "Cache hit rate:", c.HitRatePct)
	if split {
		// Shares of the cached tokens, computed as (part / cached) * 100.
		cached := float64(c.TotalCached)
		b = percent(b, "  Device:", float64(c.Device)/cached*100)
		b = percent(b, "  Host:", float64(c.Host)/cached*100)
		if c.Storage > 0 {
			b = percent(b, storage, float64(c.Storage)/cached*100)
		}
	}
	return b
}

// latencies writes the Mean, Median, P90, P95, P99 (and Max) lines of one
// section; the std is never printed.
func latencies(b []byte, name string, st metrics.Stats, withMax bool) []byte {
	b = fixed(b, "Mean "+name+" (ms):", st.Mean)
	b = fixed(b, "Median "+name+" (ms):", st.Median)
	b = fixed(b, "P90 "+name+" (ms):", st.P90)
	b = fixed(b, "P95 "+name+" (ms):", st.P95)
	b = fixed(b, "P99 "+name+" (ms):", st.P99)
	if withMax {
		b = fixed(b, "Max "+name+" (ms):", st.Max)
	}
	return b
}

// chosen writes the --metric-percentiles lines of metric (a
// --percentile-metrics name) that the block does not already print, as
// vLLM labels them: "P99.9 TTFT (ms):".
func chosen(b []byte, run Run, s metrics.Summary, metric, name string) []byte {
	if !slices.Contains(run.PercentileMetrics, metric) {
		return b
	}
	vals := s.ByName(metric).More
	for i, p := range run.Percentiles {
		if i >= len(vals) || (metric != "e2el" && inBlock(p)) {
			continue
		}
		b = fixed(b, "P"+metrics.PercentileWord(p)+" "+name+" (ms):", vals[i])
	}
	return b
}

// inBlock reports whether the reference's block and line already carry
// percentile p (P90, P95, P99 of TTFT, TPOT and ITL).
func inBlock(p float64) bool { return p == 90 || p == 95 || p == 99 }

// text is "{:<40} {:<10}".format(label, value).
func text(b []byte, label, value string) []byte {
	b = append(b, pyfmt.Left(label, 40)...)
	b = append(b, ' ')
	b = append(b, pyfmt.Left(value, 10)...)
	return append(b, '\n')
}

func integer(b []byte, label string, v int) []byte { return text(b, label, strconv.Itoa(v)) }

// fixed is "{:<40} {:<10.2f}".format(label, v).
func fixed(b []byte, label string, v float64) []byte { return text(b, label, pyfmt.Fixed(v, 2)) }

// percent is "{:<40} {:.1f}%".format(label, v): no padding after the value.
func percent(b []byte, label string, v float64) []byte {
	b = append(b, pyfmt.Left(label, 40)...)
	b = append(b, ' ')
	b = append(b, pyfmt.Fixed(v, 1)...)
	return append(b, "%\n"...)
}

func rule(b []byte, title string, c byte) []byte {
	b = append(b, pyfmt.Center(title, c, 50)...)
	return append(b, '\n')
}
