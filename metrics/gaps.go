package metrics

import (
	"math"
	"slices"
	"time"

	"benchserve/record"
)

// describeGaps is describeInPlace over the gaps of the successful records
// of recs, in record order, in seconds (time.Duration.Seconds), n in all,
// without gathering them: a long run holds tens of millions. NumPy's
// pairwise sums visit the values in order, so they read them from the
// records as they go; the order statistics are selected by radix over the
// nanoseconds, since a gap's seconds never decrease as its nanoseconds grow.
func describeGaps(recs []record.Record, n int) Stats {
	return describeGapsWith(recs, n, nil)
}

// describeGapsWith is describeGaps that also sets More to the percentiles
// ps of the gaps, in milliseconds (their ranks selected with the others).
func describeGapsWith(recs []record.Record, n int, ps []float64) Stats {
	if n == 0 {
		return Stats{More: zeros(ps)}
	}
	c := gapCursor{recs: recs}
	m := (0 + c.pairwise(n, false, 0)) / float64(n)
	c = gapCursor{recs: recs}
	sd := math.Sqrt((0 + c.pairwise(n, true, m)) / float64(n))
	st := Stats{Mean: m * 1000, Std: sd * 1000}

	// The ranks orderStats reads, then their values.
	var ranks []int
	rank := func(k int) float64 { ranks = append(ranks, k); return 0 }
	orderStats(&st, n, rank)
	percentilesAt(n, ps, rank)
	vals := selectGaps(recs, n, ranks)
	at := func(k int) float64 { return vals[k].Seconds() }
	orderStats(&st, n, at)
	st.More = percentilesAt(n, ps, at)
	return st
}

// gapCursor reads the successful records' gaps in order, a record at a
// time.
type gapCursor struct {
	recs    []record.Record
	r       int       // the next record to read
	scratch []float64 // the last one read
	cur     []float64 // what is left of it
}

// fill reads the next len(buf) gaps, in seconds.
func (c *gapCursor) fill(buf []float64) {
	for k := 0; k < len(buf); {
		if len(c.cur) == 0 {
			r := &c.recs[c.r]
			c.r++
			if r.Success {
				c.scratch = r.Gaps.AppendSeconds(c.scratch[:0])
				c.cur = c.scratch
			}
			continue
		}
		n := copy(buf[k:], c.cur)
		k += n
		c.cur = c.cur[n:]
	}
}

// pairwise is pairwiseSum (sq: pairwiseSumSqDev around m) over the next n
// gaps: the same splits, each block of up to pairwiseBlock values read
// into a buffer first.
func (c *gapCursor) pairwise(n int, sq bool, m float64) float64 {
	if n <= pairwiseBlock {
		var buf [pairwiseBlock]float64
		c.fill(buf[:n])
		if sq {
			return pairwiseSumSqDev(buf[:n], m)
		}
		return pairwiseSum(buf[:n])
	}
	n2 := n / 2
	n2 -= n2 % 8
	return c.pairwise(n2, sq, m) + c.pairwise(n-n2, sq, m)
}

// selectGaps returns the gaps of the given ranks (the k-th smallest of the
// n gaps of the successful records, from 0). Gaps from 0 to 2^32-1 ns are
// placed by two counting passes, on their upper then lower 16 bits; the
// rare others (negative, or 4.29 s and longer) are sorted apart.
func selectGaps(recs []record.Record, n int, ranks []int) map[int]time.Duration {
	var hi [1 << 16]int
	var odd []time.Duration
	for i := range recs {
		if recs[i].Success {
			for _, d := range recs[i].Gaps.All() {
				if d >= 0 && d <= math.MaxUint32 {
					hi[d>>16]++
				} else {
					odd = append(odd, d)
				}
			}
		}
	}
	slices.Sort(odd)
	neg, _ := slices.BinarySearch(odd, 0)
	small := n - len(odd)

	out := make(map[int]time.Duration, len(ranks))
	type want struct{ rank, bucket, within int }
	var wants []want
	var slot [1 << 16]int8 // bucket -> 1 + its low-bits histogram, 0: none
	nslot := 0
	for _, k := range ranks {
		switch {
		case k < neg:
			out[k] = odd[k]
		case k >= neg+small:
			out[k] = odd[k-small]
		default:
			r, b := k-neg, 0
			for r >= hi[b] {
				r -= hi[b]
				b++
			}
			if slot[b] == 0 {
				nslot++
				slot[b] = int8(nslot)
			}
			wants = append(wants, want{k, b, r})
		}
	}
	if len(wants) == 0 {
		return out
	}
	lo := make([][1 << 16]int, nslot)
	for i := range recs {
		if recs[i].Success {
			for _, d := range recs[i].Gaps.All() {
				if d >= 0 && d <= math.MaxUint32 && slot[d>>16] > 0 {
					lo[slot[d>>16]-1][d&0xffff]++
				}
			}
		}
	}
	for _, w := range wants {
		h, r, v := &lo[slot[w.bucket]-1], w.within, 0
		for r >= h[v] {
			r -= h[v]
			v++
		}
		out[w.rank] = time.Duration(w.bucket<<16 | v)
	}
	return out
}
