package pyrand

import (
	"math"
	"reflect"
	"testing"
)

// Expected values were printed by NumPy 1.24: SeedSequence(seed).
// generate_state(4, np.uint64), then default_rng(seed)'s
// bit_generator.random_raw(3) and random(3).
func TestGeneratorMatchesNumPy(t *testing.T) {
	for _, c := range []struct {
		seed  uint64
		state [4]uint64
		raw   [3]uint64
		rnd   [3]float64
	}{
		{0, [4]uint64{0xdb2cd7e7b0f478be, 0xabf4641a2c71ba49, 0x20c6ed6d9d7b8d41, 0x2c4099de223c39d4},
			[3]uint64{0xa30febcfd9c2825f, 0x4510bdf882d9d721, 0xa7d3da94ecde8b8},
			[3]float64{0.6369616873214543, 0.2697867137638703, 0.04097352393619469}},
		{1, [4]uint64{0x672d8ee56d6791ff, 0x8ae19ca14eb1072c, 0x4915796d1322fc4a, 0xd0cc2bdcaba049bd},
			[3]uint64{0x8306bdf37922e4ff, 0xf35196bbc152a866, 0x24e7a4f608ec18cd},
			[3]float64{0.5118216247002567, 0.9504636963259353, 0.14415961271963373}},
		{42, [4]uint64{0x9f1e2e6dcd540ab7, 0xd57873dc79fb94b6, 0x7d282a1b64d420b7, 0x336579714692d5ff},
			[3]uint64{0xc621fbcd16d92688, 0x705a5661a791ffc1, 0xdbcd12c26eda1624},
			[3]float64{0.7739560485559633, 0.4388784397520523, 0.8585979199113825}},
		{1<<32 - 1, [4]uint64{0x2a05c5e276c1fe08, 0x2032e40fc20e8198, 0xed4ac06d787f4396, 0x56896cb4f3db80fd},
			[3]uint64{0x407f5fa930d8fd9f, 0x3814b22eb9684802, 0x498b7dcee8d8dc95},
			[3]float64{0.2519435680449965, 0.21906579628685663, 0.28728472043517017}},
		{123456789, [4]uint64{0x52f2396d4e66315e, 0x9bd9bd4308fb907e, 0x1883d99c7552ea9a, 0x6a530759b1c92e6c},
			[3]uint64{0x7182e9ce6a6f13c, 0xe81d7ead95d3cecd, 0xe1a3020c572e02b9},
			[3]float64{0.02771273928251694, 0.9067000554840227, 0.8813935546997342}},
	} {
		if got := NewSeedSequence(c.seed).GenerateState64(4); !reflect.DeepEqual(got, c.state[:]) {
			t.Errorf("seed %d: generate_state = %x, want %x", c.seed, got, c.state)
		}
		g := NewGenerator(c.seed)
		for i, want := range c.raw {
			if got := g.Uint64(); got != want {
				t.Errorf("seed %d: raw[%d] = %#x, want %#x", c.seed, i, got, want)
			}
		}
		g = NewGenerator(c.seed)
		for i, want := range c.rnd {
			if got := g.Random(); got != want {
				t.Errorf("seed %d: random[%d] = %v, want %v", c.seed, i, got, want)
			}
		}
	}
	// A seed of more than 32 bits is two words of entropy.
	if got, want := NewGenerator(1<<40+7).Random(), 0.829812891829413; got != want {
		t.Errorf("seed 2**40+7: random() = %v, want %v", got, want)
	}
}

// zipf is the reference's _zipf_group_probs.
func zipf(n int, alpha float64) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1 / math.Pow(float64(i+1), alpha)
	}
	s := PairwiseSum(w)
	for i := range w {
		w[i] /= s
	}
	return w
}

// Expected values were printed by NumPy 1.24:
// default_rng(seed).choice(n, size=k, replace=True, p=probs(n, alpha)).
func TestChoicePMatchesNumPy(t *testing.T) {
	for _, c := range []struct {
		seed    uint64
		n       int
		alpha   float64
		k       int
		head    []int
		sum     int
		counts8 []int
	}{
		{42, 64, 1.0, 1024, []int{21, 3, 32, 14, 0, 56, 20, 22, 0, 4, 2, 45, 11, 27, 4, 1, 7, 0, 27, 10, 19, 2, 55, 38, 22, 0, 4, 0, 0, 13, 18, 54, 2, 2, 4, 0, 0, 4, 1, 12},
			12786, []int{233, 99, 64, 54, 47, 35, 25, 29}},
		{1, 8, 1.5, 40, []int{0, 6, 0, 5, 0, 0, 3, 0, 1, 0, 2, 1, 0, 2, 0, 0, 0, 0, 0, 0, 2, 0, 0, 7, 6, 2, 1, 0, 0, 6, 0, 0, 1, 2, 1, 5, 0, 1, 0, 0},
			54, []int{22, 6, 5, 1, 0, 2, 3, 1}},
		{7, 5, 0.8, 30, []int{2, 4, 3, 0, 0, 3, 0, 3, 3, 1, 0, 0, 0, 1, 1, 1, 4, 3, 2, 4, 0, 0, 2, 0, 0, 1, 1, 4, 2, 1},
			46, []int{10, 7, 4, 5, 4}},
		{42, 3, 2.0, 20, []int{1, 0, 1, 0, 0, 2, 1, 1, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0, 1, 0}, 10, []int{12, 6, 2}},
	} {
		got, err := NewGenerator(c.seed).ChoiceP(zipf(c.n, c.alpha), c.k)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0
		counts := make([]int, c.n)
		for _, g := range got {
			sum += g
			counts[g]++
		}
		if !reflect.DeepEqual(got[:len(c.head)], c.head) || sum != c.sum || !reflect.DeepEqual(counts[:len(c.counts8)], c.counts8) {
			t.Errorf("seed %d, %d groups, alpha %v: got %v (sum %d, counts %v), want %v (sum %d, counts %v)",
				c.seed, c.n, c.alpha, got[:len(c.head)], sum, counts[:len(c.counts8)], c.head, c.sum, c.counts8)
		}
	}
}

func TestChoicePRejects(t *testing.T) {
	g := NewGenerator(1)
	for _, p := range [][]float64{nil, {0.5, 0.6}, {-0.1, 1.1}, {math.NaN(), 1}, {0.5, 0.4}} {
		if _, err := g.ChoiceP(p, 3); err == nil {
			t.Errorf("ChoiceP(%v) gave no error", p)
		}
	}
}

// Expected sums were printed by NumPy 1.24's np.sum (pairwise summation);
// a plain left-to-right sum differs for all but the shortest.
func TestPairwiseSum(t *testing.T) {
	for _, c := range []struct {
		n    int
		want float64
	}{{5, 2.9938174851967956}, {100, 7.107946482920178}, {1000, 10.38911173345477}, {4099, 12.403764836553997}} {
		v := make([]float64, c.n)
		for i := range v {
			v[i] = 1 / (float64(i+1)*0.7 + 0.1)
		}
		if got := PairwiseSum(v); got != c.want {
			t.Errorf("n=%d: sum %v, want %v", c.n, got, c.want)
		}
	}
}
