package tokenizer

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// bpeModel is the library's BPE model.
type bpeModel struct {
	vocab
	// merges maps a pair of ids (left<<32 | right) to the merge's rank and
	// the merged token's id (rank<<32 | id).
	merges       map[uint64]uint64
	unk          int // -1: no unk token
	prefix       string
	suffix       string
	fuseUnk      bool
	byteFallback bool
	ignoreMerges bool
	// byteFB is the id of each byte's "<0xXX>" token, -1 if none.
	byteFB [256]int32

	// rawBytes: words arrive as raw bytes (see HF.rawBytes); byteSym is the
	// id of each byte's byte-level character.
	rawBytes bool
	byteSym  [256]int32

	cache wordCache
}

func parseBPE(d *jsonDoc, f modelFields, vs, ms *jsonSpan) (hfModel, error) {
	if f.Dropout != nil && *f.Dropout != 0 {
		return nil, &unsupportedErrorAt{d.file, "BPE dropout"}
	}
	v, err := readVocab(d, vs.start, vs.end)
	if err != nil {
		return nil, err
	}
	m := &bpeModel{vocab: v, unk: -1, fuseUnk: f.FuseUnk, byteFallback: f.ByteFallback, ignoreMerges: f.IgnoreMerges}
	if f.UnkToken != nil {
		if id, ok := v.ids[*f.UnkToken]; ok {
			m.unk = id
		}
	}
	if f.ContinuingSubwordPrefix != nil {
		m.prefix = *f.ContinuingSubwordPrefix
	}
	if f.EndOfWordSuffix != nil {
		m.suffix = *f.EndOfWordSuffix
	}
	for b := range 256 {
		m.byteFB[b] = -1
		if id, ok := v.ids[fmt.Sprintf("<0x%02X>", b)]; ok {
			m.byteFB[b] = int32(id)
		}
		m.byteSym[b] = -1
		if id, ok := v.ids[string(byteLevelRune[b])]; ok {
			m.byteSym[b] = int32(id)
		}
	}
	pairs, err := readMerges(d, ms.start)
	if err != nil {
		return nil, err
	}
	// Looking the tokens up is most of the load time: do it on two
	// goroutines, then fill the map in rank order (a repeated pair keeps its
	// last rank, as the library's HashMap does).
	resolved := make([]uint64, 2*len(pairs))
	errs := make([]error, 2)
	var wg sync.WaitGroup
	half := len(pairs) / 2
	for w, part := range [][2]int{{0, half}, {half, len(pairs)}} {
		wg.Go(func() {
			var buf []byte
			for i := part[0]; i < part[1]; i++ {
				p := pairs[i]
				aID, ok := v.ids[p.a]
				if !ok {
					errs[w] = d.errorf(p.pos, "model.merges: token %q is not in the vocabulary", p.a)
					return
				}
				bID, ok := v.ids[p.b]
				if !ok {
					errs[w] = d.errorf(p.pos, "model.merges: token %q is not in the vocabulary", p.b)
					return
				}
				rest := p.b
				if len(m.prefix) <= len(rest) {
					rest = rest[len(m.prefix):]
				} else {
					rest = ""
				}
				buf = append(append(buf[:0], p.a...), rest...)
				id, ok := v.ids[string(buf)]
				if !ok {
					errs[w] = d.errorf(p.pos, "model.merges: token %q is not in the vocabulary", buf)
					return
				}
				resolved[2*i] = uint64(aID)<<32 | uint64(bID)
				resolved[2*i+1] = uint64(i)<<32 | uint64(id)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	m.merges = make(map[uint64]uint64, len(pairs))
	for i := 0; i < len(resolved); i += 2 {
		m.merges[resolved[i]] = resolved[i+1]
	}
	return m, nil
}

type mergePair struct {
	a, b string
	pos  int
}

// readMerges reads the merges array: "a b" strings or ["a", "b"] pairs.
func readMerges(d *jsonDoc, start int) ([]mergePair, error) {
	pairs := make([]mergePair, 0, 1024)
	err := d.eachElement(start, func(start, end int) error {
		switch d.data[start] {
		case '"':
			s, _, err := d.str(start)
			if err != nil {
				return err
			}
			if strings.HasPrefix(s, "#version") {
				return nil
			}
			a, b, ok := strings.Cut(s, " ")
			if !ok || strings.Contains(b, " ") {
				return d.errorf(start, "model.merges: merge %d: %q is not two tokens separated by a space", len(pairs)+1, s)
			}
			pairs = append(pairs, mergePair{a, b, start})
			return nil
		case '[':
			if a, b, ok := d.quickPair(start); ok {
				pairs = append(pairs, mergePair{a, b, start})
				return nil
			}
			var pair []string
			err := d.eachElement(start, func(s, e int) error {
				if d.data[s] != '"' {
					return d.errorf(s, "model.merges: expected a string")
				}
				str, _, err := d.str(s)
				pair = append(pair, str)
				return err
			})
			if err != nil {
				return err
			}
			if len(pair) != 2 {
				return d.errorf(start, "model.merges: merge %d has %d tokens, not 2", len(pairs)+1, len(pair))
			}
			pairs = append(pairs, mergePair{pair[0], pair[1], start})
			return nil
		}
		return d.errorf(start, "model.merges: expected a string or a pair of strings")
	})
	return pairs, err
}

// unsupportedErrorAt names an unsupported feature of a file.
type unsupportedErrorAt struct{ file, what string }

func (e *unsupportedErrorAt) Error() string { return fmt.Sprintf("%s: unsupported %s", e.file, e.what) }

// canReadRawBytes reports whether every byte's byte-level character is a
// token and words need no prefix or suffix: then reading raw bytes gives the
// same tokens as reading the byte-level string.
func (m *bpeModel) canReadRawBytes() bool {
	if m.prefix != "" || m.suffix != "" {
		return false
	}
	for _, id := range m.byteSym {
		if id < 0 {
			return false
		}
	}
	return true
}

// bpeScratch is one tokenize call's working memory.
type bpeScratch struct {
	syms []bpeSym
	heap []bpeMerge
	buf  []byte
}

var bpeScratchPool = sync.Pool{New: func() any { return new(bpeScratch) }}

type bpeSym struct {
	id         int32
	prev, next int32
	size       int32 // bytes; 0 marks a symbol merged into its left neighbour
}

// bpeMerge is a candidate merge; key is rank<<32 | position, so that the
// smallest key is the library's next merge (lowest rank, then leftmost).
type bpeMerge struct {
	key uint64
	id  int32
}

func (m *bpeModel) tokenize(word string, out []int) []int {
	sc := bpeScratchPool.Get().(*bpeScratch)
	defer bpeScratchPool.Put(sc)
	if m.ignoreMerges {
		if m.rawBytes {
			sc.buf = appendByteLevel(sc.buf[:0], word)
			if id, ok := m.ids[string(sc.buf)]; ok {
				return append(out, id)
			}
		} else if id, ok := m.ids[word]; ok {
			return append(out, id)
		}
	}
	if ids, ok := m.cache.get(word); ok {
		for _, id := range ids {
			out = append(out, int(id))
		}
		return out
	}
	if m.rawBytes {
		sc.syms = sc.syms[:0]
		for i := 0; i < len(word); i++ {
			sc.syms = append(sc.syms, bpeSym{id: m.byteSym[word[i]], size: 1})
		}
	} else {
		m.initialSymbols(word, sc)
	}
	m.mergeAll(sc)
	ids := make([]int32, 0, len(sc.syms))
	for i := 0; i >= 0 && i < len(sc.syms); i = int(sc.syms[i].next) {
		ids = append(ids, sc.syms[i].id)
		out = append(out, int(sc.syms[i].id))
	}
	m.cache.put(word, ids)
	return out
}

// initialSymbols is the library's merge_word before merging: one symbol per
// character (with the continuing-subword prefix and end-of-word suffix),
// bytes for characters not in the vocabulary when byte_fallback is set,
// otherwise unk (fused when fuse_unk is set).
func (m *bpeModel) initialSymbols(w string, sc *bpeScratch) {
	sc.syms = sc.syms[:0]
	add := func(id int, size int) {
		sc.syms = append(sc.syms, bpeSym{id: int32(id), size: int32(size)})
	}
	unkID, unkLen := -1, 0
	for i := 0; i < len(w); {
		_, n := utf8.DecodeRuneInString(w[i:])
		s := w[i : i+n]
		if i > 0 && m.prefix != "" || i+n == len(w) && m.suffix != "" {
			sc.buf = sc.buf[:0]
			if i > 0 {
				sc.buf = append(sc.buf, m.prefix...)
			}
			sc.buf = append(sc.buf, s...)
			if i+n == len(w) {
				sc.buf = append(sc.buf, m.suffix...)
			}
			s = string(sc.buf)
		}
		i += n
		if id, ok := m.ids[s]; ok {
			if unkID >= 0 {
				add(unkID, unkLen)
				unkID = -1
			}
			add(id, n)
			continue
		}
		if m.byteFallback {
			all := true
			for j := 0; j < len(s); j++ {
				if m.byteFB[s[j]] < 0 {
					all = false
					break
				}
			}
			if all {
				for j := 0; j < len(s); j++ {
					add(int(m.byteFB[s[j]]), 1)
				}
				continue
			}
		}
		if m.unk >= 0 {
			switch {
			case unkID >= 0 && m.fuseUnk:
				unkLen += n
			case unkID >= 0:
				add(unkID, unkLen)
				unkLen = n
			default:
				unkID, unkLen = m.unk, n
			}
		}
	}
	if unkID >= 0 {
		add(unkID, unkLen)
	}
}

// mergeAll is the library's Word::merge_all without dropout: it merges the
// pair of lowest rank, leftmost first, until no pair can merge, and leaves
// the symbols linked through next from index 0.
func (m *bpeModel) mergeAll(sc *bpeScratch) {
	syms := sc.syms
	n := len(syms)
	for i := range syms {
		syms[i].prev = int32(i - 1)
		syms[i].next = int32(i + 1)
	}
	if n > 0 {
		syms[n-1].next = -1
	}
	h := sc.heap[:0]
	for i := 0; i+1 < n; i++ {
		if rm, ok := m.merges[uint64(syms[i].id)<<32|uint64(syms[i+1].id)]; ok {
			h = heapPush(h, bpeMerge{key: rm&^0xFFFFFFFF | uint64(i), id: int32(rm)})
		}
	}
	for len(h) > 0 {
		var top bpeMerge
		top, h = heapPop(h)
		pos := int32(top.key)
		cur := &syms[pos]
		if cur.size == 0 || cur.next < 0 {
			continue
		}
		right := syms[cur.next]
		rm, ok := m.merges[uint64(cur.id)<<32|uint64(right.id)]
		if !ok || int32(rm) != top.id {
			continue // stale
		}
		cur.id = top.id
		cur.size += right.size
		syms[cur.next].size = 0
		cur.next = right.next
		if right.next >= 0 {
			syms[right.next].prev = pos
		}
		if cur.prev >= 0 {
			if rm, ok := m.merges[uint64(syms[cur.prev].id)<<32|uint64(cur.id)]; ok {
				h = heapPush(h, bpeMerge{key: rm&^0xFFFFFFFF | uint64(cur.prev), id: int32(rm)})
			}
		}
		if cur.next >= 0 {
			if rm, ok := m.merges[uint64(cur.id)<<32|uint64(syms[cur.next].id)]; ok {
				h = heapPush(h, bpeMerge{key: rm&^0xFFFFFFFF | uint64(pos), id: int32(rm)})
			}
		}
	}
	sc.heap = h
}

func heapPush(h []bpeMerge, x bpeMerge) []bpeMerge {
	h = append(h, x)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p].key <= x.key {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
	return h
}

func heapPop(h []bpeMerge) (bpeMerge, []bpeMerge) {
	top := h[0]
	last := h[len(h)-1]
	h = h[:len(h)-1]
	n := len(h)
	if n == 0 {
		return top, h
	}
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && h[r].key < h[l].key {
			c = r
		}
		if last.key <= h[c].key {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = last
	return top, h
}
