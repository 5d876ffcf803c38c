package page

import (
	"math"
	"strings"
	"testing"
	"time"

	"benchserve/metrics"
	"benchserve/record"
)

// withGaps is a successful request with the gaps ms (in ms).
func withGaps(ttft float64, ms ...float64) record.Record {
	r := record.Record{Success: true, TTFT: ttft / 1000, Latency: ttft / 1000}
	for _, g := range ms {
		r.Gaps.Append(time.Duration(g * 1e6))
		r.Latency += g / 1000
	}
	return r
}

// A resample's figures are the result line's: the same NumPy linear
// percentiles over the values of the requests drawn, each as many times
// as it was drawn. Requests {1, 2}, {3}, {10, 20, 30} ms drawn 2, 0 and
// 1 times pool to 1 1 2 2 10 20 30: mean 66/7, median 2, P99 at the
// virtual index 6 × 0.99 = 5.94, 20 + 0.94 × 10 = 29.4.
func TestCompareResampleIsWholeRequests(t *testing.T) {
	s := samplesMs([]record.Record{withGaps(1, 1, 2), withGaps(2, 3), withGaps(3, 10, 20, 30)})[1]
	mean, med, p99 := s.weighted([]int32{2, 0, 1}, make([]int, len(s.v)))
	if math.Abs(mean-66.0/7) > 1e-12 || med != 2 || math.Abs(p99-29.4) > 1e-12 {
		t.Errorf("mean %v median %v p99 %v, want %v 2 29.4", mean, med, p99, 66.0/7)
	}
	// Each drawn once: metrics' own figures of the pooled gaps.
	mean, med, p99 = s.weighted([]int32{1, 1, 1}, make([]int, len(s.v)))
	st := metrics.Describe([]float64{0.001, 0.002, 0.003, 0.010, 0.020, 0.030})
	if math.Abs(mean-st.Mean) > 1e-9 || math.Abs(med-st.Median) > 1e-9 || math.Abs(p99-st.P99) > 1e-9 {
		t.Errorf("got %v %v %v, metrics %v %v %v", mean, med, p99, st.Mean, st.Median, st.P99)
	}
}

// Gaps of one request move together: 9 requests of 100 gaps of 1 ms and
// one of 100 gaps of 50 ms. A resample of 10 requests holds k ~ Bin(10,
// 0.1) slow ones, so its mean ITL, 1 + 4.9 k ms, has a std of 4.65 ms and
// the difference of two such runs one of 6.6 ms: the interval of B − A
// for two identical runs spans about ±13 ms. Resampling single gaps
// (1,000 of them) would give about ±1.3 ms and call 3 ms beyond noise.
func TestCompareClusteredGapsWideInterval(t *testing.T) {
	var recs []record.Record
	for i := range 10 {
		g := 1.0
		if i == 9 {
			g = 50
		}
		gaps := make([]float64, 100)
		for j := range gaps {
			gaps[j] = g
		}
		recs = append(recs, withGaps(10+float64(i), gaps...))
	}
	ci, _ := bootstrap(recs, recs)
	iv, ok := ci["mean_itl_ms"]
	if !ok || iv[0] > -5 || iv[1] < 5 {
		t.Errorf("mean ITL interval %v, want wider than ±5 ms", iv)
	}
}

// P99 from 40 requests: no verdict, "too few requests"; from 600 (6
// beyond it) a verdict. The mean and median of 40 get theirs.
func TestCompareTooFewForP99(t *testing.T) {
	mk := func(n int, shift float64) []record.Record {
		var rs []record.Record
		for i := range n {
			rs = append(rs, withGaps(10+float64(i%40)+shift, 5, 5))
		}
		return rs
	}
	line := Line{Num: map[string]float64{"p99_ttft_ms": 1, "mean_ttft_ms": 1, "median_ttft_ms": 1}}
	byKey := func(rows []Row) map[string]Row {
		m := map[string]Row{}
		for _, r := range rows {
			m[r.Key] = r
		}
		return m
	}
	c := &Compared{NameA: "a", NameB: "b", A: line, B: line, RA: mk(40, 0), RB: mk(40, 30)}
	rows := byKey(Rows(c))
	p99 := rows["p99_ttft_ms"]
	if p99.Beyond != nil || p99.CILow != nil || p99.TooFew != "too few requests: A has 40, a P99 needs 5 beyond it (500 in all)" {
		t.Errorf("P99 of 40: %+v", p99)
	}
	if m := rows["mean_ttft_ms"]; m.Beyond == nil || !*m.Beyond || m.TooFew != "" {
		t.Errorf("mean of 40 shifted by 30 ms: %+v", m)
	}
	var sb strings.Builder
	Text(&sb, c, Rows(c))
	if !strings.Contains(sb.String(), "too few requests: A has 40") {
		t.Errorf("text:\n%s", sb.String())
	}
	c.RA, c.RB = mk(600, 0), mk(600, 30)
	if p := byKey(Rows(c))["p99_ttft_ms"]; p.Beyond == nil || !*p.Beyond || p.TooFew != "" {
		t.Errorf("P99 of 600: %+v", p)
	}
	// The P99 ITL of 600 requests whose gaps at or above it come from 3.
	ra := mk(600, 0)
	for i := range 3 {
		ra[i] = withGaps(10, 90, 90, 90, 90, 90, 90, 90, 90)
	}
	c.RA = ra
	if p := byKey(Rows(&Compared{A: Line{Num: map[string]float64{"p99_itl_ms": 1}}, B: line, RA: ra, RB: mk(600, 0)}))["p99_itl_ms"]; p.TooFew != "too few requests: A's gaps at or above its P99 come from 3, a P99 needs 5" {
		t.Errorf("P99 ITL: %+v", p)
	}
}
