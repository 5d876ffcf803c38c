package sim

// prefixCache is a page-granular prefix cache over token ids, standing in
// for SGLang's radix tree: a sequence is cut into full pages of pageSize
// tokens, and page i is keyed by a hash of tokens [0, (i+1)·pageSize), so a
// key names a whole prefix and a lookup walks the pages of a prompt until
// the first miss. Eviction is least recently used. A hit touches the
// matched pages deepest first, so a page's ancestors are always more recent
// than it and eviction removes leaves before the prefixes they extend, as a
// radix tree does. Only the engine goroutine uses it.
type prefixCache struct {
	pageSize int
	pages    map[uint64]*cpage
	lru      cpage // sentinel: lru.next is the least recently used
	tokens   int   // len(pages) × pageSize
}

type cpage struct {
	key        uint64
	prev, next *cpage
}

func newPrefixCache(pageSize int) *prefixCache {
	c := &prefixCache{pageSize: pageSize, pages: map[uint64]*cpage{}}
	c.lru.prev, c.lru.next = &c.lru, &c.lru
	return c
}

// pageKeys appends to dst the keys of the full pages of ids, continuing the
// chain from the state h of the tokens before ids (0 for none). It returns
// the keys and the chain state after ids.
func pageKeys(dst []uint64, h uint64, done int, ids []int, pageSize int) ([]uint64, uint64) {
	for i, id := range ids {
		h = mix64(h ^ uint64(int64(id)) ^ 0x9e3779b97f4a7c15)
		if (done+i+1)%pageSize == 0 {
			dst = append(dst, h)
		}
	}
	return dst, h
}

// match returns how many leading pages of keys are cached, without
// touching them.
func (c *prefixCache) match(keys []uint64) int {
	for i, k := range keys {
		if c.pages[k] == nil {
			return i
		}
	}
	return len(keys)
}

// insert adds the pages of keys that are missing and marks all of them
// most recently used, deepest first.
func (c *prefixCache) insert(keys []uint64) {
	for i := len(keys) - 1; i >= 0; i-- {
		p := c.pages[keys[i]]
		if p == nil {
			p = &cpage{key: keys[i]}
			c.pages[p.key] = p
			c.tokens += c.pageSize
		} else {
			p.unlink()
		}
		p.prev, p.next = c.lru.prev, &c.lru
		c.lru.prev.next = p
		c.lru.prev = p
	}
}

// shrink evicts least recently used pages until at most limit tokens are
// cached.
func (c *prefixCache) shrink(limit int) {
	for c.tokens > limit && c.lru.next != &c.lru {
		p := c.lru.next
		p.unlink()
		delete(c.pages, p.key)
		c.tokens -= c.pageSize
	}
}

func (c *prefixCache) flush() { c.shrink(0) }

func (p *cpage) unlink() {
	p.prev.next = p.next
	p.next.prev = p.prev
	p.prev, p.next = nil, nil
}

// mix64 is SplitMix64's finalizer: a cheap hash with full avalanche.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
