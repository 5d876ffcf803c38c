package metrics

import (
	"math"
	"slices"
)

// The statistics below reproduce NumPy's results bit for bit, because the
// report prints and writes them with full precision. Go may fuse x*y+z into
// one FMA instruction (arm64, ppc64, s390x, riscv64, amd64 with GOAMD64=v3);
// the explicit float64 conversions forbid that wherever NumPy rounds a
// product before adding it.

// Describe returns the statistics of xs, given in seconds, in milliseconds:
// the reference tool's np.mean(xs)*1000 and so on. An empty xs gives zeros,
// as the reference's `xs or 0` does. xs is not modified.
func Describe(xs []float64) Stats {
	return describeInPlace(slices.Clone(xs))
}

// describeInPlace is Describe for a slice the caller owns: the sums run first
// in the given order (the order matters to the pairwise sum), then xs is
// sorted once for the median, the percentiles and the maximum.
func describeInPlace(xs []float64) Stats {
	return describeWith(xs, nil)
}

// describeWith is describeInPlace that also sets More to the percentiles ps
// of xs, in milliseconds (zeros for no values; nil for no ps).
func describeWith(xs []float64, ps []float64) Stats {
	if len(xs) == 0 {
		return Stats{More: zeros(ps)}
	}
	m := mean(xs)
	sd := stdAround(xs, m)
	slices.Sort(xs)
	st := Stats{Mean: m * 1000, Std: sd * 1000}
	at := func(k int) float64 { return xs[k] }
	orderStats(&st, len(xs), at)
	st.More = percentilesAt(len(xs), ps, at)
	return st
}

// percentilesAt is each of ps over n values, in milliseconds, at(k) being
// the k-th smallest.
func percentilesAt(n int, ps []float64, at func(k int) float64) []float64 {
	if len(ps) == 0 {
		return nil
	}
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i] = percentileAt(n, p, at) * 1000
	}
	return out
}

func zeros(ps []float64) []float64 {
	if len(ps) == 0 {
		return nil
	}
	return make([]float64, len(ps))
}

// orderStats sets the median, the percentiles and the maximum of st from n
// values, at(k) being the k-th smallest (from 0).
func orderStats(st *Stats, n int, at func(k int) float64) {
	st.Median = medianAt(n, at) * 1000
	st.P90 = percentileAt(n, 90, at) * 1000
	st.P95 = percentileAt(n, 95, at) * 1000
	st.P99 = percentileAt(n, 99, at) * 1000
	st.Max = at(n-1) * 1000
}

// sum mirrors np.sum / np.add.reduce over a 1-D float64 array in NumPy 2.3
// and later: the identity 0.0 plus one pairwise sum over the whole array
// (numpy/_core/src/umath/reduction.c, get_initial_from_ufunc; since gh-27883
// the buffered reduction is no longer cut into NPY_BUFSIZE = 8192 blocks when
// no operand needs a buffer). NumPy before 2.3 adds pairwise sums of
// 8192-value blocks left to right, so for longer lists its last bits may
// differ from these.
func sum(xs []float64) float64 {
	return 0 + pairwiseSum(xs)
}

// mean mirrors np.mean (numpy/_core/_methods.py _mean): sum, then one divide.
func mean(xs []float64) float64 {
	return sum(xs) / float64(len(xs))
}

// stdAround mirrors np.std with ddof=0 (numpy/_core/_methods.py _var and
// _std): sqrt(sum((x-m)**2) / n) with m = np.mean(x), the squares summed
// pairwise like any other array.
func stdAround(xs []float64, m float64) float64 {
	return math.Sqrt((0 + pairwiseSumSqDev(xs, m)) / float64(len(xs)))
}

// pairwiseBlock is numpy's PW_BLOCKSIZE.
const pairwiseBlock = 128

