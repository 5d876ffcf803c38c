package metrics

import (
	"math"

	"benchserve/record"
)

// TokenCounter counts the tokens of a text, as
// len(tokenizer.encode(text, add_special_tokens=False)).
type TokenCounter interface {
	Count(text string) int
}

// Options are the run facts Compute needs besides the records.
type Options struct {
	// ChunkLens is the backend's Spec.ChunkLens: its records keep each
	// chunk's length, and with an accept length the ITL is retokenized.
	ChunkLens bool
	// AcceptLength is the server's speculative accept length, nil if none.
	AcceptLength *float64
	// CacheReport fills Summary.Cache (--cache-report).
	CacheReport bool
	// Percentiles (--metric-percentiles) fills More of the E2E, TTFT, TPOT
	// and ITL Stats.
	Percentiles []float64
}

// Compute is the reference tool's calculate_metrics over recs, in dispatch
// order, for a run of dur seconds. tok retokenizes the generated text (a
// record's TextTokens when TextCounted: they must come from the same
// tokenizer); a nil tok counts nothing. The input totals are the records' dataset estimates,
// so a caller that must report 0 input tokens (multi-turn) zeroes them.
func Compute(recs []record.Record, dur float64, tok TokenCounter, opt Options) Summary {
	s := Summary{Duration: dur, OutputLens: make([]int, len(recs))}
	if opt.AcceptLength != nil {
		a := *opt.AcceptLength
		s.AcceptLength = &a
	}
	// §5.1: the server's accept length says tokens arrive several per chunk,
	// so each chunk's gap is spread over its retokenized tokens.
	retokITL := tok != nil && opt.AcceptLength != nil && *opt.AcceptLength > 0 && opt.ChunkLens

	nITL := 0
	for i := range recs {
		if recs[i].Success {
			s.Completed++
			nITL += recs[i].Gaps.Len()
		} else if recs[i].Cancelled() {
			s.Cancelled++
		}
	}
	s.Failed = len(recs) - s.Completed - s.Cancelled
	e2e := make([]float64, 0, s.Completed)
	ttft := make([]float64, 0, s.Completed)
	tpot := make([]float64, 0, s.Completed)
	var itl []float64 // the retokenized ITL only: plain gaps are read from the records

	for i := range recs {
		r := &recs[i]
		if !r.Success {
			continue
		}
		s.OutputLens[i] = r.OutputLen
		s.TotalOutput += r.OutputLen
		switch {
		case tok == nil:
		case r.TextCounted:
			s.TotalOutputRetokenized += r.TextTokens
		default:
			s.TotalOutputRetokenized += tok.Count(r.Text)
		}
		s.TotalInput += r.InputLen
		s.TotalInputText += r.InputTextLen
		s.TotalInputVision += r.InputVisionLen
		if r.OutputLen > 1 {
			tpot = append(tpot, (r.Latency-r.TTFT)/float64(r.OutputLen-1))
		}
		if retokITL {
			itl = appendRetokenizedITL(itl, r, tok)
		}
		ttft = append(ttft, r.TTFT)
		e2e = append(e2e, r.Latency)
	}

	if dur > 0 {
		s.setRates(dur)
		// Before describeInPlace sorts e2e: the pairwise sum depends on order.
		s.Concurrency = sum(e2e) / dur
	}
	ps := opt.Percentiles
	s.E2E = describeWith(e2e, ps)
	s.TTFT = describeWith(ttft, ps)
	s.TPOT = describeWith(tpot, ps)
	if retokITL {
		s.ITL = describeWith(itl, ps)
	} else {
		s.ITL = describeGapsWith(recs, nITL, ps)
	}
	s.E2E.Max, s.TTFT.Max, s.TPOT.Max = 0, 0, 0 // the reference has max for ITL only

	s.TokensPerSecond, s.ConcurrentPerSecond = series(recs)
	for b := range s.TokensPerSecond {
		s.MaxOutputTokensPerS = max(s.MaxOutputTokensPerS, float64(s.TokensPerSecond[b]))
		s.MaxConcurrentRequests = max(s.MaxConcurrentRequests, s.ConcurrentPerSecond[b])
	}
	if opt.CacheReport {
		c := cacheReport(recs)
		s.Cache = &c
	}
	s.Audio = audioReport(recs, dur)
	return s
}

