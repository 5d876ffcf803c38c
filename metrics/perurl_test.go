package metrics

import (
	"math"
	"testing"
	"time"

	"benchserve/record"
)

func TestPerURL(t *testing.T) {
	recs := []record.Record{
		{URL: 0, Success: true, TTFT: 0.010, Latency: 0.100, OutputLen: 5},
		{URL: 1, Success: true, TTFT: 0.020, Latency: 0.200, OutputLen: 7},
		{URL: 0, Success: true, TTFT: 0.030, Latency: 0.300, OutputLen: 9},
		{URL: 1, Success: false, TTFT: 9, Latency: 9, OutputLen: 0},
	}
	got := PerURL(recs, 2, 2)
	want := []struct {
		ok, failed, out        int
		reqTput, outTput       float64
		ttftMean, e2eMedian    float64
		ttftP99Lo, ttftP99High float64
	}{
		{2, 0, 14, 1, 7, 20, 200, 29, 30},
		{1, 1, 7, 0.5, 3.5, 20, 200, 20, 20},
	}
	for u, w := range want {
		g := got[u]
		if g.Completed != w.ok || g.Failed != w.failed || g.OutputTokens != w.out ||
			g.RequestThroughput != w.reqTput || g.OutputThroughput != w.outTput {
			t.Errorf("URL %d: %+v", u, g)
		}
		if !near(g.TTFT.Mean, w.ttftMean) || !near(g.E2E.Median, w.e2eMedian) || g.TTFT.P99 < w.ttftP99Lo || g.TTFT.P99 > w.ttftP99High {
			t.Errorf("URL %d: TTFT %+v, E2E %+v", u, g.TTFT, g.E2E)
		}
	}
	// The shares add up to the run's figures.
	all := Compute(recs, 2, nil, Options{})
	if got[0].Completed+got[1].Completed != all.Completed || got[0].RequestThroughput+got[1].RequestThroughput != all.RequestThroughput ||
		got[0].OutputTokens+got[1].OutputTokens != all.TotalOutput {
		t.Errorf("shares %+v do not add up to %+v", got, all)
	}
}

// Each series summed over the servers: counters and gauges by value,
// histograms by count, sum and cumulative bucket (over the union of the
// bounds); a series on one server only is its value.
func TestSumSnapshots(t *testing.T) {
	inf := math.Inf(1)
	t0 := time.Unix(100, 0)
	a := Snapshot{At: t0, Samples: map[string]Sample{
		"gen":     {Key: "gen", Kind: Counter, Value: 10},
		"running": {Key: "running", Kind: Gauge, Value: 3},
		"ttft": {Key: "ttft", Kind: Histogram, Count: 4, Sum: 2,
			Buckets: []Bucket{{0.1, 1}, {1, 3}, {inf, 4}}},
		"only_a": {Key: "only_a", Kind: Counter, Value: 5},
	}}
	b := Snapshot{At: t0.Add(time.Millisecond), Samples: map[string]Sample{
		"gen":     {Key: "gen", Kind: Counter, Value: 32},
		"running": {Key: "running", Kind: Gauge, Value: 4},
		"ttft": {Key: "ttft", Kind: Histogram, Count: 2, Sum: 1,
			Buckets: []Bucket{{0.5, 1}, {1, 2}, {inf, 2}}},
	}}
	s := SumSnapshots([]Snapshot{a, b})
	if !s.At.Equal(b.At) {
		t.Errorf("At = %v, want the latest %v", s.At, b.At)
	}
	if s.Samples["gen"].Value != 42 || s.Samples["running"].Value != 7 || s.Samples["only_a"].Value != 5 {
		t.Errorf("sums: %+v", s.Samples)
	}
	h := s.Samples["ttft"]
	wantB := []Bucket{{0.1, 1}, {0.5, 2}, {1, 5}, {inf, 6}}
	if h.Count != 6 || h.Sum != 3 || len(h.Buckets) != len(wantB) {
		t.Fatalf("histogram: %+v", h)
	}
	for i := range wantB {
		if h.Buckets[i] != wantB[i] {
			t.Errorf("bucket %d = %v, want %v", i, h.Buckets[i], wantB[i])
		}
	}
}

// A request cancelled on purpose is neither a server's completed nor its
// failed request, as in the run's own counts.
func TestPerURLLeavesCancelledOut(t *testing.T) {
	recs := []record.Record{
		{URL: 0, Sent: true, Success: true, OutputLen: 3, TTFT: 0.1, Latency: 0.2},
		{URL: 0, Sent: true, Error: "cancelled", ErrorKind: record.KindCancelled},
		{URL: 1, Sent: true, Error: "500", ErrorKind: record.KindHTTP5xx},
	}
	got := PerURL(recs, 2, 1)
	if got[0].Completed != 1 || got[0].Failed != 0 || got[1].Failed != 1 {
		t.Errorf("per URL %+v %+v: want 1 completed and no failure on URL 0, 1 failure on URL 1", got[0], got[1])
	}
}
