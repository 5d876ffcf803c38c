package tokenizer

// byteTrie is a trie over the bytes of strings, for the added-token matcher
// and the Unigram model's prefix search. Node 0 stands for "none"; a node's
// id is -1 where no string ends.
type byteTrie struct {
	root  [256]int32
	nodes []trieNode
}

type trieNode struct {
	next map[byte]int32
	id   int32
}

func (t *byteTrie) reset() {
	t.root = [256]int32{}
	t.nodes = append(t.nodes[:0], trieNode{id: -1})
}

// insert adds s with id; of equal strings the first keeps its id. An empty
// s is ignored.
func (t *byteTrie) insert(s string, id int32) {
	if s == "" {
		return
	}
	n := t.root[s[0]]
	if n == 0 {
		t.nodes = append(t.nodes, trieNode{id: -1})
		n = int32(len(t.nodes) - 1)
		t.root[s[0]] = n
	}
	for i := 1; i < len(s); i++ {
		c, ok := t.nodes[n].next[s[i]]
		if !ok {
			t.nodes = append(t.nodes, trieNode{id: -1})
			c = int32(len(t.nodes) - 1)
			if t.nodes[n].next == nil {
				t.nodes[n].next = map[byte]int32{}
			}
			t.nodes[n].next[s[i]] = c
		}
		n = c
	}
	if t.nodes[n].id < 0 {
		t.nodes[n].id = id
	}
}
