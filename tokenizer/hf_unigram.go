package tokenizer

import (
	"fmt"
	"math"
	"unicode/utf8"
)

// unigramModel is the library's Unigram model (SentencePiece's): the
// segmentation of highest total score, by Viterbi over the pieces found in a
// trie.
type unigramModel struct {
	vocab
	scores       []float64
	unk          int // -1: none
	unkScore     float64
	byteFallback bool
	byteFB       [256]int32
	trie         byteTrie // ids are 0: a piece ends here (its id is looked up by text)
	cache        wordCache
}

func parseUnigram(d *jsonDoc, f modelFields, vs *jsonSpan) (hfModel, error) {
	m := &unigramModel{unk: -1, byteFallback: f.ByteFallback}
	m.vocab.ids = map[string]int{}
	minScore := math.Inf(1)
	m.trie.reset()
	err := d.eachElement(vs.start, func(start, end int) error {
		var tok string
		var score float64
		k := 0
		err := d.eachElement(start, func(s, e int) error {
			switch k {
			case 0:
				if d.data[s] != '"' {
					return d.errorf(s, "model.vocab: expected a token string")
				}
				str, _, err := d.str(s)
				tok = str
				if err != nil {
					return err
				}
			case 1:
				v, ok := serdeFloat(d.text[s:e])
				if !ok {
					return d.errorf(s, "model.vocab: expected a score, found %s", d.snippet(s, e))
				}
				score = v
			}
			k++
			return nil
		})
		if err != nil {
			return err
		}
		if k != 2 {
			return d.errorf(start, "model.vocab: expected [token, score]")
		}
		id := len(m.scores)
		m.ids[tok] = id
		m.toks = append(m.toks, tok)
		m.has = append(m.has, true)
		m.scores = append(m.scores, score)
		minScore = min(minScore, score)
		m.trie.insert(tok, 0)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if f.UnkID != nil {
		if *f.UnkID < 0 || *f.UnkID >= len(m.scores) {
			return nil, fmt.Errorf("%s: model Unigram: unk_id %d is not in the vocabulary", d.file, *f.UnkID)
		}
		m.unk = *f.UnkID
	}
	m.unkScore = minScore - 10
	for b := range 256 {
		m.byteFB[b] = -1
		if id, ok := m.ids[fmt.Sprintf("<0x%02X>", b)]; ok {
			m.byteFB[b] = int32(id)
		}
	}
	return m, nil
}

// vocabSize is the length of the piece list (the library's vocab.len()).
func (m *unigramModel) vocabSize() int { return len(m.scores) }

type unigramBest struct {
	score float64
	start int // -1: not reached
	id    int
}

// tokenize appends the ids of w, from the cache when it has them.
func (m *unigramModel) tokenize(w string, out []int) []int {
	if ids, ok := m.cache.get(w); ok {
		for _, id := range ids {
			out = append(out, int(id))
		}
		return out
	}
	n := len(out)
	out = m.viterbi(w, out)
	ids := make([]int32, len(out)-n)
	for i, id := range out[n:] {
		ids[i] = int32(id)
	}
	m.cache.put(w, ids)
	return out
}

// viterbi is the library's encode_optimized followed by tokenize: unknown
// characters next to each other are fused into one piece, which becomes its
// bytes (byte_fallback) or unk.
func (m *unigramModel) viterbi(w string, out []int) []int {
	best := make([]unigramBest, len(w)+1)
	for i := range best {
		best[i].start = -1
	}
	best[0].start = 0
	for at := 0; at < len(w); {
		base := best[at].score
		_, mblen := utf8.DecodeRuneInString(w[at:])
		single := false
		n := m.trie.root[w[at]]
		for k := at + 1; n != 0; k++ {
			if m.trie.nodes[n].id >= 0 {
				id := m.ids[w[at:k]]
				cand := m.scores[id] + base
				if t := &best[k]; t.start < 0 || cand > t.score {
					*t = unigramBest{cand, at, id}
				}
				if k-at == mblen {
					single = true
				}
			}
			if k >= len(w) {
				break
			}
			n = m.trie.nodes[n].next[w[k]]
		}
		if !single {
			cand := m.unkScore + base
			if t := &best[at+mblen]; t.start < 0 || cand > t.score {
				*t = unigramBest{cand, at, m.unk}
			}
		}
		at += mblen
	}
	// Walk back, fusing runs of unk.
	var pieces []string
	fused := ""
	for end := len(w); end > 0; {
		b := best[end]
		if b.start < 0 {
			break
		}
		if b.id == m.unk && m.unk >= 0 || b.id < 0 {
			fused = w[b.start:end] + fused
		} else {
			if fused != "" {
				pieces = append(pieces, fused)
				fused = ""
			}
			pieces = append(pieces, w[b.start:end])
		}
		end = b.start
	}
	if fused != "" {
		pieces = append(pieces, fused)
	}
	for i := len(pieces) - 1; i >= 0; i-- {
		p := pieces[i]
		if id, ok := m.ids[p]; ok {
			out = append(out, id)
			continue
		}
		if m.byteFallback {
			all := true
			for j := 0; j < len(p); j++ {
				if m.byteFB[p[j]] < 0 {
					all = false
					break
				}
			}
			if all {
				for j := 0; j < len(p); j++ {
					out = append(out, int(m.byteFB[p[j]]))
				}
				continue
			}
		}
		if m.unk >= 0 {
			out = append(out, m.unk)
		}
	}
	return out
}
