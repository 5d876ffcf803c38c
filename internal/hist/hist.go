// Package hist is a histogram of durations with bounded relative error,
// for figures taken too often to keep each value (the delay of every read
// of every stream): 8 buckets per power of two of nanoseconds, so a
// quantile read from it is within 12.5% of the true value.
package hist

import (
	"math/bits"
	"time"
)

// sub is log2 of the buckets per power of two.
const sub = 3

// nBuckets covers 0 to 2^44 ns (about 4.9 hours); longer values count in
// the last bucket.
const nBuckets = (44 - sub + 1) << sub

// H counts durations. The zero value is empty; an H is not safe for
// concurrent use.
type H struct {
	n      [nBuckets]uint64
	count  uint64
	max    time.Duration
	maxSet bool
}

// index is the bucket of v ns: v itself below 8, then 8 buckets for each
// power of two.
func index(v uint64) int {
	if v < 1<<sub {
		return int(v)
	}
	e := bits.Len64(v) - sub - 1 // v>>e is in [8, 16)
	i := (e+1)<<sub + int(v>>e) - 1<<sub
	return min(i, nBuckets-1)
}

// upper is the largest value bucket i holds.
func upper(i int) time.Duration {
	if i < 1<<sub {
		return time.Duration(i)
	}
	e := i>>sub - 1
	m := uint64(i&(1<<sub-1) + 1<<sub)
	return time.Duration((m+1)<<e - 1)
}

// Add counts d (negative counts as 0).
func (h *H) Add(d time.Duration) {
	d = max(d, 0)
	h.n[index(uint64(d))]++
	h.count++
	if !h.maxSet || d > h.max {
		h.max, h.maxSet = d, true
	}
}

// Merge adds o's counts to h.
func (h *H) Merge(o *H) {
	if o.count == 0 {
		return
	}
	for i, c := range o.n {
		h.n[i] += c
	}
	h.count += o.count
	if !h.maxSet || o.max > h.max {
		h.max, h.maxSet = o.max, true
	}
}

// Reset empties h.
func (h *H) Reset() { *h = H{} }

// Count is the number of values added.
func (h *H) Count() uint64 { return h.count }

// Max is the largest value added, exactly; 0 when empty.
func (h *H) Max() time.Duration { return h.max }

// Quantile is the upper end of the bucket that holds the value of rank
// ceil(q·count) (q in [0, 1]), never above Max; 0 when empty.
func (h *H) Quantile(q float64) time.Duration {
	if h.count == 0 {
		return 0
	}
	rank := uint64(q*float64(h.count) + 0.999999999)
	rank = max(1, min(rank, h.count))
	var seen uint64
	for i, c := range h.n {
		seen += c
		if seen >= rank {
			return min(upper(i), h.max)
		}
	}
	return h.max
}

// Above counts the values greater than d, to bucket precision: the values
// in d's own bucket do not count.
func (h *H) Above(d time.Duration) uint64 {
	var n uint64
	for i := index(uint64(max(d, 0))) + 1; i < nBuckets; i++ {
		n += h.n[i]
	}
	return n
}
