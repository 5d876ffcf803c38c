package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// addedTokenJSON is one entry of tokenizer.json's added_tokens. Its id is
// not trusted, as the library does not trust it: ids are given again when
// the tokens are added (see addedVocab.build).
type addedTokenJSON struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	Lstrip     bool   `json:"lstrip"`
	Rstrip     bool   `json:"rstrip"`
	Normalized *bool  `json:"normalized"`
	Special    bool   `json:"special"`
}

func (a addedTokenJSON) special() bool { return a.Special }

func (a addedTokenJSON) normalized() bool { return a.Normalized == nil || *a.Normalized }

func (a addedTokenJSON) same(b addedTokenJSON) bool {
	return a.Content == b.Content && a.SingleWord == b.SingleWord && a.Lstrip == b.Lstrip &&
		a.Rstrip == b.Rstrip && a.normalized() == b.normalized() && a.Special == b.Special
}

// addedVocab is the library's AddedVocabulary: tokens matched in the text
// before the model sees it, in two passes (tokens with normalized=false on
// the raw text, the others on the normalized text).
type addedVocab struct {
	ids        map[string]int
	byID       map[int]addedTokenJSON
	specials   map[string]bool
	raw        addedMatcher
	normalized addedMatcher
}

// build adds tokens as the library's add_tokens does when it loads a
// tokenizer.json: a token already in the vocabulary keeps its id, the others
// get ids from the model's vocabulary size on.
func (v *addedVocab) build(tokens []addedTokenJSON, m hfModel, norm normalizer) {
	v.ids = map[string]int{}
	v.byID = map[int]addedTokenJSON{}
	v.specials = map[string]bool{}
	var specialList, addedList []addedTokenJSON
	for _, tok := range tokens {
		if tok.Special && tok.Content != "" && !v.specials[tok.Content] {
			specialList = append(specialList, tok)
			v.specials[tok.Content] = true
		}
	}
	existing := map[string][]addedTokenJSON{}
	seen := func(tok addedTokenJSON) bool {
		for _, e := range existing[tok.Content] {
			if e.same(tok) {
				return true
			}
		}
		return false
	}
	next := m.vocabSize()
	for _, tok := range tokens {
		if tok.Content == "" || seen(tok) {
			continue
		}
		id, ok := v.ids[tok.Content]
		if !ok {
			id, ok = m.tokenToID(tok.Content)
		}
		if !ok {
			id = next
			next++
		}
		v.ids[tok.Content] = id
		v.byID[id] = tok
		if !v.specials[tok.Content] {
			addedList = append(addedList, tok)
		}
		existing[tok.Content] = append(existing[tok.Content], tok)
	}
	v.raw.reset()
	v.normalized.reset()
	for _, tok := range append(specialList, addedList...) {
		id := v.ids[tok.Content]
		if !tok.normalized() {
			v.raw.add(tok.Content, id)
			continue
		}
		pat := tok.Content
		if norm != nil {
			pat, _ = norm.normalize(pat, true)
		}
		v.normalized.add(pat, id)
	}
}

func (v *addedVocab) isSpecial(tok string) bool { return v.specials[tok] }

// addedMatcher finds added tokens in text, leftmost-longest, as the
// library's Aho-Corasick automaton (MatchKind::LeftmostLongest) does: of the
// matches starting earliest, the longest.
type addedMatcher struct{ byteTrie }

func (m *addedMatcher) add(pat string, id int) { m.insert(pat, int32(id)) }

func (m *addedMatcher) empty() bool { return len(m.nodes) <= 1 }

// find returns the leftmost-longest match at or after i.
func (m *addedMatcher) find(s string, i int) (start, end, id int) {
	for j := i; j < len(s); j++ {
		n := m.root[s[j]]
		if n == 0 {
			continue
		}
		best, bestEnd := int32(-1), 0
		if m.nodes[n].id >= 0 {
			best, bestEnd = m.nodes[n].id, j+1
		}
		for k := j + 1; k < len(s); k++ {
			c, ok := m.nodes[n].next[s[k]]
			if !ok {
				break
			}
			n = c
			if m.nodes[n].id >= 0 {
				best, bestEnd = m.nodes[n].id, k+1
			}
		}
		if best >= 0 {
			return j, bestEnd, int(best)
		}
	}
	return -1, -1, -1
}

// split cuts s at the added tokens, as AddedVocabulary::find_matches does,
// and calls emit for each part in order: text with id -1, or a token's id.
func (m *addedMatcher) split(s string, first bool, v *addedVocab, emit func(s string, id int, first bool)) {
	if s == "" {
		return
	}
	if m.empty() {
		emit(s, -1, first)
		return
	}
	offset := 0
	for i := 0; i < len(s); {
		start, stop, id := m.find(s, i)
		if id < 0 {
			break
		}
		// The automaton goes on after the match, even one skipped below.
		i = stop
		tok := v.byID[id]
		if tok.SingleWord {
			startSpace := start == 0 || !endsWithWord(s[:start])
			stopSpace := stop == len(s) || !startsWithWord(s[stop:])
			if !startSpace || !stopSpace {
				continue
			}
		}
		if tok.Lstrip {
			start = max(spaceAtEnd(s[:start]), offset)
		}
		if tok.Rstrip {
			stop += spaceAtStart(s[stop:])
		}
		if offset < start {
			emit(s[offset:start], -1, first && offset == 0)
		}
		emit(s[start:stop], id, false)
		offset = stop
	}
	if offset != len(s) {
		emit(s[offset:], -1, first && offset == 0)
	}
}

// isWord is Rust regex's Unicode \w: Alphabetic, marks, decimal digits,
// connector punctuation and the joiners.
func isWord(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_'
	}
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.Is(unicode.Nd, r) || unicode.Is(unicode.Nl, r) ||
		unicode.Is(unicode.Pc, r) || unicode.Is(unicode.Other_Alphabetic, r) || r == 0x200C || r == 0x200D
}

func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return s != "" && isWord(r)
}

func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && isWord(r)
}

// spaceAtEnd is where the whitespace at the end of s begins.
func spaceAtEnd(s string) int {
	i := len(s)
	for i > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:i])
		if !unicode.IsSpace(r) {
			break
		}
		i -= n
	}
	return i
}

// spaceAtStart is the length of the whitespace at the start of s.
func spaceAtStart(s string) int {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += n
	}
	return i
}
