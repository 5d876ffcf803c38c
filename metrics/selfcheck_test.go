package metrics

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"benchserve/internal/hist"
	"benchserve/record"
)

func TestVerdict(t *testing.T) {
	cores := float64(runtime.GOMAXPROCS(0))
	var late hist.H
	for range 100 {
		late.Add(7 * time.Millisecond)
	}
	cases := []struct {
		name string
		r    SelfCheck
		dur  float64
		want []string
		not  []string
	}{
		{"idle", SelfCheck{CPU: 100 * time.Millisecond}, 10, []string{"the client had headroom and its timing held"}, []string{"distorted", "simulator"}},
		{"busy", SelfCheck{CPU: time.Duration(9 * cores * float64(time.Second))}, 10,
			[]string{"may be distorted: client CPU at 90% of"}, []string{"simulator"}},
		{"gc and lag", SelfCheck{GCPause: 200 * time.Millisecond, LagP99: 0.002}, 10,
			[]string{"GC pauses 2.0% of the run", "dispatch lag p99 2.00 ms"}, nil},
		{"with sim", SelfCheck{CPU: 100 * time.Millisecond, WithSim: true}, 10,
			[]string{"the client had headroom and its timing held", "(CPU and GC figures include the in-process simulator of --sim)"}, nil},
		{"busy with sim", SelfCheck{CPU: time.Duration(9 * cores * float64(time.Second)), WithSim: true}, 10,
			[]string{"may be distorted: client CPU at 90%", "include the in-process simulator"}, nil},
		// Low CPU, but the bytes waited to be read: timing failed.
		{"late reads", SelfCheck{CPU: 100 * time.Millisecond, ReadDelay: late}, 10,
			[]string{"may be distorted: read delay p99 7.", "(limit 5 ms)"}, []string{"headroom"}},
		{"late sends", SelfCheck{SendP99: 3 * time.Millisecond}, 10, []string{"send delay p99 3.00 ms"}, nil},
		// Without a schedule a request cannot leave late.
		{"late sends, closed loop", SelfCheck{SendP99: 3 * time.Millisecond, Closed: true}, 10, []string{"timing held"}, []string{"distorted"}},
		{"bunched", SelfCheck{Chunks: 1000, Bunched: 500, LateBunch: 30}, 10, []string{"3.0% of chunks bunched by late reads"}, nil},
		// Bunched by the server (read at once): no failure.
		{"server bunched", SelfCheck{Chunks: 1000, Bunched: 500}, 10, []string{"timing held"}, []string{"distorted"}},
		{"no kernel times", SelfCheck{OK: 10, KernelTimed: 40}, 10, []string{"timing is not verified: 60% of responses were timed when read"}, []string{"distorted"}},
	}
	for _, c := range cases {
		got := verdict(c.r, c.dur, runtime.GOMAXPROCS(0))
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: verdict %q lacks %q", c.name, got, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(got, w) {
				t.Errorf("%s: verdict %q has %q", c.name, got, w)
			}
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
