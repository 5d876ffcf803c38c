package sweep

import (
	"math"

	"benchserve/report"
)

// spreadOf is the spread of xs, its 95% interval for the mean by
// Student's t with n−1 degrees of freedom; one value has no spread (std
// 0, its interval the value itself).
func spreadOf(xs []float64) report.Spread {
	s := report.Spread{N: len(xs)}
	if s.N == 0 {
		return s
	}
	for _, x := range xs {
		s.Mean += x
	}
	s.Mean /= float64(s.N)
	if s.N > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.Std = math.Sqrt(ss / float64(s.N-1))
	}
	if s.Mean != 0 {
		s.CV = s.Std / math.Abs(s.Mean)
	}
	half := tQuantile975(s.N-1) * s.Std / math.Sqrt(float64(s.N))
	s.CILow, s.CIHigh = s.Mean-half, s.Mean+half
	return s
}

// t975 is the 0.975 quantile of Student's t for 1 to 30 degrees of
// freedom (the usual table, to 3 decimals); beyond, the normal 1.960.
var t975 = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

func tQuantile975(df int) float64 {
	switch {
	case df < 1:
		return 0
	case df <= len(t975):
		return t975[df-1]
	}
	return 1.960
}
