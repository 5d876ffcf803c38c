package metrics

import (
	"math"
	"slices"
	"testing"

	"benchserve/record"
)

func TestComputePerSession(t *testing.T) {
	if ps := ComputePerSession([]record.Record{{Sent: true, Success: true}}); ps != nil {
		t.Errorf("single-turn records: %+v, want nil", ps)
	}
	round := func(s, k, plan int, ok bool, intended, delay, start, lat float64) record.Record {
		r := record.Record{Round: true, Session: s, Turn: k, SessionTurns: plan, Sent: true, Success: ok,
			Intended: intended, PlannedDelay: delay, Start: start, Latency: lat}
		if !ok {
			r.Error, r.ErrorKind = "x", record.KindHTTP5xx
		}
		return r
	}
	cancelled := round(4, 0, 2, false, 0.4, 0, 0.4, 0)
	cancelled.ErrorKind = record.KindCancelled
	recs := []record.Record{
		// Session 0: three turns, all through. Its first leaves 2 ms
		// late; turn 1 is due 50 ms after turn 0 ended (1.002) and
		// leaves 1 ms late; turn 2 due 100 ms after 1.553, 2 ms late.
		round(0, 0, 3, true, 0, 0, 0.002, 1.0),
		round(0, 1, 3, true, 1.052, 0.05, 1.053, 0.5),
		round(0, 2, 3, true, 1.653, 0.1, 1.655, 0.2),
		// Session 1: its second turn failed, the third was not sent.
		round(1, 0, 3, true, 0.1, 0, 0.104, 0.3),
		round(1, 1, 3, false, 0.404, 0, 0.404, 0.01),
		// Session 2: the run ended before its third turn.
		round(2, 0, 3, true, 0.2, 0, 0.2, 0.1),
		round(2, 1, 3, true, 0.3, 0, 0.3, 0.1),
		// Session 3: an older record file, without the planned turns.
		round(3, 0, 0, true, 0.3, 0, 0.3, 0.25),
		// Session 4: its first turn cancelled on purpose.
		cancelled,
		// Session 5: never sent.
		{Round: true, Session: 5, SessionTurns: 2},
	}
	ps := ComputePerSession(recs)
	if ps == nil {
		t.Fatal("nil for a multi-turn run")
	}
	if ps.Started != 5 || ps.Completed != 2 || ps.Truncated != 3 {
		t.Errorf("started/completed/truncated %d/%d/%d, want 5/2/3", ps.Started, ps.Completed, ps.Truncated)
	}
	if !slices.Equal(ps.ByTurns, []int{1, 2, 1, 1}) || math.Abs(ps.TurnsMean-1.4) > 1e-12 {
		t.Errorf("turns completed %v mean %v, want [1 2 1 1] and 1.4", ps.ByTurns, ps.TurnsMean)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
	// Durations: 1.855 - 0.002 and 0.25 seconds.
	if !near(ps.Duration.Max, 1853) || !near(ps.Duration.Mean, (1853+250)/2.0) {
		t.Errorf("duration %+v", ps.Duration)
	}
	// Turns after the first: sessions 0 (two), 1 and 2.
	if ps.Gaps != 4 || !near(ps.Lag.Max, 2) || !near(ps.Lag.Mean, (1+2+0+0)/4.0) || !near(ps.Between.Max, 102) {
		t.Errorf("gaps %d between %+v lag %+v", ps.Gaps, ps.Between, ps.Lag)
	}
	// Arrival lag: 2, 4, 0, 0, 0 ms.
	if !near(ps.ArrivalLag.Max, 4) || !near(ps.ArrivalLag.Mean, 1.2) || !near(ps.ArrivalLag.Median, 0) {
		t.Errorf("arrival lag %+v", ps.ArrivalLag)
	}
}