// pairwiseSum mirrors DOUBLE_pairwise_sum in
// numpy/_core/src/umath/loops_utils.h.src: a plain loop below 8 values,
// eight accumulators up to 128, else a split at n/2 rounded down to a
// multiple of 8.
func pairwiseSum(a []float64) float64 {
	n := len(a)
	switch {
	case n < 8:
		res := math.Copysign(0, -1) // numpy starts at -0.0 to keep -0 sums
		for _, v := range a {
			res += v
		}
		return res
	case n <= pairwiseBlock:
		r0, r1, r2, r3 := a[0], a[1], a[2], a[3]
		r4, r5, r6, r7 := a[4], a[5], a[6], a[7]
		i := 8
		for ; i < n-n%8; i += 8 {
			b := a[i : i+8 : i+8]
			r0 += b[0]
			r1 += b[1]
			r2 += b[2]
			r3 += b[3]
			r4 += b[4]
			r5 += b[5]
			r6 += b[6]
			r7 += b[7]
		}
		res := ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
		for ; i < n; i++ {
			res += a[i]
		}
		return res
	default:
		n2 := n / 2
		n2 -= n2 % 8
		return pairwiseSum(a[:n2]) + pairwiseSum(a[n2:])
	}
}

// pairwiseSumSqDev is pairwiseSum over (x-m)*(x-m), each square rounded on
// its own as NumPy's separate um.square pass does, without the temporary
// array.
func pairwiseSumSqDev(a []float64, m float64) float64 {
	sq := func(v float64) float64 {
		d := v - m
		return float64(d * d)
	}
	n := len(a)
	switch {
	case n < 8:
		res := math.Copysign(0, -1)
		for _, v := range a {
			res += sq(v)
		}
		return res
	case n <= pairwiseBlock:
		r0, r1, r2, r3 := sq(a[0]), sq(a[1]), sq(a[2]), sq(a[3])
		r4, r5, r6, r7 := sq(a[4]), sq(a[5]), sq(a[6]), sq(a[7])
		i := 8
		for ; i < n-n%8; i += 8 {
			b := a[i : i+8 : i+8]
			r0 += sq(b[0])
			r1 += sq(b[1])
			r2 += sq(b[2])
			r3 += sq(b[3])
			r4 += sq(b[4])
			r5 += sq(b[5])
			r6 += sq(b[6])
			r7 += sq(b[7])
		}
		res := ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
		for ; i < n; i++ {
			res += sq(a[i])
		}
		return res
	default:
		n2 := n / 2
		n2 -= n2 % 8
		return pairwiseSumSqDev(a[:n2], m) + pairwiseSumSqDev(a[n2:], m)
	}
}

// medianAt mirrors np.median (numpy/lib/_function_base_impl.py _median):
// np.mean of the middle value, or of the two middle values, of the sorted
// data; at(k) is its k-th value. n must not be 0.
func medianAt(n int, at func(int) float64) float64 {
	if n%2 == 1 {
		return at(n / 2)
	}
	return (at(n/2-1) + at(n/2)) / 2
}

// percentileAt mirrors np.percentile(x, p) with the default "linear"
// method (numpy/lib/_function_base_impl.py: percentile divides q by 100,
// _quantile takes the virtual index (n-1)*q, _get_indexes its neighbours,
// _get_gamma the fraction and _lerp interpolates); at(k) is the k-th value
// of the sorted data. n must not be 0.
func percentileAt(n int, p float64, at func(int) float64) float64 {
	q := p / 100
	virtual := float64(float64(n-1) * q) // rounded before virtual-prev, never fused
	if virtual >= float64(n-1) {
		return at(n - 1) // _get_indexes: at or past the end takes the last value
	}
	if virtual < 0 {
		return at(0)
	}
	prev := math.Floor(virtual)
	i := int(prev)
	return lerp(at(i), at(i+1), virtual-prev)
}

// lerp mirrors numpy's _lerp: a + (b-a)*t, computed from b's side when
// t >= 0.5 for better accuracy near b.
func lerp(a, b, t float64) float64 {
	d := b - a
	if t >= 0.5 {
		return b - float64(d*float64(1-t))
	}
	return a + float64(d*t)
}
