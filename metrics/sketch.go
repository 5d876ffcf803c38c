package metrics

import (
	"math"

	"github.com/DataDog/sketches-go/ddsketch"
)

// SketchError is the soak mode's worst-case relative error of a
// percentile: each is within 1% of a value at its rank.
//
// DDSketch (DataDog/sketches-go) rather than our hist package or an HDR
// histogram: its error is relative and stated for every quantile, its
// sketches merge without loss (shards), and its collapsing store caps
// its size whatever the run's length or the values' range.
const SketchError = 0.01

// sketchBins caps a sketch's bins: at 1% error, 2,048 bins span a range
// of 10^17 (1 ns to 10^8 s), so nothing is collapsed in practice. Each
// sketch holds at most 16 KiB.
const sketchBins = 2048

// Dist is one figure's values in fixed memory: the count, mean, standard
// deviation (Welford's) and maximum exactly, the percentiles from a
// DDSketch within SketchError.
type Dist struct {
	sk        *ddsketch.DDSketch
	n         int
	mean, m2  float64
	max       float64
	maxSet    bool
	sumInFold float64
}

// NewDist is an empty Dist.
func NewDist() *Dist {
	sk, err := ddsketch.LogCollapsingLowestDenseDDSketch(SketchError, sketchBins)
	if err != nil {
		panic(err) // the constants above are valid
	}
	return &Dist{sk: sk}
}

// Add counts v; NaN and infinities are not values and are left out.
func (d *Dist) Add(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	_ = d.sk.Add(v) // fails on NaN only
	d.n++
	delta := v - d.mean
	d.mean += delta / float64(d.n)
	d.m2 += delta * (v - d.mean)
	d.sumInFold += v
	if !d.maxSet || v > d.max {
		d.max, d.maxSet = v, true
	}
}

// Merge adds o's values to d.
func (d *Dist) Merge(o *Dist) {
	if o.n == 0 {
		return
	}
	_ = d.sk.MergeWith(o.sk) // same mapping: cannot fail
	n := d.n + o.n
	delta := o.mean - d.mean
	d.m2 += o.m2 + delta*delta*float64(d.n)*float64(o.n)/float64(n)
	d.mean += delta * float64(o.n) / float64(n)
	d.n = n
	d.sumInFold += o.sumInFold
	if !d.maxSet || (o.maxSet && o.max > d.max) {
		d.max, d.maxSet = o.max, o.maxSet
	}
}

// Len is the number of values added.
func (d *Dist) Len() int { return d.n }

// Sum is the values' sum.
func (d *Dist) Sum() float64 { return d.sumInFold }

// Quantile is the value at rank q·(n−1), within SketchError; 0 when empty.
func (d *Dist) Quantile(q float64) float64 {
	if d.n == 0 {
		return 0
	}
	v, err := d.sk.GetValueAtQuantile(q)
	if err != nil {
		return 0
	}
	// The sketch returns a bin's representative value, which may pass the
	// exact maximum by up to the error: the maximum bounds it.
	return min(v, d.max)
}

// Stats are d's statistics in milliseconds, as Describe gives them, and
// More at ps (percent).
func (d *Dist) Stats(ps []float64) Stats {
	if d.n == 0 {
		return Stats{More: zeros(ps)}
	}
	st := Stats{
		Mean: d.mean * 1000, Std: math.Sqrt(d.m2/float64(d.n)) * 1000,
		Median: d.Quantile(0.5) * 1000, P90: d.Quantile(0.9) * 1000,
		P95: d.Quantile(0.95) * 1000, P99: d.Quantile(0.99) * 1000,
		Max: d.max * 1000,
	}
	if len(ps) > 0 {
		st.More = make([]float64, len(ps))
		for i, p := range ps {
			st.More[i] = d.Quantile(p/100) * 1000
		}
	}
	return st
}
