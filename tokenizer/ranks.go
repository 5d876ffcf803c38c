package tokenizer

import (
	"fmt"
	"hash/maphash"
)

// rankTable is a vocabulary of byte strings, id → bytes and bytes → id, in
// a fraction of the memory of a []string and a map[string]uint: the pieces
// are substrings of one string (the embedded .ranks file, so not even on
// the heap), and the reverse index is an open-addressing table of ids (0:
// empty, else id+1) probed linearly. o200k_base's 199,998 tokens take
// 0.8 MB of offsets and 2 MB of index on the heap.
type rankTable struct {
	all   string   // every piece, end to end
	off   []uint32 // piece i is all[off[i]:off[i+1]]
	index []uint32
	mask  uint64
	seed  maphash.Seed
}

// newRankTable makes the table of the n pieces in data, a .ranks file
// (tools/tiktokengen): n lengths of one byte, then the pieces end to end.
// The pieces are not copied.
func newRankTable(data string, n int) (*rankTable, error) {
	if len(data) < n {
		return nil, fmt.Errorf("built-in ranks: %d bytes, too short for %d lengths", len(data), n)
	}
	t := &rankTable{all: data[n:], off: make([]uint32, n+1), seed: maphash.MakeSeed()}
	end := 0
	for i := range n {
		t.off[i] = uint32(end)
		end += int(data[i])
	}
	if end != len(t.all) {
		return nil, fmt.Errorf("built-in ranks: lengths add up to %d bytes, the pieces are %d", end, len(t.all))
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
		h := maphash.String(t.seed, t.piece(i)) & t.mask
		for t.index[h] != 0 {
			h = (h + 1) & t.mask
		}
		t.index[h] = uint32(i + 1)
	}
	return t, nil
}

// piece is the bytes of id i.
func (t *rankTable) piece(i int) string { return t.all[t.off[i]:t.off[i+1]] }

// rank is the id of s, if it is a piece.
func (t *rankTable) rank(s string) (uint, bool) {
	h := maphash.String(t.seed, s) & t.mask
	for {
		v := t.index[h]
		if v == 0 {
			return 0, false
		}
		if t.piece(int(v-1)) == s {
			return uint(v - 1), true
		}
		h = (h + 1) & t.mask
	}
}
