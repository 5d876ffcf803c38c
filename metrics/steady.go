package metrics

import (
	"math"
	"slices"

	"benchserve/record"
)

// Steady is SGLang's steady-state result (steady_state.py) over the
// longest stretch of the run with at least ceil(Ratio × peak) requests in
// flight, and our own figures over the same window. Times are the
// records' clock: seconds since the run's epoch.
type Steady struct {
	Ratio float64
	// Found: some record succeeded with a positive latency, so there is a
	// window. Without one every other field is zero (SGLang raises).
	Found bool

	WindowStart, WindowEnd, Duration float64
	Threshold                        int
	// Completed counts the requests that ended in [start, end].
	Completed int
	// TotalInput sums the input tokens (InputLen) of the requests that
	// started in [start, end).
	TotalInput      int
	InputThroughput float64
	// TotalOutput spreads each request's OutputLen evenly over its token
	// timestamps (start+TTFT, then each gap) and counts the share inside
	// [start, end]; TotalOutputRetokenized does the same with the text's
	// own token count.
	TotalOutput, TotalOutputRetokenized           float64
	OutputThroughput, OutputThroughputRetokenized float64
	// AverageConcurrency is the time-weighted mean in flight over the window.
	AverageConcurrency float64
	// PeakConcurrency is the whole run's event-exact peak.
	PeakConcurrency int
	// PeakOutputThroughput is the busiest one-second bucket of the window.
	PeakOutputThroughput float64

	// Ours: the requests sent in [start, end) (Started, of which Failed
	// did not succeed) and the latencies of those that succeeded.
	Started, Failed      int
	E2E, TTFT, TPOT, ITL Stats
	// PerTokenOutput counts the output tokens whose chunk arrived in
	// [start, end], by the server's running count, over the PerTokenRequests
	// successful requests that have one (ChunkTokens); nil when none has.
	PerTokenOutput   *float64
	PerTokenRequests int
}

// usable is SGLang's filter: a success with a positive latency.
func usable(r *record.Record) bool { return r.Success && r.Latency > 0 }

// span is a stretch of the concurrency curve.
type span struct{ start, end float64 }

// ComputeSteady is the steady state of recs at ratio (0 < ratio <= 1).
// tok retokenizes a text whose tokens the record did not count.
func ComputeSteady(recs []record.Record, ratio float64, tok TokenCounter) Steady {
	st := Steady{Ratio: ratio}
	peak, win, ok := steadyWindow(recs, ratio)
	if !ok {
		return st
	}
	st.Found, st.PeakConcurrency = true, peak
	st.Threshold = threshold(peak, ratio)
	s, e := win.start, win.end
	st.WindowStart, st.WindowEnd, st.Duration = s, e, e-s
	dur := st.Duration

	nb := max(1, int(math.Ceil(dur)))
	buckets := make([]float64, nb)
	var overlap float64
	var times []float64
	for i := range recs {
		r := &recs[i]
		if !usable(r) {
			continue
		}
		end := r.Start + r.Latency
		if s <= end && end <= e {
			st.Completed++
		}
		if s <= r.Start && r.Start < e {
			st.TotalInput += r.InputLen
		}
		overlap += max(0, min(end, e)-max(r.Start, s))
		times = tokenTimes(times[:0], r)
		inside := 0
		w := float64(r.OutputLen) / float64(len(times))
		for _, t := range times {
			if s <= t && t <= e {
				inside++
				b := min(max(0, int(math.Ceil(max(0, t-s)))-1), nb-1)
				buckets[b] += w
			}
		}
		f := float64(inside) / float64(len(times))
		st.TotalOutput += float64(r.OutputLen) * f
		st.TotalOutputRetokenized += float64(retokenized(r, tok)) * f
	}
	st.InputThroughput = float64(st.TotalInput) / dur
	st.OutputThroughput = st.TotalOutput / dur
	st.OutputThroughputRetokenized = st.TotalOutputRetokenized / dur
	st.AverageConcurrency = overlap / dur
	st.PeakOutputThroughput = slices.Max(buckets)
	st.started(recs)
	return st
}

// threshold is max(1, ceil(peak × ratio)) with the float64 product, as
// Python computes it: 100 × 0.07 is 7.000000000000001, so 8.
func threshold(peak int, ratio float64) int {
	return max(1, int(math.Ceil(float64(peak)*ratio)))
}

