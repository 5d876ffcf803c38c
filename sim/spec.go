package sim

import (
	"math"
	"math/rand/v2"
)

// maxAcceptLength bounds --speculative-accept-length.
const maxAcceptLength = 16

// specDist draws the tokens one request gains in one speculative decode
// step, as an EAGLE-style chain verify does: a draft of depth k, each draft
// token accepted with probability q while all before it were, plus the one
// token the target model always adds. So n = 1 + (accepted prefix length),
// n ∈ [1, k+1], and E[n] = 1 + q + q² + … + q^k. k = ⌈2(X−1)⌉ and q is solved
// so that E[n] = X, the configured mean accept length.
type specDist struct {
	k int
	q float64
}

// newSpecDist returns the distribution with mean x; x <= 1 means off (n = 1).
func newSpecDist(x float64) specDist {
	if x <= 1 {
		return specDist{}
	}
	k := int(math.Ceil(2 * (x - 1)))
	lo, hi := 0.0, 1.0
	for range 100 {
		q := (lo + hi) / 2
		if chainMean(k, q) < x {
			lo = q
		} else {
			hi = q
		}
	}
	return specDist{k: k, q: (lo + hi) / 2}
}

// chainMean is 1 + q + … + q^k.
func chainMean(k int, q float64) float64 {
	s, p := 1.0, 1.0
	for range k {
		p *= q
		s += p
	}
	return s
}

func (d specDist) on() bool { return d.k > 0 }

func (d specDist) draw(r *rand.Rand) int {
	n := 1
	for range d.k {
		if r.Float64() >= d.q {
			break
		}
		n++
	}
	return n
}

// eosAfter draws how many tokens a request generates before EOS: after each
// token generation stops with probability p, so the count K is geometric,
// P(K = k) = (1−p)^(k−1)·p for k >= 1, mean 1/p. p = 0 never stops.
func eosAfter(r *rand.Rand, p float64) int {
	if p <= 0 {
		return math.MaxInt
	}
	u := 1 - r.Float64() // (0, 1]
	k := 1 + math.Floor(math.Log(u)/math.Log1p(-p))
	if k >= math.MaxInt32 {
		return math.MaxInt32
	}
	return int(k)
}