// appendRetokenizedITL appends r's gaps the way the reference does under
// speculative decoding: gap k divided by the n tokens of the chunk that ended
// it, n times. ChunkLens holds the byte lengths of the last len(ChunkLens)
// chunks of Text, in order. A chunk of zero tokens is skipped (the reference
// divides by zero). A record whose chunk lengths do not fit its gaps or text
// keeps its plain gaps.
func appendRetokenizedITL(itl []float64, r *record.Record, tok TokenCounter) []float64 {
	total := 0
	for _, l := range r.ChunkLens {
		if l < 0 {
			total = -1
			break
		}
		total += int(l)
	}
	if len(r.ChunkLens) != r.Gaps.Len() || total < 0 || total > len(r.Text) {
		return append(itl, r.Gaps.Seconds()...)
	}
	pos := len(r.Text) - total
	for k, d := range r.Gaps.All() {
		gap := d.Seconds()
		end := pos + int(r.ChunkLens[k])
		n := tok.Count(r.Text[pos:end])
		pos = end
		if n <= 0 {
			continue
		}
		v := gap / float64(n)
		for range n {
			itl = append(itl, v)
		}
	}
	return itl
}

// series computes §5.3's per-second output tokens and concurrent requests,
// whose maxima are the peaks, over one-second buckets from the first
// successful start, exactly as the reference: B = int(ceil(t1-t0)) + 1 buckets, each token time start+ttft
// then the running sums of the gaps counted in bucket int(t-t0) when in
// range, and each request counted in every bucket from int(start-t0) to
// int(end-t0), both included.
func series(recs []record.Record) (tokens, concurrent []int) {
	t0, t1 := math.Inf(1), math.Inf(-1)
	for i := range recs {
		r := &recs[i]
		if r.Success {
			t0 = min(t0, r.Start)
			t1 = max(t1, r.Start+r.Latency)
		}
	}
	if math.IsInf(t0, 1) {
		return nil, nil
	}
	nb := int(math.Ceil(t1-t0)) + 1
	tokens = make([]int, nb)
	// conc is a difference array: +1 at a request's first bucket, -1 after
	// its last; its prefix sums are the reference's per-bucket counts.
	conc := make([]int, nb+1)
	fnb := float64(nb)
	for i := range recs {
		r := &recs[i]
		if !r.Success {
			continue
		}
		t := r.Start + r.TTFT
		if d := t - t0; d > -1 && d < fnb { // int(d) in [0, nb)
			tokens[int(d)]++
		}
		for _, d := range r.Gaps.All() {
			t += d.Seconds()
			if d := t - t0; d > -1 && d < fnb {
				tokens[int(d)]++
			}
		}
		first := int(r.Start - t0)
		last := min(int((r.Start+r.Latency)-t0), nb-1)
		if first <= last {
			conc[first]++
			conc[last+1]--
		}
	}
	concurrent = make([]int, nb)
	run := 0
	for b := range nb {
		run += conc[b]
		concurrent[b] = run
	}
	return tokens, concurrent
}

// cacheReport sums the prefix-cache figures of the successful records, as
// the reference's --cache-report block does.
func cacheReport(recs []record.Record) CacheReport {
	var c CacheReport
	for i := range recs {
		if recs[i].Success {
			addCache(&c, &recs[i])
		}
	}
	if c.TotalPromptTokens > 0 {
		c.HitRatePct = float64(c.TotalCached) / float64(c.TotalPromptTokens) * 100
	}
	return c
}

// addCache adds a successful record's prefix-cache figures to c's sums.
func addCache(c *CacheReport, r *record.Record) {
	c.TotalPromptTokens += r.PromptLen
	c.TotalCached += r.CachedTokens
	d := r.CacheDetails
	if d == nil {
		return
	}
	c.HasDetails = true
	c.Device += d.Device
	c.Host += d.Host
	if d.Storage != 0 {
		c.Storage += d.Storage
		c.StorageBackend = d.StorageBackend
	}
}
