package pyrand

import (
	"math"
	"sort"
)

// NumPy is NumPy's legacy global RandomState (np.random.seed and friends).
type NumPy struct {
	m        mt
	gauss    float64
	hasGauss bool
}

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

// Gauss is np.random.standard_normal(): the legacy polar Box-Muller method,
// which keeps the second value of each pair for the next call.
func (n *NumPy) Gauss() float64 {
	if n.hasGauss {
		n.hasGauss = false
		return n.gauss
	}
	var x1, x2, r2 float64
	for {
		x1 = 2*n.m.double() - 1
		x2 = 2*n.m.double() - 1
		r2 = x1*x1 + x2*x2
		if r2 < 1 && r2 != 0 {
			break
		}
	}
	f := math.Sqrt(-2 * math.Log(r2) / r2)
	n.gauss, n.hasGauss = f*x1, true
	return f * x2
}

// Gamma is np.random.gamma(shape, scale) with the legacy algorithms:
// exponential for shape 1, Johnk-style rejection below 1, and
// Marsaglia-Tsang above.
func (n *NumPy) Gamma(shape, scale float64) float64 {
	return scale * n.standardGamma(shape)
}

func (n *NumPy) standardGamma(shape float64) float64 {
	switch {
	case shape == 1:
		return -math.Log(1 - n.m.double())
	case shape == 0:
		return 0
	case shape < 1:
		for {
			u := n.m.double()
			v := -math.Log(1 - n.m.double())
			if u <= 1-shape {
				if x := math.Pow(u, 1/shape); x <= v {
					return x
				}
			} else {
				y := -math.Log((1 - u) / shape)
				if x := math.Pow(1-shape+shape*y, 1/shape); x <= v+y {
					return x
				}
			}
		}
	}
	b := shape - 1.0/3.0
	c := 1 / math.Sqrt(9*b)
	for {
		var x, v float64
		for {
			x = n.Gauss()
			v = 1 + c*x
			if v > 0 {
				break
			}
		}
		v = v * v * v
		u := n.m.double()
		if u < 1-0.0331*(x*x)*(x*x) {
			return b * v
		}
		if math.Log(u) < 0.5*x*x+b*(1-v+math.Log(v)) {
			return b * v
		}
	}
}
