package metrics

import "benchserve/record"

// Anchored holds latencies measured from each request's intended send time
// instead of its actual one. The difference is the time a request waited
// for a concurrency slot or for a late client; the reference's figures leave
// it out (coordinated omission), these keep it.
type Anchored struct {
	TTFT, E2E Stats
	// Lag is the schedule lag, actual send − intended send, over every
	// request that was sent.
	Lag Stats
}

// FromSchedule computes Anchored over the successful records (Lag over all
// sent ones).
func FromSchedule(recs []record.Record) Anchored {
	var ttft, e2e, lag []float64
	for i := range recs {
		r := &recs[i]
		wait := r.Start - r.Intended
		if r.Sent {
			lag = append(lag, wait)
		}
		if r.Success {
			ttft = append(ttft, wait+r.TTFT)
			e2e = append(e2e, wait+r.Latency)
		}
	}
	return Anchored{TTFT: describeInPlace(ttft), E2E: describeInPlace(e2e), Lag: describeInPlace(lag)}
}
