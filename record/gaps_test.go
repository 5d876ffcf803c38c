package record

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestGaps(t *testing.T) {
	ds := []time.Duration{0, 1, 127, 128, 16383, 16384, 10 * time.Millisecond, 1<<28 - 1, 1 << 28,
		math.MaxUint32, 5 * time.Second, -3, math.MaxInt64, math.MinInt64, 42}
	rng := rand.New(rand.NewPCG(1, 1))
	for range 1000 {
		ds = append(ds, time.Duration(rng.Int64N(1<<uint(rng.IntN(63)))))
	}
	g := GapsOf(ds...)
	if g.Len() != len(ds) {
		t.Fatalf("Len %d, want %d", g.Len(), len(ds))
	}
	n := 0
	for i, d := range g.All() {
		if i != n || d != ds[i] {
			t.Fatalf("gap %d (index %d) = %v, want %v", n, i, d, ds[n])
		}
		n++
	}
	if n != len(ds) {
		t.Fatalf("All yielded %d gaps, want %d", n, len(ds))
	}
	want := make([]float64, len(ds))
	for i, d := range ds {
		want[i] = d.Seconds()
	}
	if got := g.Seconds(); !slices.Equal(got, want) {
		t.Errorf("Seconds differ")
	}
	if got := g.AppendSeconds([]float64{-1}); got[0] != -1 || !slices.Equal(got[1:], want) {
		t.Errorf("AppendSeconds differs")
	}
	// A steady stream: 4 bytes for the first gap, then 3 while they
	// differ by less than 1 ms.
	if s := GapsOf(10*time.Millisecond, 10*time.Millisecond+900*time.Microsecond, 10*time.Millisecond); len(s.b) != 10 {
		t.Errorf("10, 10.9 and 10 ms take %d bytes, want 10", len(s.b))
	}
	// A clone is exact in size and shares nothing; a reset keeps nothing.
	c := g.Clone()
	g.Reset()
	g.Append(time.Hour)
	if cap(c.b) != len(c.b) || c.Len() != len(ds) || !slices.Equal(c.Seconds(), want) {
		t.Errorf("clone changed")
	}
	if g.Len() != 1 || !slices.Equal(g.Seconds(), []float64{3600}) {
		t.Errorf("after Reset: %v", g.Seconds())
	}
	// Stopping early.
	for i := range c.All() {
		if i == 2 {
			break
		}
	}
	var zero Gaps
	if zero.Len() != 0 || len(zero.Seconds()) != 0 || zero.Clone().Len() != 0 {
		t.Error("zero Gaps not empty")
	}
}
