package metrics

// Percentile is np.percentile(x, p) with the default "linear" method over
// n sorted values, at(k) being the k-th smallest (from 0): the definition
// of every percentile in a result line, for code that must match it (a
// bootstrap of those figures). n must not be 0.
func Percentile(n int, p float64, at func(int) float64) float64 { return percentileAt(n, p, at) }

// Median is np.median over n sorted values, at(k) the k-th smallest. n
// must not be 0.
func Median(n int, at func(int) float64) float64 { return medianAt(n, at) }
