package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// hfModel is a tokenizer.json model: it turns one pre-tokenized word into
// ids.
type hfModel interface {
	// tokenize appends the ids of word to out.
	tokenize(word string, out []int) []int
	tokenToID(tok string) (int, bool)
	idToToken(id int) (string, bool)
	// vocabSize is the library's get_vocab_size: the number of entries of the
	// model's vocabulary.
	vocabSize() int
}

// vocab is a token ↔ id table.
type vocab struct {
	ids  map[string]int
	toks []string
	has  []bool
}

func (v *vocab) tokenToID(tok string) (int, bool) {
	id, ok := v.ids[tok]
	return id, ok
}

func (v *vocab) idToToken(id int) (string, bool) {
	if id < 0 || id >= len(v.toks) || !v.has[id] {
		return "", false
	}
	return v.toks[id], true
}

func (v *vocab) vocabSize() int { return len(v.ids) }

// finish builds the id → token table.
func (v *vocab) finish() {
	n := 0
	for _, id := range v.ids {
		n = max(n, id+1)
	}
	v.toks = make([]string, n)
	v.has = make([]bool, n)
	for tok, id := range v.ids {
		// Of two tokens with one id the library keeps either; keep the
		// smaller so that the choice is stable.
		if !v.has[id] || tok < v.toks[id] {
			v.toks[id] = tok
		}
		v.has[id] = true
	}
}

// readVocab reads a {"token": id, ...} object.
func readVocab(d *jsonDoc, start, end int) (vocab, error) {
	v := vocab{ids: make(map[string]int, (end-start)/16)}
	err := d.eachMember(start, func(key string, vs, ve int) error {
		id, err := d.int(vs, ve)
		if err != nil {
			return err
		}
		if id < 0 || id >= 1<<24 {
			return d.errorf(vs, "model.vocab: id %d out of range", id)
		}
		v.ids[key] = id
		return nil
	})
	if err != nil {
		return vocab{}, err
	}
	v.finish()
	return v, nil
}

// modelFields are the small fields of every model type.
type modelFields struct {
	Type                    string   `json:"type"`
	Dropout                 *float64 `json:"dropout"`
	UnkToken                *string  `json:"unk_token"`
	UnkID                   *int     `json:"unk_id"`
	ContinuingSubwordPrefix *string  `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string  `json:"end_of_word_suffix"`
	FuseUnk                 bool     `json:"fuse_unk"`
	ByteFallback            bool     `json:"byte_fallback"`
	IgnoreMerges            bool     `json:"ignore_merges"`
	MaxInputCharsPerWord    *int     `json:"max_input_chars_per_word"`
}

func parseModel(d *jsonDoc, start, end int) (hfModel, error) {
	members, err := d.object(start)
	if err != nil {
		return nil, err
	}
	var f modelFields
	var vocabSpan, mergesSpan *jsonSpan
	for i := range members {
		m := &members[i]
		switch m.key {
		case "vocab":
			vocabSpan = m
		case "merges":
			mergesSpan = m
		}
	}
	// Decode the small fields together, leaving out the big ones.
	var b strings.Builder
	b.WriteByte('{')
	for _, m := range members {
		if m.key == "vocab" || m.key == "merges" {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(m.key)
		b.Write(key)
		b.WriteByte(':')
		b.Write(d.data[m.start:m.end])
	}
	b.WriteByte('}')
	sub := &jsonDoc{file: d.file, data: []byte(b.String())}
	sub.text = string(sub.data)
	if err := sub.unmarshal(0, len(sub.data), "model", &f); err != nil {
		return nil, fmt.Errorf("%s: model: %v", d.file, stripFilePrefix(err, d.file))
	}
	typ := f.Type
	if typ == "" {
		switch {
		case mergesSpan != nil:
			typ = "BPE"
		case vocabSpan != nil && d.data[d.ws(vocabSpan.start)] == '[':
			typ = "Unigram"
		case f.ContinuingSubwordPrefix != nil || f.MaxInputCharsPerWord != nil:
			typ = "WordPiece"
		default:
			typ = "WordLevel"
		}
	}
	if vocabSpan == nil {
		return nil, fmt.Errorf("%s: model %s: no vocab", d.file, typ)
	}
	switch typ {
	case "BPE":
		if mergesSpan == nil {
			return nil, fmt.Errorf("%s: model BPE: no merges", d.file)
		}
		return parseBPE(d, f, vocabSpan, mergesSpan)
	case "WordPiece":
		return parseWordPiece(d, f, vocabSpan)
	case "WordLevel":
		return parseWordLevel(d, f, vocabSpan)
	case "Unigram":
		return parseUnigram(d, f, vocabSpan)
	}
	return nil, fmt.Errorf("%s: unsupported model %q", d.file, typ)
}

func stripFilePrefix(err error, file string) string {
	return strings.TrimPrefix(err.Error(), file+": ")
}

// wordCache remembers the ids of words, as the library's Cache does, so
// that frequent words skip the model. It is bounded: when full it starts
// over.
type wordCache struct {
	mu sync.RWMutex
	m  map[string][]int32
}

const (
	wordCacheSize = 1 << 16
	// wordCacheMaxLen is the library's MAX_LENGTH: longer words are not kept.
	wordCacheMaxLen = 256
)

func (c *wordCache) get(word string) ([]int32, bool) {
	c.mu.RLock()
	ids, ok := c.m[word]
	c.mu.RUnlock()
	return ids, ok
}

func (c *wordCache) put(word string, ids []int32) {
	if len(word) >= wordCacheMaxLen {
		return
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= wordCacheSize {
		c.m = make(map[string][]int32, 1024)
	}
	c.m[strings.Clone(word)] = ids
	c.mu.Unlock()
}

// wordLevelModel maps each word to its id, or to unk.
type wordLevelModel struct {
	vocab
	unk int
}

func parseWordLevel(d *jsonDoc, f modelFields, vs *jsonSpan) (hfModel, error) {
	v, err := readVocab(d, vs.start, vs.end)
	if err != nil {
		return nil, err
	}
	m := &wordLevelModel{vocab: v, unk: -1}
	if f.UnkToken != nil {
		if id, ok := v.ids[*f.UnkToken]; ok {
			m.unk = id
		}
	}
	return m, nil
}

func (m *wordLevelModel) tokenize(word string, out []int) []int {
	if id, ok := m.ids[word]; ok {
		return append(out, id)
	}
	if m.unk >= 0 {
		return append(out, m.unk)
	}
	return out
}
