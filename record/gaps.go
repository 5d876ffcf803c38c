package record

import (
	"encoding/binary"
	"iter"
	"slices"
	"time"
)

// Gaps holds a request's gaps between content chunks, in order, compactly:
// each is whole nanoseconds (the resolution of the clock it comes from, so
// nothing is lost), stored as its difference from the gap before, zigzag
// varint-coded (7 bits a byte): a steady stream's gaps differ by little, so
// most take 3 bytes (a difference under ±1 ms) or 4 (under ±134 ms). Gaps
// are read in order (All, AppendSeconds). The zero value is empty.
type Gaps struct {
	b    []byte
	n    int
	last time.Duration // the last gap appended
}

// GapsOf returns the gaps ds.
func GapsOf(ds ...time.Duration) Gaps {
	var g Gaps
	for _, d := range ds {
		g.Append(d)
	}
	return g
}

// Append adds a gap.
func (g *Gaps) Append(d time.Duration) {
	g.b = binary.AppendUvarint(g.b, zigzag(int64(d-g.last)))
	g.last = d
	g.n++
}

// zigzag maps small differences of either sign to small numbers.
func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// next decodes the gap at the start of b, after the gap prev; k is its
// size in bytes.
func next(b []byte, prev time.Duration) (d time.Duration, k int) {
	u, k := uvarint(b)
	return prev + time.Duration(int64(u>>1)^-int64(u&1)), k
}

// Len is the number of gaps.
func (g Gaps) Len() int { return g.n }

// All yields the gaps with their indexes, in order.
func (g Gaps) All() iter.Seq2[int, time.Duration] {
	return func(yield func(int, time.Duration) bool) {
		var d time.Duration
		b := g.b
		for i := 0; len(b) > 0; i++ {
			var k int
			d, k = next(b, d)
			b = b[k:]
			if !yield(i, d) {
				return
			}
		}
	}
}

// AppendSeconds appends the gaps in seconds (time.Duration.Seconds) to dst.
func (g Gaps) AppendSeconds(dst []float64) []float64 {
	dst = slices.Grow(dst, g.n)
	var d time.Duration
	for b := g.b; len(b) > 0; {
		var k int
		d, k = next(b, d)
		b = b[k:]
		dst = append(dst, d.Seconds())
	}
	return dst
}

// Seconds returns the gaps in seconds, in order.
func (g Gaps) Seconds() []float64 { return g.AppendSeconds(make([]float64, 0, g.n)) }

// Clone returns a copy that holds no unused capacity.
func (g Gaps) Clone() Gaps {
	return Gaps{b: append(make([]byte, 0, len(g.b)), g.b...), n: g.n, last: g.last}
}

// Reset empties g, keeping its storage for reuse.
func (g *Gaps) Reset() {
	g.b, g.n, g.last = g.b[:0], 0, 0
}

// uvarint decodes a varint Append wrote (never malformed).
func uvarint(b []byte) (uint64, int) {
	var v uint64
	for i, c := range b {
		if c < 0x80 {
			return v | uint64(c)<<(7*i), i + 1
		}
		v |= uint64(c&0x7f) << (7 * i)
	}
	return v, len(b)
}