// steadyWindow builds the event-exact concurrency curve of the usable
// records (+1 at a start, −1 at an end, events at one instant netted),
// and returns its peak and the longest span at or above the threshold,
// the first of equal ones; ok is false when no record is usable.
func steadyWindow(recs []record.Record, ratio float64) (peak int, win span, ok bool) {
	delta := map[float64]int{}
	for i := range recs {
		r := &recs[i]
		if usable(r) {
			delta[r.Start]++
			delta[r.Start+r.Latency]--
		}
	}
	if len(delta) == 0 {
		return 0, span{}, false
	}
	times := make([]float64, 0, len(delta))
	for t := range delta {
		times = append(times, t)
	}
	slices.Sort(times)
	// The intervals [times[i], times[i+1]) and their concurrency.
	conc := make([]int, len(times)-1)
	n := 0
	for i := range conc {
		n += delta[times[i]]
		conc[i] = n
		peak = max(peak, n)
	}
	th := threshold(peak, ratio)
	best, open := span{}, false
	var cur span
	closeSpan := func() {
		if open && (!ok || cur.end-cur.start > best.end-best.start) {
			best, ok = cur, true
		}
		open = false
	}
	for i, c := range conc {
		if c < th {
			closeSpan()
			continue
		}
		if !open {
			cur, open = span{times[i], times[i+1]}, true
		}
		cur.end = times[i+1]
	}
	closeSpan()
	return peak, best, ok
}

// tokenTimes appends r's token timestamps: start+TTFT, then one per gap.
func tokenTimes(dst []float64, r *record.Record) []float64 {
	t := r.Start + r.TTFT
	dst = append(dst, t)
	for _, d := range r.Gaps.All() {
		t += d.Seconds()
		dst = append(dst, t)
	}
	return dst
}

// retokenized is the token count of r's text under the run's tokenizer.
func retokenized(r *record.Record, tok TokenCounter) int {
	switch {
	case r.TextCounted:
		return r.TextTokens
	case tok == nil:
		return 0
	}
	return tok.Count(r.Text)
}

// started fills our figures: the requests sent in [start, end), their
// failures, the latencies of the successful ones, and the output tokens
// counted per token where the server gave per-chunk counts.
func (st *Steady) started(recs []record.Record) {
	s, e := st.WindowStart, st.WindowEnd
	var e2e, ttft, tpot, itl []float64
	var perToken float64
	var times []float64
	for i := range recs {
		r := &recs[i]
		if r.Sent && s <= r.Start && r.Start < e {
			st.Started++
			if !r.Success {
				st.Failed++
				continue
			}
			e2e = append(e2e, r.Latency)
			ttft = append(ttft, r.TTFT)
			if r.OutputLen > 1 {
				tpot = append(tpot, (r.Latency-r.TTFT)/float64(r.OutputLen-1))
			}
			itl = r.Gaps.AppendSeconds(itl)
		}
		if usable(r) && r.ChunkTokens != nil && len(r.ChunkTokens) == r.Gaps.Len() {
			times = tokenTimes(times[:0], r)
			perToken += float64(tokensInside(r, times, s, e))
			st.PerTokenRequests++
		}
	}
	st.E2E, st.TTFT, st.TPOT, st.ITL = describeInPlace(e2e), describeInPlace(ttft), describeInPlace(tpot), describeInPlace(itl)
	st.E2E.Max, st.TTFT.Max, st.TPOT.Max = 0, 0, 0
	if st.PerTokenRequests > 0 {
		st.PerTokenOutput = &perToken
	}
}

// tokensInside counts r's output tokens whose chunk came in [s, e] (its
// token times are times), by the server's per-chunk counts: each gap's
// chunk carries its ChunkTokens, the first chunk the rest of OutputLen.
func tokensInside(r *record.Record, times []float64, s, e float64) int {
	first := r.OutputLen
	for _, c := range r.ChunkTokens {
		first -= int(c)
	}
	n := 0
	for k, t := range times {
		switch {
		case t < s || t > e:
		case k == 0:
			n += max(0, first)
		default:
			n += int(r.ChunkTokens[k-1])
		}
	}
	return n
}
