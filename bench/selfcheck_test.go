package bench

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"benchserve/internal/hist"
	"benchserve/internal/pyjson"
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
		r    checkResult
		dur  float64
		want []string
		not  []string
	}{
		{"idle", checkResult{cpu: 100 * time.Millisecond}, 10, []string{"the client had headroom and its timing held"}, []string{"distorted", "simulator"}},
		{"busy", checkResult{cpu: time.Duration(9 * cores * float64(time.Second))}, 10,
			[]string{"may be distorted: client CPU at 90% of"}, []string{"simulator"}},
		{"gc and lag", checkResult{gcPause: 200 * time.Millisecond, lagP99: 0.002}, 10,
			[]string{"GC pauses 2.0% of the run", "dispatch lag p99 2.00 ms"}, nil},
		{"with sim", checkResult{cpu: 100 * time.Millisecond, withSim: true}, 10,
			[]string{"the client had headroom and its timing held", "(CPU and GC figures include the in-process simulator of --sim)"}, nil},
		{"busy with sim", checkResult{cpu: time.Duration(9 * cores * float64(time.Second)), withSim: true}, 10,
			[]string{"may be distorted: client CPU at 90%", "include the in-process simulator"}, nil},
		// Low CPU, but the bytes waited to be read: timing failed.
		{"late reads", checkResult{cpu: 100 * time.Millisecond, readDelay: late}, 10,
			[]string{"may be distorted: read delay p99 7.", "(limit 5 ms)"}, []string{"headroom"}},
		{"late sends", checkResult{sendP99: 3 * time.Millisecond}, 10, []string{"send delay p99 3.00 ms"}, nil},
		// Without a schedule a request cannot leave late.
		{"late sends, closed loop", checkResult{sendP99: 3 * time.Millisecond, closed: true}, 10, []string{"timing held"}, []string{"distorted"}},
		{"bunched", checkResult{chunks: 1000, bunched: 500, lateBunch: 30}, 10, []string{"3.0% of chunks bunched by late reads"}, nil},
		// Bunched by the server (read at once): no failure.
		{"server bunched", checkResult{chunks: 1000, bunched: 500}, 10, []string{"timing held"}, []string{"distorted"}},
		{"no kernel times", checkResult{ok: 10, kernelTimed: 40}, 10, []string{"timing is not verified: 60% of responses were timed when read"}, []string{"distorted"}},
	}
	for _, c := range cases {
		got := verdict(c.r, c.dur)
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

// finish over records: the planned rate counts the schedule's slots (a
// conversation is one slot and many records; an interrupted run keeps only
// some records), a closed-loop run has no schedule-anchored figures (null,
// n/a), and the chunk, send and source figures add up.
func TestFinish(t *testing.T) {
	var recs []record.Record
	for i := range 10 {
		recs = append(recs, record.Record{Sent: true, Success: i%5 != 4, Intended: float64(i / 5), Start: float64(i) / 10,
			End: float64(i)/10 + 0.5, Latency: 0.5, TTFT: 0.1, KernelTimed: true, SendDelay: 0.001 * float64(i),
			Chunks: 10, Bunched: 2, LateBunched: 1, OutputSource: record.OutputSource(1 + i%3)})
	}
	c := &selfCheck{lags: []float64{0, 0}}
	// 2 slots (conversations of 5 rounds) planned 1 s apart.
	open := c.finish(checkRun{dur: 2, rate: 2, slots: 2, last: 1, outputTokens: 100}, recs)
	if open.planned != 1 {
		t.Errorf("planned rate %v, want 1 (2 slots in 1 s), not 9 (10 records)", open.planned)
	}
	if open.anchored == nil || open.chunks != 100 || open.bunched != 20 || open.lateBunch != 10 || open.ok != 8 {
		t.Errorf("anchored %v chunks %d bunched %d late %d ok %d", open.anchored != nil, open.chunks, open.bunched, open.lateBunch, open.ok)
	}
	if open.sendMax != 9*time.Millisecond || open.maxInflight != 5 {
		t.Errorf("send max %v, max in flight %d; want 9 ms, 5", open.sendMax, open.maxInflight)
	}
	if got := open.sourcesText(); got != "server 37.50%, retokenized 25.00%, requested 37.50%" {
		t.Errorf("sources %q", got)
	}
	if !strings.Contains(open.verdict, "10.0% of chunks bunched by late reads") {
		t.Errorf("verdict %q", open.verdict)
	}
	closed := c.finish(checkRun{dur: 2, rate: math.Inf(1), closed: true, slots: 2, last: 0}, recs)
	if closed.anchored != nil || !math.IsInf(closed.planned, 1) {
		t.Errorf("closed loop: anchored %v, planned %v", closed.anchored, closed.planned)
	}
	x := closed.extra(2)
	for _, k := range []string{"mean_ttft_from_schedule_ms", "p99_e2e_latency_from_schedule_ms", "mean_send_lag_ms"} {
		if v, _ := x.Get(k); string(v) != string(pyjson.Null) {
			t.Errorf("closed loop: %s = %s, want null", k, v)
		}
	}
	if v, _ := x.Get("output_tokens_source"); string(v) != `{"server": 3, "retokenized": 2, "requested": 3}` {
		t.Errorf("output_tokens_source = %s", v)
	}
	rows, _ := closed.rows(false)
	for _, r := range rows["Schedule-anchored latency"] {
		if r.Value != "n/a" {
			t.Errorf("closed loop: %s %s, want n/a", r.Label, r.Value)
		}
	}
	if v, _ := open.extra(2).Get("mean_ttft_from_schedule_ms"); string(v) == string(pyjson.Null) {
		t.Error("open loop: anchored TTFT is null")
	}
}

// A reply past its length warns once a run, naming the likely cause.
func TestRunawayWarnsOnce(t *testing.T) {
	var errb strings.Builder
	r := &runner{cfg: &Config{}, env: Env{Stderr: &errb}}
	r.cfg.Backend = "vllm-chat"
	r.runaway(100, 264)
	r.runaway(100, 300)
	if n := strings.Count(errb.String(), "warning:"); n != 1 || !strings.Contains(errb.String(), "ignore max_completion_tokens") ||
		!strings.Contains(errb.String(), "--request-timeout") {
		t.Errorf("%d warnings:\n%s", n, errb.String())
	}
}
