package metrics

import (
	"testing"

	"benchserve/record"
)

func TestFromSchedule(t *testing.T) {
	recs := []record.Record{
		// Sent on time.
		{Sent: true, Success: true, Intended: 1, Start: 1, TTFT: 0.1, Latency: 0.5},
		// Waited 2 s for a concurrency slot.
		{Sent: true, Success: true, Intended: 1, Start: 3, TTFT: 0.1, Latency: 0.5},
		// Sent late and failed: counts for the lag only.
		{Sent: true, Intended: 2, Start: 2.5},
		// Never sent.
		{Intended: 5},
	}
	a := FromSchedule(recs)
	if a.TTFT.Mean != 1100 || a.TTFT.Max != 2100 {
		t.Errorf("TTFT from schedule = %+v, want mean 1100 ms, max 2100 ms", a.TTFT)
	}
	if a.E2E.Median != 1500 {
		t.Errorf("E2E from schedule median = %v, want 1500 ms", a.E2E.Median)
	}
	if a.Lag.Max != 2000 || a.Lag.Median != 500 {
		t.Errorf("lag = %+v, want median 500 ms and max 2000 ms over the 3 sent requests", a.Lag)
	}
	if z := FromSchedule(nil); !sameStats(z.TTFT, Stats{}) || !sameStats(z.E2E, Stats{}) || !sameStats(z.Lag, Stats{}) {
		t.Errorf("no records: %+v", z)
	}
}
