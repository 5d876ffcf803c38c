package pyrand

import (
	"fmt"
	"math"
	"math/bits"
	"sort"
)

// Generator is NumPy's new-style generator, numpy.random.default_rng(seed):
// the PCG64 bit generator (XSL-RR output over a 128-bit LCG) seeded through
// a SeedSequence. The reference draws GSP's zipf group assignment from one.
type Generator struct {
	hi, lo       uint64 // state
	incHi, incLo uint64 // increment, odd
}

// pcg64Mult is PCG's default 128-bit multiplier.
const (
	pcg64MultHi = 0x2360ed051fc65da4
	pcg64MultLo = 0x4385df649fccf645
)

// NewGenerator returns numpy.random.default_rng(seed) for an int seed.
func NewGenerator(seed uint64) *Generator {
	words := NewSeedSequence(seed).GenerateState64(4)
	g := &Generator{}
	// pcg_setseq_128_srandom_r: state 0, inc = seq<<1 | 1, step, add the
	// initial state, step.
	g.incHi = words[2]<<1 | words[3]>>63
	g.incLo = words[3]<<1 | 1
	g.step()
	var c uint64
	g.lo, c = bits.Add64(g.lo, words[1], 0)
	g.hi, _ = bits.Add64(g.hi, words[0], c)
	g.step()
	return g
}

// step advances the LCG: state = state*mult + inc (mod 2^128).
func (g *Generator) step() {
	hi, lo := bits.Mul64(g.lo, pcg64MultLo)
	hi += g.hi*pcg64MultLo + g.lo*pcg64MultHi
	var c uint64
	g.lo, c = bits.Add64(lo, g.incLo, 0)
	g.hi, _ = bits.Add64(hi, g.incHi, c)
}

// Uint64 is the next 64-bit output: XSL-RR of the stepped state.
func (g *Generator) Uint64() uint64 {
	g.step()
	return bits.RotateLeft64(g.hi^g.lo, -int(g.hi>>58))
}

// Random is Generator.random(): 53 bits of the next output as a float in
// [0, 1).
func (g *Generator) Random() float64 {
	return float64(g.Uint64()>>11) * (1.0 / 9007199254740992.0)
}

// ChoiceP is Generator.choice(len(p), size=k, replace=True, p=p): the
// cumulative sum of p, divided by its last value, searched (side="right")
// for k uniform draws. p must be non-negative and sum to 1 within
// sqrt(machine epsilon), as NumPy checks.
func (g *Generator) ChoiceP(p []float64, k int) ([]int, error) {
	if len(p) == 0 {
		return nil, fmt.Errorf("choice: a cannot be empty unless no samples are taken")
	}
	for _, v := range p {
		if !(v >= 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("choice: probabilities are not non-negative")
		}
	}
	if math.Abs(kahanSum(p)-1) > math.Sqrt(0x1p-52) {
		return nil, fmt.Errorf("choice: probabilities do not sum to 1")
	}
	cdf := make([]float64, len(p))
	s := 0.0
	for i, v := range p {
		s += v
		cdf[i] = s
	}
	last := cdf[len(cdf)-1]
	for i := range cdf {
		cdf[i] /= last
	}
	out := make([]int, k)
	for i := range out {
		u := g.Random()
		out[i] = sort.Search(len(cdf), func(j int) bool { return cdf[j] > u })
	}
	return out, nil
}

// kahanSum is NumPy's compensated sum for choice's probability check.
func kahanSum(v []float64) float64 {
	if len(v) < 8 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s
	}
	sum, c := v[0], 0.0
	for _, x := range v[1:] {
		y := x - c
		t := sum + y
		c = (t - sum) - y
		sum = t
	}
	return sum
}

// PairwiseSum is NumPy's float64 add.reduce over a contiguous array:
// pairwise summation with eight accumulators in blocks of up to 128.
func PairwiseSum(v []float64) float64 {
	n := len(v)
	switch {
	case n < 8:
		s := 0.0 // -0.0 in NumPy, which only a sum of -0.0s tells apart
		if n > 0 {
			s = v[0]
			for _, x := range v[1:] {
				s += x
			}
		}
		return s
	case n <= 128:
		var r [8]float64
		copy(r[:], v[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := range r {
				r[j] += v[i+j]
			}
		}
		s := (r[0] + r[1]) + (r[2] + r[3]) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			s += v[i]
		}
		return s
	}
	n2 := n / 2
	n2 -= n2 % 8
	return PairwiseSum(v[:n2]) + PairwiseSum(v[n2:])
}
