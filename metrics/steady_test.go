package metrics

import (
	"math"
	"testing"
	"time"

	"benchserve/record"
)

// req is a successful request sent at start, lasting lat seconds, whose
// tokens came at start+ttft and then after each gap (seconds); its text
// retokenizes to out tokens.
func req(start, lat, ttft float64, gaps []float64, out, in int) record.Record {
	var g record.Gaps
	for _, x := range gaps {
		g.Append(time.Duration(math.Round(x * 1e9)))
	}
	return record.Record{Sent: true, Success: true, Start: start, End: start + lat, Latency: lat, TTFT: ttft, Gaps: g,
		OutputLen: out, InputLen: in, TextTokens: out, TextCounted: true}
}

func failed(start, lat float64) record.Record {
	return record.Record{Sent: true, Start: start, End: start + lat, Latency: lat, Error: "500", ErrorKind: record.KindHTTP5xx}
}

// SGLang's unit tests' numbers (steady-state spec §1.5–1.6), and the
// edge cases of its rules: netting, the float ceil, first-wins ties, the
// closed end for completions and tokens, the half-open one for inputs,
// the ceil−1 bucket rule.
func TestSteadyGolden(t *testing.T) {
	abc := []record.Record{
		req(0, 10, 1, []float64{2, 2, 2, 2}, 5, 100), // A: tokens at 1,3,5,7,9
		req(2, 6, 1, []float64{2, 2}, 3, 200),        // B: 3,5,7
		req(2, 6, 1, []float64{2, 2}, 3, 300),        // C
	}
	type want struct {
		start, end                  float64
		threshold, completed, input int
		inTput, out, outTput, retok float64
		avgConc                     float64
		peak                        int
		peakOut                     float64
	}
	cases := []struct {
		name  string
		recs  []record.Record
		ratio float64
		want  want
	}{
		{"A/B/C at 0.8", abc, 0.8, want{2, 8, 3, 2, 500, 500.0 / 6, 9, 1.5, 1.5, 3, 3, 3}},
		{"two [0,2] and two [3,7] at 1.0: the longest span",
			[]record.Record{req(0, 2, 1, []float64{1}, 2, 1), req(0, 2, 1, []float64{1}, 2, 1),
				req(3, 4, 1, []float64{1, 1, 1}, 4, 1), req(3, 4, 1, []float64{1, 1, 1}, 4, 1)},
			1, want{3, 7, 2, 2, 2, 0.5, 8, 2, 2, 2, 2, 2}},
		{"two [0,4], ttft 1, ITL 1,1,1, 4 tokens, prompt 4",
			[]record.Record{req(0, 4, 1, []float64{1, 1, 1}, 4, 4), req(0, 4, 1, []float64{1, 1, 1}, 4, 4)},
			1, want{0, 4, 2, 2, 8, 2, 8, 2, 2, 2, 2, 2}},
		// 3 × 0.7 = 2.0999999999999996: threshold 3, so the window is the
		// stretch at 3, not the longer one at 2 or more.
		{"float ceil 3 × 0.7",
			[]record.Record{req(0, 10, 1, nil, 1, 1), req(0, 10, 1, nil, 1, 1), req(4, 2, 1, nil, 1, 1)},
			0.7, want{4, 6, 3, 1, 1, 0.5, 1, 0.5, 0.5, 3, 3, 1}},
		// An end and a start at one instant net out: in flight stays 1,
		// never 2, and the window is the whole [0,4].
		{"an end and a start at the same instant",
			[]record.Record{req(0, 2, 2, nil, 1, 1), req(2, 2, 2, nil, 1, 1)},
			1, want{0, 4, 1, 2, 2, 0.5, 2, 0.5, 0.5, 1, 1, 1}},
		{"equal spans: the first wins",
			[]record.Record{req(0, 2, 1, nil, 1, 1), req(0, 2, 1, nil, 1, 1), req(5, 2, 1, nil, 1, 1), req(5, 2, 1, nil, 1, 1)},
			1, want{0, 2, 2, 2, 2, 1, 2, 1, 1, 2, 2, 2}},
		// Tokens at 0.5, 1 and 3 over the window [0,3]: the one at 1 is on
		// a boundary and belongs to the first second (ceil−1), the one at
		// window_end (3) is inside.
		{"a token on a bucket boundary and one at window_end",
			[]record.Record{req(0, 3, 0.5, []float64{0.5, 2}, 3, 7)},
			1, want{0, 3, 1, 1, 7, 7.0 / 3, 3, 1, 1, 1, 1, 2}},
		{"a single request, with failures beside it",
			[]record.Record{failed(0, 9), req(1, 2.5, 1, []float64{1}, 2, 5), failed(2, 0)},
			0.5, want{1, 3.5, 1, 1, 5, 2, 2, 0.8, 0.8, 1, 1, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := ComputeSteady(c.recs, c.ratio, nil)
			w := c.want
			got := want{st.WindowStart, st.WindowEnd, st.Threshold, st.Completed, st.TotalInput, st.InputThroughput,
				st.TotalOutput, st.OutputThroughput, st.OutputThroughputRetokenized, st.AverageConcurrency,
				st.PeakConcurrency, st.PeakOutputThroughput}
			ok := st.Found && got.threshold == w.threshold && got.completed == w.completed && got.input == w.input && got.peak == w.peak
			for _, p := range [][2]float64{{got.start, w.start}, {got.end, w.end}, {got.inTput, w.inTput}, {got.out, w.out},
				{got.outTput, w.outTput}, {got.retok, w.retok}, {got.avgConc, w.avgConc}, {got.peakOut, w.peakOut},
				{st.Duration, w.end - w.start}, {st.TotalOutputRetokenized, w.out}} {
				ok = ok && closeTo(p[0], p[1])
			}
			if !ok {
				t.Errorf("got %+v (found %v)\nwant %+v", got, st.Found, w)
			}
		})
	}
}

