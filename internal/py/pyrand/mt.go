// Package pyrand reproduces the two random number generators the reference
// tool draws from: CPython's random module and NumPy's legacy RandomState.
// Both are MT19937; they differ in seeding and in how they turn words into
// numbers. With the same seed, a dataset drawn here picks the same rows,
// lengths and token ids as the Python tool.
package pyrand

const (
	mtN = 624
	mtM = 397
)

// mt is the MT19937 state shared by both generators.
type mt struct {
	s   [mtN]uint32
	idx int
}

func (m *mt) initGenrand(seed uint32) {
	m.s[0] = seed
	for i := 1; i < mtN; i++ {
		m.s[i] = 1812433253*(m.s[i-1]^(m.s[i-1]>>30)) + uint32(i)
	}
	m.idx = mtN
}

func (m *mt) initByArray(key []uint32) {
	m.initGenrand(19650218)
	i, j := 1, 0
	k := max(mtN, len(key))
	for ; k > 0; k-- {
		m.s[i] = (m.s[i] ^ ((m.s[i-1] ^ (m.s[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= mtN {
			m.s[0] = m.s[mtN-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k = mtN - 1; k > 0; k-- {
		m.s[i] = (m.s[i] ^ ((m.s[i-1] ^ (m.s[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= mtN {
			m.s[0] = m.s[mtN-1]
			i = 1
		}
	}
	m.s[0] = 0x80000000
	m.idx = mtN
}

func (m *mt) uint32() uint32 {
	if m.idx >= mtN {
		m.twist()
	}
	y := m.s[m.idx]
	m.idx++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

func (m *mt) twist() {
	const upper, lower, matrix = 0x80000000, 0x7fffffff, 0x9908b0df
	for i := 0; i < mtN; i++ {
		y := (m.s[i] & upper) | (m.s[(i+1)%mtN] & lower)
		v := m.s[(i+mtM)%mtN] ^ (y >> 1)
		if y&1 != 0 {
			v ^= matrix
		}
		m.s[i] = v
	}
	m.idx = 0
}

// double is genrand_res53, shared by random.random() and numpy's random_sample.
func (m *mt) double() float64 {
	a := m.uint32() >> 5
	b := m.uint32() >> 6
	return (float64(a)*67108864.0 + float64(b)) * (1.0 / 9007199254740992.0)
}
