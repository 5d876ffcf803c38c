package pyrand

// SeedSequence is numpy.random.SeedSequence(entropy) for an int entropy and
// no spawn key: the entropy's 32-bit words hashed into a pool of four.
type SeedSequence struct {
	pool [4]uint32
}

// The hash constants of NumPy's SeedSequence (after Melissa O'Neill's
// seed_seq_fe).
const (
	ssInitA    = 0x43b0d7e5
	ssMultA    = 0x931e8875
	ssInitB    = 0x8b51f9dd
	ssMultB    = 0x58f38ded
	ssMixMultL = 0xca01f9dd
	ssMixMultR = 0x4973f715
	ssXShift   = 16
)

// NewSeedSequence mixes entropy, taken as little-endian 32-bit words (0 is
// one zero word), into the pool.
func NewSeedSequence(entropy uint64) *SeedSequence {
	words := []uint32{uint32(entropy)}
	if hi := uint32(entropy >> 32); hi != 0 {
		words = append(words, hi)
	}
	s := &SeedSequence{}
	hashConst := uint32(ssInitA)
	hashmix := func(v uint32) uint32 {
		v ^= hashConst
		hashConst *= ssMultA
		v *= hashConst
		return v ^ v>>ssXShift
	}
	mix := func(x, y uint32) uint32 {
		r := ssMixMultL*x - ssMixMultR*y
		return r ^ r>>ssXShift
	}
	for i := range s.pool {
		var w uint32
		if i < len(words) {
			w = words[i]
		}
		s.pool[i] = hashmix(w)
	}
	for src := range s.pool {
		for dst := range s.pool {
			if src != dst {
				s.pool[dst] = mix(s.pool[dst], hashmix(s.pool[src]))
			}
		}
	}
	return s
}

// GenerateState64 is generate_state(n, np.uint64): 2n 32-bit words drawn
// from the pool, paired little-endian.
func (s *SeedSequence) GenerateState64(n int) []uint64 {
	out := make([]uint64, n)
	hashConst := uint32(ssInitB)
	for i := range 2 * n {
		v := s.pool[i%len(s.pool)]
		v ^= hashConst
		hashConst *= ssMultB
		v *= hashConst
		v ^= v >> ssXShift
		out[i/2] |= uint64(v) << (32 * (i % 2))
	}
	return out
}
