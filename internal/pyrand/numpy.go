package pyrand

import (
	"math"
	"sort"
)

// NumPy is NumPy's legacy global RandomState (np.random.seed and friends).
type NumPy struct{ m mt }

// NewNumPy returns a RandomState seeded as np.random.seed(seed) does for an
// int: init_genrand(seed). Seeds must fit in 32 bits, as NumPy requires.
func NewNumPy(seed uint32) *NumPy {
	n := &NumPy{}
	n.m.initGenrand(seed)
	return n
}

// RandomSample is np.random.random_sample(): a float in [0, 1).
func (n *NumPy) RandomSample() float64 { return n.m.double() }

// Uint32 is the next raw 32-bit word.
func (n *NumPy) Uint32() uint32 { return n.m.uint32() }

// RandInt is np.random.randint(low, high) for one value in [low, high):
// legacy masked rejection sampling. A one-value range draws nothing.
func (n *NumPy) RandInt(low, high int64) int64 {
	rng := uint64(high - low - 1)
	switch {
	case rng == 0:
		return low
	case rng <= math.MaxUint32:
		if rng == math.MaxUint32 {
			return low + int64(n.m.uint32())
		}
		mask := uint32(mask64(rng))
		for {
			if v := n.m.uint32() & mask; uint64(v) <= rng {
				return low + int64(v)
			}
		}
	default:
		mask := mask64(rng)
		for {
			v := (uint64(n.m.uint32())<<32 | uint64(n.m.uint32())) & mask
			if v <= rng {
				return low + int64(v)
			}
		}
	}
}

// RandInts is np.random.randint(low, high, size=k).
func (n *NumPy) RandInts(low, high int64, k int) []int64 {
	out := make([]int64, k)
	for i := range out {
		out[i] = n.RandInt(low, high)
	}
	return out
}

func mask64(v uint64) uint64 {
	v |= v >> 1
	v |= v >> 2
	v |= v >> 4
	v |= v >> 8
	v |= v >> 16
	v |= v >> 32
	return v
}

// Exponential is np.random.exponential(scale): scale * -log(1 - U).
func (n *NumPy) Exponential(scale float64) float64 {
	return scale * -math.Log(1.0-n.m.double())
}

// ChoiceP is np.random.choice(len(p), p=p) for one value: the first index
// whose normalised cumulative probability exceeds one uniform draw.
func (n *NumPy) ChoiceP(p []float64) int {
	cdf := make([]float64, len(p))
	sum := 0.0
	for i, v := range p {
		sum += v
		cdf[i] = sum
	}
	for i := range cdf {
		cdf[i] /= sum
	}
	u := n.m.double()
	return sort.Search(len(cdf), func(i int) bool { return cdf[i] > u })
}
