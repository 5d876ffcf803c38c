package tokenizer

import (
	"fmt"
	"hash/maphash"
	"math/bits"
	"sync"
)

// rankTable is a vocabulary of byte strings, id → bytes and bytes → id, in
// a fraction of the memory of a []string and a map[string]uint: the pieces
// are substrings of one string (the embedded .ranks file, so not even on
// the heap), found from the offset of every 8th piece and the lengths
// (100 KB for o200k_base's 199,998 tokens); the reverse index is an
// open-addressing table probed linearly, about 3/4 full, of 32-bit entries:
// id+1 (0: empty) in the low bits and, in the others, the top bits of the
// piece's hash, so that a probe compares bytes only when those match.
// o200k_base's index is 1 MB, made on the first lookup by bytes (the first
// encode or count): a run of random-ids prompts, which only decodes,
// sends its first request without it.
type rankTable struct {
	n     int
	lens  string   // piece i's length is lens[i]
	all   string   // every piece, end to end
	marks []uint32 // piece i·markStride starts at all[marks[i]]

	once     sync.Once
	index    []uint32
	mask     uint64
	idBits   uint
	idMask   uint32
	tagShift uint
	seed     maphash.Seed
}

const markStride = 8

// newRankTable makes the table of the n pieces in data, a .ranks file
// (tools/tiktokengen): n lengths of one byte, then the pieces end to end.
// The pieces are not copied.
func newRankTable(data string, n int) (*rankTable, error) {
	if len(data) < n {
		return nil, fmt.Errorf("built-in ranks: %d bytes, too short for %d lengths", len(data), n)
	}
	t := &rankTable{n: n, lens: data[:n], all: data[n:], marks: make([]uint32, (n+markStride-1)/markStride)}
	end := 0
	for i := range n {
		if i%markStride == 0 {
			t.marks[i/markStride] = uint32(end)
		}
		end += int(data[i])
	}
	if end != len(t.all) {
		return nil, fmt.Errorf("built-in ranks: lengths add up to %d bytes, the pieces are %d", end, len(t.all))
	}
	return t, nil
}

// piece is the bytes of id i, found from the mark before it.
func (t *rankTable) piece(i int) string {
	m := i / markStride
	start := int(t.marks[m])
	for j := m * markStride; j < i; j++ {
		start += int(t.lens[j])
	}
	return t.all[start : start+int(t.lens[i])]
}

// build makes the index.
func (t *rankTable) build() {
	n := t.n
	t.idBits = uint(bits.Len(uint(n)))
	t.idMask, t.tagShift = 1<<t.idBits-1, 64-(32-t.idBits)
	size := 1
	for size < n+n/4 {
		size <<= 1
	}
	t.index, t.mask, t.seed = make([]uint32, size), uint64(size-1), maphash.MakeSeed()
	start := 0
	for i := range n {
		p := t.all[start : start+int(t.lens[i])]
		start += len(p)
		h := maphash.String(t.seed, p)
		e := uint32(i+1) | t.tag(h)
		s := h & t.mask
		for t.index[s] != 0 {
			// A repeated piece keeps its first id; tiktoken's vocabularies
			// have none.
			s = (s + 1) & t.mask
		}
		t.index[s] = e
	}
}

// tag is the top bits of h, in an entry's bits above the id.
func (t *rankTable) tag(h uint64) uint32 { return uint32(h>>t.tagShift) << t.idBits }

// rank is the id of s, if it is a piece.
func (t *rankTable) rank(s string) (uint, bool) {
	t.once.Do(t.build)
	h := maphash.String(t.seed, s)
	tag, s0 := t.tag(h), h&t.mask
	for {
		e := t.index[s0]
		if e == 0 {
			return 0, false
		}
		if e&^t.idMask == tag {
			id := int(e&t.idMask) - 1
			if int(t.lens[id]) == len(s) && t.piece(id) == s {
				return uint(id), true
			}
		}
		s0 = (s0 + 1) & t.mask
	}
}
