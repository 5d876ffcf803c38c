package tokenizer

import (
	"fmt"
	"hash/maphash"
	"sync"
)

// rankTable is a vocabulary of byte strings, id → bytes and bytes → id, in
// a fraction of the memory of a []string and a map[string]uint: the pieces
// are substrings of one string (the embedded .ranks file, so not even on
// the heap), and the reverse index is an open-addressing table of ids (0:
// empty, else id+1) probed linearly.
//
// Only what decoding needs is built at once: the offset of every 16th
// piece (50 KB for o200k_base's 199,998 tokens). The full offsets and the
// index (0.8 MB and 2 MB for o200k_base) are built on the first lookup by
// bytes, that is the first encode or count: a run of random-ids prompts
// sends its first request without them.
type rankTable struct {
	n     int
	lens  string   // piece i's length is lens[i]
	all   string   // every piece, end to end
	marks []uint32 // piece i·markStride starts at all[marks[i]]

	once  sync.Once
	off   []uint32 // piece i is all[off[i]:off[i+1]]
	index []uint32
	mask  uint64
	seed  maphash.Seed
}

const markStride = 16

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

// build makes the full offsets and the index.
func (t *rankTable) build() {
	n := t.n
	t.off, t.seed = make([]uint32, n+1), maphash.MakeSeed()
	end := 0
	for i := range n {
		t.off[i] = uint32(end)
		end += int(t.lens[i])
	}
	t.off[n] = uint32(end)
	size := 1
	for size < 2*n {
		size <<= 1
	}
	t.index, t.mask = make([]uint32, size), uint64(size-1)
	for i := range n {
		// A repeated piece keeps its first id; tiktoken's vocabularies
		// have none.
		h := maphash.String(t.seed, t.all[t.off[i]:t.off[i+1]]) & t.mask
		for t.index[h] != 0 {
			h = (h + 1) & t.mask
		}
		t.index[h] = uint32(i + 1)
	}
}

// rank is the id of s, if it is a piece.
func (t *rankTable) rank(s string) (uint, bool) {
	t.once.Do(t.build)
	h := maphash.String(t.seed, s) & t.mask
	for {
		v := t.index[h]
		if v == 0 {
			return 0, false
		}
		if t.all[t.off[v-1]:t.off[v]] == s {
			return uint(v - 1), true
		}
		h = (h + 1) & t.mask
	}
}
