package hist

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// Every value falls in a bucket whose bounds hold it, and the buckets are
// contiguous and ordered.
func TestBuckets(t *testing.T) {
	prev := time.Duration(-1)
	for i := range nBuckets {
		u := upper(i)
		if u <= prev {
			t.Fatalf("bucket %d ends at %d, not after %d", i, u, prev)
		}
		if i < nBuckets-1 {
			if got := index(uint64(prev + 1)); got != i {
				t.Fatalf("%d ns (start of bucket %d) is in bucket %d", prev+1, i, got)
			}
			if got := index(uint64(u)); got != i {
				t.Fatalf("%d ns (end of bucket %d) is in bucket %d", u, i, got)
			}
		}
		prev = u
	}
	if index(1<<62) != nBuckets-1 {
		t.Error("a huge value is not in the last bucket")
	}
}

// Quantiles are within 12.5% of the exact ones (above them, never below),
// Max is exact, and Merge adds.
func TestQuantile(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h, a, b H
	var vals []time.Duration
	for i := range 100000 {
		d := time.Duration(rng.ExpFloat64() * float64(300*time.Microsecond))
		vals = append(vals, d)
		h.Add(d)
		if i%2 == 0 {
			a.Add(d)
		} else {
			b.Add(d)
		}
	}
	a.Merge(&b)
	slices.Sort(vals)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999, 1} {
		exact := vals[int(q*float64(len(vals))+0.999999999)-1]
		got := h.Quantile(q)
		if got < exact || float64(got) > float64(exact)*1.125+1 {
			t.Errorf("q%v = %v, exact %v", q, got, exact)
		}
		if a.Quantile(q) != got {
			t.Errorf("merged q%v = %v, want %v", q, a.Quantile(q), got)
		}
	}
	if h.Max() != vals[len(vals)-1] || h.Count() != 100000 {
		t.Errorf("max %v count %d", h.Max(), h.Count())
	}
	// Above counts exactly the values past the end of d's bucket.
	end := upper(index(uint64(2 * time.Millisecond)))
	above := 0
	for _, v := range vals {
		if v > end {
			above++
		}
	}
	if got := int(h.Above(2 * time.Millisecond)); got != above {
		t.Errorf("Above(2ms) = %d, want %d (values past %v)", got, above, end)
	}
	var e H
	if e.Quantile(0.99) != 0 || e.Max() != 0 {
		t.Error("an empty histogram is not all zero")
	}
	e.Add(-5)
	if e.Quantile(1) != 0 {
		t.Error("a negative value does not count as 0")
	}
}
