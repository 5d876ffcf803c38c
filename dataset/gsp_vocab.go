package dataset

import (
	"slices"

	"benchserve/tokenizer"
)

// vocabPool is the token ids gen_prompt draws from, ascending: the base
// vocabulary and the added tokens, without the special ones. The
// reference draws from get_vocab().values(), whose order comes from a Rust
// HashMap and cannot be reproduced, and keeps the special tokens (one
// version leaves them out, as here).
func vocabPool(tok tokenizer.Tokenizer) []int {
	var special, added []int
	if s, ok := tok.(interface{ SpecialIDs() []int }); ok {
		special = s.SpecialIDs()
	}
	if a, ok := tok.(interface{ AddedTokens() map[string]int }); ok {
		for _, id := range a.AddedTokens() {
			added = append(added, id)
		}
	}
	skip := make(map[int]bool, len(special))
	for _, id := range special {
		skip[id] = true
	}
	n := tok.VocabSize()
	pool := make([]int, 0, n+len(added))
	for id := range n {
		if !skip[id] {
			pool = append(pool, id)
		}
	}
	slices.Sort(added)
	for i, id := range added {
		if id >= n && !skip[id] && (i == 0 || added[i-1] != id) {
			pool = append(pool, id)
		}
	}
	return pool
}
