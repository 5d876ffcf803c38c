package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"benchserve/internal/hist"
	"benchserve/record"
)

// The verdict names only what could move a reported latency's
// percentiles by more than 1 ms, and by how much: the client's CPU, GC
// pauses and late reads are in no latency (kernel receive times, clock
// from the actual send); late sends are only in the schedule-anchored
// ones, until the latest 1% leave later than the gap between planned
// sends.
func TestVerdict(t *testing.T) {
	var late hist.H
	for range 100 {
		late.Add(7 * time.Millisecond)
	}
	cases := []struct {
		name string
		r    SelfCheck
		want string
	}{
		{"idle", SelfCheck{CPU: 100 * time.Millisecond, Planned: 10},
			"ok: timing held (0.0% of chunks bunched by late reads, read delay p99 0.00 ms)"},
		// Reads 7 ms late, nothing bunched (the first --sim demo: 9.4 ms).
		{"late reads", SelfCheck{ReadDelay: late, Planned: math.Inf(1), Closed: true, WithSim: true},
			"ok: timing held (0.0% of chunks bunched by late reads, read delay p99 7.00 ms) (CPU and GC figures include the in-process simulator of --sim)"},
		{"busy CPU and GC", SelfCheck{CPU: time.Hour, GCPause: time.Minute, Planned: 10}, "ok: timing held"},
		// The sweep --sim at 40 req/s: 4.6 ms late, 25 ms between sends.
		{"lag under the gap", SelfCheck{LagP99: 0.0045, SendP99: 100 * time.Microsecond, Planned: 40},
			"ok: timing held (0.0% of chunks bunched by late reads, read delay p99 0.00 ms); 1% of requests left 4.60 ms late or more (dispatch lag p99 4.50 ms + send delay p99 0.10 ms): not in TTFT, ITL or E2E, which start at the actual send, but in the schedule-anchored latencies"},
		{"lag under 1 ms", SelfCheck{LagP99: 0.0009, Planned: 2000}, "ok: timing held (0.0% of chunks bunched by late reads, read delay p99 0.00 ms)"},
		{"lag over the gap", SelfCheck{LagP99: 0.003, Planned: 1000},
			"may be distorted: 1% of requests left 3.00 ms late or more (dispatch lag p99 3.00 ms + send delay p99 0.00 ms), longer than the 1.00 ms between planned sends: the server saw a burstier load than planned, which can move latencies by up to 3.00 ms"},
		// Without a schedule a request cannot leave late.
		{"closed loop", SelfCheck{LagP99: 0.003, SendP99: 3 * time.Millisecond, Planned: math.Inf(1), Closed: true}, "ok: timing held (0.0% of chunks bunched by late reads, read delay p99 0.00 ms)"},
		{"bunched", SelfCheck{Chunks: 1000, Bunched: 500, LateBunch: 30, GapMedian: 10 * time.Millisecond, Planned: 10},
			"may be distorted: 3.0% of chunks bunched by late reads (limit 1%): each timed late by up to one gap (median 10.00 ms), enough to move the ITL P99 and TTFTs by that much"},
		// Gaps under the tolerance: bunching them moves nothing by 1 ms.
		{"bunched fine gaps", SelfCheck{Chunks: 1000, Bunched: 500, LateBunch: 30, GapMedian: 500 * time.Microsecond, Planned: 10}, "ok: timing held (3.0% of chunks"},
		// Bunched by the server (read at once): no failure.
		{"server bunched", SelfCheck{Chunks: 1000, Bunched: 500, Planned: 10}, "ok: timing held"},
		{"no kernel times", SelfCheck{OK: 10, KernelTimed: 40, Planned: 10},
			"not verified: 60% of responses were timed when read, not by the kernel, so a late read would add to their latencies unseen"},
	}
	for _, c := range cases {
		if got := verdict(c.r); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// Check over records: the planned rate counts the schedule's slots (a
// conversation is one slot and many records; an interrupted run keeps only
// some records), a closed-loop run has no schedule-anchored figures, and
// the chunk, send and source figures add up.
func TestCheck(t *testing.T) {
	var recs []record.Record
	for i := range 10 {
		recs = append(recs, record.Record{Sent: true, Success: i%5 != 4, Intended: float64(i / 5), Start: float64(i) / 10,
			End: float64(i)/10 + 0.5, Latency: 0.5, TTFT: 0.1, KernelTimed: true, SendDelay: 0.001 * float64(i),
			Chunks: 10, Bunched: 2, LateBunched: 1, OutputSource: record.OutputSource(1 + i%3)})
	}
	c := ClientStats{Lags: []float64{0, 0}, Cores: 2}
	// 2 slots (conversations of 5 rounds) planned 1 s apart.
	open := Check(recs, c, Shape{Duration: 2, Rate: 2, Slots: 2, LastSlot: 1}, 100)
	if open.Planned != 1 {
		t.Errorf("planned rate %v, want 1 (2 slots in 1 s), not 9 (10 records)", open.Planned)
	}
	if open.Anchored == nil || open.Chunks != 100 || open.Bunched != 20 || open.LateBunch != 10 || open.OK != 8 {
		t.Errorf("anchored %v chunks %d bunched %d late %d ok %d", open.Anchored != nil, open.Chunks, open.Bunched, open.LateBunch, open.OK)
	}
	if open.SendMax != 9*time.Millisecond || open.MaxInflight != 5 {
		t.Errorf("send max %v, max in flight %d; want 9 ms, 5", open.SendMax, open.MaxInflight)
	}
	if open.Sources[record.OutputServer] != 3 || open.Sources[record.OutputRetokenized] != 2 || open.Sources[record.OutputRequested] != 3 {
		t.Errorf("sources %v", open.Sources)
	}
	if !strings.Contains(open.Verdict, "10.0% of chunks bunched by late reads") {
		t.Errorf("verdict %q", open.Verdict)
	}
	closed := Check(recs, c, Shape{Duration: 2, Rate: math.Inf(1), Closed: true, Slots: 2}, 100)
	if closed.Anchored != nil || !math.IsInf(closed.Planned, 1) {
		t.Errorf("closed loop: anchored %v, planned %v", closed.Anchored, closed.Planned)
	}
}

// medianGap selects the median of the successful records' gaps, odd and
// even counts, long and negative gaps among them, as sorting them would.
func TestMedianGap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 10, 1001, 5000} {
		recs := make([]record.Record, 7)
		var all []float64
		for i := range n {
			r := &recs[i%len(recs)]
			d := time.Duration(rng.Int64N(int64(50 * time.Millisecond)))
			switch i % 97 {
			case 3:
				d = 5 * time.Second // past the 32-bit radix
			case 5:
				d = -time.Microsecond
			}
			r.Gaps.Append(d)
			if i%len(recs) != 6 {
				all = append(all, d.Seconds())
			}
		}
		for i := range recs {
			recs[i].Success = i != 6 // the failed one's gaps are not counted
		}
		want := time.Duration(0)
		if len(all) > 0 {
			slices.Sort(all)
			want = time.Duration(medianAt(len(all), func(k int) float64 { return all[k] }) * 1e9)
		}
		if got := medianGap(recs); got != want {
			t.Errorf("%d gaps: median %v, want %v", n, got, want)
		}
	}
}
