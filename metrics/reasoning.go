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
