package metrics

import "benchserve/record"

// TurnFigures are the figures of one turn index of a multi-turn run: its
// rounds over every conversation.
type TurnFigures struct {
	Turn              int
	Completed, Failed int
	// TTFT and E2E of the completed rounds, in milliseconds (Mean,
	// Median, P99; Max is not set).
	TTFT, E2E Stats
	// InputTokens and CachedTokens are the completed rounds' means:
	// the server's prompt_tokens (else our count of the history) and its
	// cached tokens (Cached only).
	InputTokens, CachedTokens float64
}

// PerTurn are a multi-turn run's per-turn figures.
type PerTurn struct {
	Turns []TurnFigures
	// Cached: the server's cached tokens were read (--cache-report), and
	// CachedTokens means something.
	Cached bool
	// Gaps counts the rounds after the first that were sent. Between is
	// the time between turns, from the end of round k-1 to the send of
	// round k; Lag is its excess over the planned think time (the send
	// less the due time: the client's lag), both in milliseconds (Mean,
	// Median, P99, Max).
	Gaps         int
	Between, Lag Stats
}

// ComputePerTurn gives the per-turn figures of recs, or nil when none is
// a conversation's round. cached says the records carry the server's
// cached tokens. A round's previous end is its due time less its planned
// delay (Intended = End(k-1) + PlannedDelay), which its own record holds,
// so record files read back give the same figures.
func ComputePerTurn(recs []record.Record, cached bool) *PerTurn {
	var (
		pt          PerTurn
		ttft, e2e   [][]float64
		input, hits []int
		between     []float64
		lag         []float64
	)
	for i := range recs {
		r := &recs[i]
		if !r.Round || r.Turn < 0 || !r.Sent {
			continue
		}
		for len(pt.Turns) <= r.Turn {
			pt.Turns = append(pt.Turns, TurnFigures{Turn: len(pt.Turns)})
			ttft, e2e = append(ttft, nil), append(e2e, nil)
			input, hits = append(input, 0), append(hits, 0)
		}
		if r.Turn > 0 {
			pt.Gaps++
			between = append(between, r.Start-(r.Intended-r.PlannedDelay))
			lag = append(lag, r.Start-r.Intended)
		}
		f := &pt.Turns[r.Turn]
		if r.Cancelled() {
			continue // neither completed nor failed, as in the run's counts
		}
		if !r.Success {
			f.Failed++
			continue
		}
		f.Completed++
		ttft[r.Turn] = append(ttft[r.Turn], r.TTFT)
		e2e[r.Turn] = append(e2e[r.Turn], r.Latency)
		input[r.Turn] += r.InputLen
		hits[r.Turn] += r.CachedTokens
	}
	if pt.Turns == nil {
		return nil
	}
	pt.Cached = cached
	for k := range pt.Turns {
		f := &pt.Turns[k]
		f.TTFT, f.E2E = describeInPlace(ttft[k]), describeInPlace(e2e[k])
		f.TTFT.Max, f.E2E.Max = 0, 0
		if f.Completed > 0 {
			f.InputTokens = float64(input[k]) / float64(f.Completed)
			if cached {
				f.CachedTokens = float64(hits[k]) / float64(f.Completed)
			}
		}
	}
	pt.Between, pt.Lag = describeInPlace(between), describeInPlace(lag)
	return &pt
}
