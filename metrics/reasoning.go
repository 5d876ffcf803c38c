package metrics

import "benchserve/record"

// Reasoning is the split of chat-like replies into reasoning and content:
// the time to first output (TTFO: the first content after any
// reasoning), the reasoning and content token totals, and the successful
// requests that ended with no content at all (a thinking budget that
// used up max_tokens).
type Reasoning struct {
	TTFO                         Stats
	TotalReasoning, TotalContent int
	NoContent                    int
	WithReasoning, Successful    int
}

// ComputeReasoning is Reasoning over the successful records.
func ComputeReasoning(recs []record.Record) Reasoning {
	var r Reasoning
	var ttfo []float64
	for i := range recs {
		x := &recs[i]
		if !x.Success {
			continue
		}
		r.Successful++
		r.TotalReasoning += x.ReasoningTokens
		r.TotalContent += x.ContentTokens
		if x.ReasoningTokens > 0 {
			r.WithReasoning++
		}
		if x.TTFO > 0 {
			ttfo = append(ttfo, x.TTFO)
		} else {
			r.NoContent++
		}
	}
	r.TTFO = describeInPlace(ttfo)
	return r
}

// PerTokenITL is the ITL with each chunk's gap spread evenly over the
// tokens the server said it carried (a gap of 30 ms before a chunk of 3
// tokens is three gaps of 10 ms; a chunk of 0 tokens adds none), over the
// successful records that have those counts.
type PerTokenITL struct {
	Stats    Stats
	Requests int
}

// ComputePerTokenITL is nil when no record has per-chunk token counts.
func ComputePerTokenITL(recs []record.Record) *PerTokenITL {
	var gaps []float64
	n := 0
	for i := range recs {
		r := &recs[i]
		if !r.Success || r.ChunkTokens == nil || len(r.ChunkTokens) != r.Gaps.Len() {
			continue
		}
		n++
		for k, d := range r.Gaps.All() {
			t := int(r.ChunkTokens[k])
			for range t {
				gaps = append(gaps, d.Seconds()/float64(t))
			}
		}
	}
	if n == 0 {
		return nil
	}
	return &PerTokenITL{Stats: describeInPlace(gaps), Requests: n}
}
