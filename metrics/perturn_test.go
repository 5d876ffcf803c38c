package metrics

import (
	"math"
	"testing"

	"benchserve/record"
)

func TestComputePerTurn(t *testing.T) {
	round := func(s, k int, ok bool, intended, delay, start, ttft, lat float64, in, cached int) record.Record {
		return record.Record{Round: true, Session: s, Turn: k, Sent: true, Success: ok, Intended: intended, PlannedDelay: delay,
			Start: start, TTFT: ttft, Latency: lat, InputLen: in, CachedTokens: cached}
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	tests := []struct {
		name   string
		recs   []record.Record
		cached bool
		check  func(t *testing.T, pt *PerTurn)
	}{
		{name: "single-turn records: none", recs: []record.Record{{Sent: true, Success: true, TTFT: 0.1}}, check: func(t *testing.T, pt *PerTurn) {
			if pt != nil {
				t.Errorf("got %+v, want nil", pt)
			}
		}},
		{name: "two conversations of two turns", cached: true, recs: []record.Record{
			// Session 0: turn 1 due at 1.0 + 0.05, sent 2 ms late.
			round(0, 0, true, 0, 0, 0.001, 0.1, 1.0, 100, 0),
			round(0, 1, true, 1.05, 0.05, 1.052, 0.02, 0.5, 300, 200),
			// Session 1: turn 1 due at 2.0 + 0.1, sent 4 ms late.
			round(1, 0, true, 0, 0, 0.002, 0.3, 2.0, 200, 0),
			round(1, 1, true, 2.1, 0.1, 2.104, 0.04, 0.7, 500, 400),
		}, check: func(t *testing.T, pt *PerTurn) {
			if len(pt.Turns) != 2 || pt.Gaps != 2 || !pt.Cached {
				t.Fatalf("got %+v", pt)
			}
			t0, t1 := pt.Turns[0], pt.Turns[1]
			if t0.Turn != 0 || t1.Turn != 1 || t0.Completed != 2 || t1.Completed != 2 {
				t.Errorf("turns %+v %+v", t0, t1)
			}
			if !near(t0.TTFT.Mean, 200) || !near(t1.TTFT.Mean, 30) || !near(t1.E2E.Median, 600) || !near(t0.E2E.Mean, 1500) {
				t.Errorf("latencies %+v %+v", t0, t1)
			}
			if t0.InputTokens != 150 || t1.InputTokens != 400 || t0.CachedTokens != 0 || t1.CachedTokens != 300 {
				t.Errorf("tokens %+v %+v", t0, t1)
			}
			// Between: 0.052 and 0.104 s; lag: 2 and 4 ms.
			if !near(pt.Between.Mean, 78) || !near(pt.Lag.Mean, 3) || !near(pt.Lag.Max, 4) || !near(pt.Between.Max, 104) {
				t.Errorf("gaps between %+v lag %+v", pt.Between, pt.Lag)
			}
		}},
		{name: "failures and cancellations; no cache report", recs: []record.Record{
			round(0, 0, true, 0, 0, 0, 0.1, 1, 10, 5),
			{Round: true, Turn: 1, Sent: true, Intended: 1, Start: 1, Error: "x", ErrorKind: record.KindHTTP5xx},
			{Round: true, Session: 1, Turn: 1, Sent: true, Intended: 2, Start: 2, Error: "c", ErrorKind: record.KindCancelled},
			{Round: true, Session: 2, Turn: 2}, // not sent
		}, check: func(t *testing.T, pt *PerTurn) {
			if len(pt.Turns) != 2 || pt.Turns[1].Failed != 1 || pt.Turns[1].Completed != 0 || pt.Gaps != 2 {
				t.Fatalf("got %+v", pt)
			}
			if pt.Cached || pt.Turns[0].CachedTokens != 0 || pt.Turns[1].TTFT.Mean != 0 {
				t.Errorf("cached tokens without the report, or a failed round's TTFT: %+v", pt)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.check(t, ComputePerTurn(tt.recs, tt.cached)) })
	}
}
