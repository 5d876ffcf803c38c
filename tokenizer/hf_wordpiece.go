package tokenizer

import (
	"unicode/utf8"
)

// wordPieceModel is the library's WordPiece model (BERT): greedy longest
// match from the start of the word, later pieces carrying the continuing
// prefix ("##"); a word with a part that matches nothing is unk whole.
type wordPieceModel struct {
	vocab
	unk     int
	prefix  string
	maxWord int
}

func parseWordPiece(d *jsonDoc, f modelFields, vs *jsonSpan) (hfModel, error) {
	v, err := readVocab(d, vs.start, vs.end)
	if err != nil {
		return nil, err
	}
	m := &wordPieceModel{vocab: v, unk: -1, prefix: "##", maxWord: 100}
	unk := "[UNK]"
	if f.UnkToken != nil {
		unk = *f.UnkToken
	}
	if id, ok := v.ids[unk]; ok {
		m.unk = id
	}
	if f.ContinuingSubwordPrefix != nil {
		m.prefix = *f.ContinuingSubwordPrefix
	}
	if f.MaxInputCharsPerWord != nil {
		m.maxWord = *f.MaxInputCharsPerWord
	}
	return m, nil
}

func (m *wordPieceModel) tokenize(word string, out []int) []int {
	if utf8.RuneCountInString(word) > m.maxWord {
		return m.unkWord(out)
	}
	n := len(out)
	var buf []byte
	for start := 0; start < len(word); {
		end := len(word)
		found := -1
		for start < end {
			var id int
			var ok bool
			if start > 0 {
				buf = append(append(buf[:0], m.prefix...), word[start:end]...)
				id, ok = m.ids[string(buf)]
			} else {
				id, ok = m.ids[word[start:end]]
			}
			if ok {
				found = id
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if found < 0 {
			return m.unkWord(out[:n])
		}
		out = append(out, found)
		start = end
	}
	return out
}

func (m *wordPieceModel) unkWord(out []int) []int {
	if m.unk >= 0 {
		return append(out, m.unk)
	}
	return out
}
