package metrics

import (
	"testing"

	"benchserve/record"
)

// A request cancelled on purpose counts apart: not completed, not failed,
// and in no latency or total.
func TestComputeCancelled(t *testing.T) {
	recs := []record.Record{
		{Success: true, Latency: 1, TTFT: 0.5, InputLen: 10, OutputLen: 3, Gaps: gaps(0.25, 0.25)},
		{Error: "boom", ErrorKind: record.KindHTTP5xx, Latency: 9, TTFT: 9},
		{Error: "cancelled", ErrorKind: record.KindCancelled, Latency: 7, TTFT: 0.1, InputLen: 50, OutputLen: 2, Gaps: gaps(5)},
		{Error: "cancelled", ErrorKind: record.KindCancelled, CancelAt: 0.3},
	}
	s := Compute(recs, 2, nil, Options{})
	if s.Completed != 1 || s.Failed != 1 || s.Cancelled != 2 {
		t.Errorf("completed, failed, cancelled = %d, %d, %d; want 1, 1, 2", s.Completed, s.Failed, s.Cancelled)
	}
	if s.TTFT.Mean != 500 || s.E2E.Mean != 1000 || s.ITL.Max != 250 || s.TotalInput != 10 || s.TotalOutput != 3 {
		t.Errorf("a cancelled request counted: TTFT %v, E2E %v, ITL max %v, input %d, output %d",
			s.TTFT.Mean, s.E2E.Mean, s.ITL.Max, s.TotalInput, s.TotalOutput)
	}
}