// The threshold is the float64 product's ceiling, at least 1.
func TestSteadyThreshold(t *testing.T) {
	for _, c := range []struct {
		peak  int
		ratio float64
		want  int
	}{{100, 0.07, 8}, {3, 0.7, 3}, {64, 0.95, 61}, {3, 0.8, 3}, {10, 1, 10}, {1, 0.01, 1}, {7, 1e-9, 1}} {
		if got := threshold(c.peak, c.ratio); got != c.want {
			t.Errorf("threshold(%d, %v) = %d, want %d", c.peak, c.ratio, got, c.want)
		}
	}
}

// No success with a positive latency: no window, and nothing is counted.
func TestSteadyAllFailed(t *testing.T) {
	ok0 := req(1, 0, 0, nil, 1, 1)
	st := ComputeSteady([]record.Record{failed(0, 1), failed(0.5, 2), ok0}, 0.9, nil)
	if st.Found || st.Completed != 0 || st.Duration != 0 || st.Ratio != 0.9 {
		t.Errorf("all failed: %+v", st)
	}
	if st := ComputeSteady(nil, 1, nil); st.Found {
		t.Errorf("no records: %+v", st)
	}
}

// Our figures: the requests sent in [start, end), their failures and
// latencies, and the output counted per token by the server's counts.
func TestSteadyOurs(t *testing.T) {
	recs := []record.Record{
		req(0, 10, 1, []float64{2, 2, 2, 2}, 5, 100), // before the window
		req(2, 6, 1, []float64{2, 2}, 3, 200),
		req(2, 6, 1, []float64{2, 2}, 3, 300),
		req(8, 1, 0.5, nil, 1, 1), // at window_end: not started in it
		failed(3, 1),
	}
	st := ComputeSteady(recs, 0.8, nil)
	// D ends outside the window and starts at its end: neither completed
	// in it nor its input counted (half-open [start, end) for inputs).
	if st.WindowStart != 2 || st.WindowEnd != 8 || st.TotalInput != 500 || st.Completed != 2 {
		t.Fatalf("window [%v, %v], input %d, completed %d; want [2, 8], 500, 2", st.WindowStart, st.WindowEnd, st.TotalInput, st.Completed)
	}
	if st.Started != 3 || st.Failed != 1 || st.E2E.Mean != 6000 || st.TTFT.Median != 1000 || st.TPOT.Mean != 2500 || st.ITL.P99 != 2000 {
		t.Errorf("started %d failed %d e2e %+v ttft %+v tpot %+v itl %+v", st.Started, st.Failed, st.E2E, st.TTFT, st.TPOT, st.ITL)
	}
	if st.PerTokenOutput != nil {
		t.Errorf("per-token output %v without per-chunk counts", *st.PerTokenOutput)
	}

	// 8 tokens in chunks of 3 (the first: what the counts leave), 1, 3, 1
	// at 1, 2, 3, 4; the window [2, 4] holds 5 of them, where SGLang's even
	// spread says 8 × 3/4 = 6 (and 1 of the other request).
	a := req(0, 4, 1, []float64{1, 1, 1}, 8, 1)
	a.ChunkTokens = []int32{1, 3, 1}
	recs = []record.Record{a, req(2, 4, 1, nil, 1, 1)}
	st = ComputeSteady(recs, 1, nil)
	if st.WindowStart != 2 || st.WindowEnd != 4 || st.PerTokenOutput == nil || *st.PerTokenOutput != 5 || st.PerTokenRequests != 1 || !closeTo(st.TotalOutput, 6+1) {
		t.Errorf("window [%v, %v], per-token %v over %d, spread %v; want [2, 4], 5 over 1, 7", st.WindowStart, st.WindowEnd, st.PerTokenOutput, st.PerTokenRequests, st.TotalOutput)
	}
}

func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }
