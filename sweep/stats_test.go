package sweep

import (
	"math"
	"testing"
)

// Over 10, 12, 14: mean 12, sample std 2, CV 1/6, and the 95% interval
// 12 ± 4.303 × 2/√3 = 12 ± 4.9687.
func TestSpreadByHand(t *testing.T) {
	s := spreadOf([]float64{10, 12, 14})
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-4 }
	if s.N != 3 || s.Mean != 12 || s.Std != 2 || !near(s.CV, 1.0/6) || !near(s.CILow, 7.0313) || !near(s.CIHigh, 16.9687) {
		t.Errorf("got %+v", s)
	}
	if one := spreadOf([]float64{5}); one.Std != 0 || one.CILow != 5 || one.CIHigh != 5 {
		t.Errorf("one value: %+v", one)
	}
	if tQuantile975(100) != 1.96 || tQuantile975(1) != 12.706 || tQuantile975(30) != 2.042 {
		t.Error("t quantiles")
	}
}
