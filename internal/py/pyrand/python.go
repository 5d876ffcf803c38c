package pyrand

import "math"

// Python is CPython's random.Random.
type Python struct{ m mt }

// NewPython returns random.Random(seed): init_by_array over the 32-bit words
// of |seed|.
func NewPython(seed int64) *Python {
	p := &Python{}
	p.Seed(seed)
	return p
}

// Seed is random.seed(seed) for an int seed.
func (p *Python) Seed(seed int64) {
	u := uint64(seed)
	if seed < 0 {
		u = uint64(-seed)
	}
	key := []uint32{uint32(u)}
	if hi := uint32(u >> 32); hi != 0 {
		key = append(key, hi)
	}
	p.m.initByArray(key)
}

// Random is random.random(): a float in [0, 1) with 53 random bits.
func (p *Python) Random() float64 { return p.m.double() }

// GetRandBits is random.getrandbits(k) for 0 <= k <= 64.
func (p *Python) GetRandBits(k int) uint64 {
	if k <= 32 {
		if k == 0 {
			return 0
		}
		return uint64(p.m.uint32() >> (32 - k))
	}
	lo := uint64(p.m.uint32())
	hi := uint64(p.m.uint32() >> (64 - k))
	return hi<<32 | lo
}

// RandBelow is random._randbelow(n) for n > 0: rejection sampling on
// n.bit_length() bits.
func (p *Python) RandBelow(n int) int {
	k := 0
	for v := uint64(n); v != 0; v >>= 1 {
		k++
	}
	r := p.GetRandBits(k)
	for r >= uint64(n) {
		r = p.GetRandBits(k)
	}
	return int(r)
}

// Shuffle is random.shuffle over n items, swapping with swap.
func (p *Python) Shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		j := p.RandBelow(i + 1)
		swap(i, j)
	}
}

// Choice is random.choice over n items: the index picked.
func (p *Python) Choice(n int) int { return p.RandBelow(n) }

// Choices is random.choices(range(n), k=k) without weights: the indices
// picked, each floor(random() * n).
func (p *Python) Choices(n, k int) []int {
	out := make([]int, k)
	fn := float64(n)
	for i := range out {
		out[i] = int(math.Floor(p.Random() * fn))
	}
	return out
}

// Sample is random.sample(range(n), k): k distinct indices, in the order
// CPython draws them (a pool for small n, a set of seen indices otherwise).
func (p *Python) Sample(n, k int) []int {
	if k < 0 || k > n {
		panic("pyrand: sample larger than population or negative")
	}
	out := make([]int, k)
	setsize := 21
	if k > 5 {
		setsize += int(math.Pow(4, math.Ceil(math.Log(float64(k*3))/math.Log(4))))
	}
	if n <= setsize {
		pool := make([]int, n)
		for i := range pool {
			pool[i] = i
		}
		for i := 0; i < k; i++ {
			j := p.RandBelow(n - i)
			out[i] = pool[j]
			pool[j] = pool[n-i-1]
		}
		return out
	}
	seen := make(map[int]struct{}, k)
	for i := 0; i < k; i++ {
		j := p.RandBelow(n)
		for {
			if _, ok := seen[j]; !ok {
				break
			}
			j = p.RandBelow(n)
		}
		seen[j] = struct{}{}
		out[i] = j
	}
	return out
}
