package page

import "math"

// LTTB downsamples (x, y), x ascending, to at most n points with
// Largest-Triangle-Three-Buckets (Steinarsson 2013): the first and last
// points stay, and each bucket between keeps the point making the largest
// triangle with the point kept before it and the next bucket's mean, so
// peaks and dips survive. Fewer than n points come back as they are.
func LTTB(x, y []float64, n int) ([]float64, []float64) {
	if len(x) <= n || n < 3 {
		return x, y
	}
	ox, oy := make([]float64, 0, n), make([]float64, 0, n)
	ox, oy = append(ox, x[0]), append(oy, y[0])
	every := float64(len(x)-2) / float64(n-2)
	a := 0
	for i := 0; i < n-2; i++ {
		lo, hi := int(float64(i)*every)+1, int(float64(i+1)*every)+1
		nlo, nhi := hi, min(int(float64(i+2)*every)+1, len(x))
		if i == n-3 {
			nlo, nhi = len(x)-1, len(x)
		}
		var mx, my float64
		for k := nlo; k < nhi; k++ {
			mx += x[k]
			my += y[k]
		}
		cnt := float64(nhi - nlo)
		mx, my = mx/cnt, my/cnt
		best, area := lo, -1.0
		for k := lo; k < hi; k++ {
			ar := math.Abs((x[a]-mx)*(y[k]-y[a]) - (x[a]-x[k])*(my-y[a]))
			if ar > area {
				best, area = k, ar
			}
		}
		ox, oy = append(ox, x[best]), append(oy, y[best])
		a = best
	}
	return append(ox, x[len(x)-1]), append(oy, y[len(y)-1])
}
