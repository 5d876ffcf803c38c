package tokenizer

import (
	"fmt"
	"strings"
)

// fakeEngine stands in for the tokenizer.json engine: one id per byte
// (id = byte value + 10), plus the special tokens it is given, which it
// matches in the text first. It records the options Pretrained sets.
type fakeEngine struct {
	special map[string]int
	vocab   int

	post    []string // SetPostTemplate calls, "bos|eos|addBOS|addEOS"
	postErr error
	decode  string // last SetDecodeOptions, "skip=..,cleanUp=.."
	addBOS  string
	addEOS  string
}

var _ engine = (*fakeEngine)(nil)

func newFakeEngine(special ...string) *fakeEngine {
	f := &fakeEngine{special: map[string]int{}, vocab: 266}
	for i, s := range special {
		f.special[s] = f.vocab + i
	}
	return f
}

func (f *fakeEngine) Name() string { return "fake" }

func (f *fakeEngine) Encode(text string, addSpecial bool) []int {
	var ids []int
	if addSpecial && f.addBOS != "" {
		ids = append(ids, f.special[f.addBOS])
	}
outer:
	for i := 0; i < len(text); {
		for s, id := range f.special {
			if strings.HasPrefix(text[i:], s) {
				ids = append(ids, id)
				i += len(s)
				continue outer
			}
		}
		ids = append(ids, int(text[i])+10)
		i++
	}
	if addSpecial && f.addEOS != "" {
		ids = append(ids, f.special[f.addEOS])
	}
	return ids
}

func (f *fakeEngine) Count(text string) int { return len(f.Encode(text, false)) }

func (f *fakeEngine) Decode(ids []int) string {
	var sb strings.Builder
	for _, id := range ids {
		if tok, ok := f.IDToToken(id); ok {
			if id < f.vocab {
				sb.WriteByte(byte(id - 10))
			} else {
				sb.WriteString(tok)
			}
		}
	}
	return sb.String()
}

func (f *fakeEngine) VocabSize() int { return f.vocab }

func (f *fakeEngine) NumSpecialTokensToAdd() int {
	n := 0
	if f.addBOS != "" {
		n++
	}
	if f.addEOS != "" {
		n++
	}
	return n
}

func (f *fakeEngine) BOSToken() string { return "" }

func (f *fakeEngine) TokenToID(tok string) (int, bool) {
	if id, ok := f.special[tok]; ok {
		return id, true
	}
	if len(tok) == 1 {
		return int(tok[0]) + 10, true
	}
	return 0, false
}

func (f *fakeEngine) IDToToken(id int) (string, bool) {
	if id >= 10 && id < f.vocab {
		return string(rune(id - 10)), true
	}
	for s, i := range f.special {
		if i == id {
			return s, true
		}
	}
	return "", false
}

func (f *fakeEngine) SpecialIDs() []int {
	var ids []int
	for _, id := range f.special {
		ids = append(ids, id)
	}
	return ids
}

func (f *fakeEngine) AddedTokens() map[string]int { return f.special }

func (f *fakeEngine) SetPostTemplate(bos, eos string, addBOS, addEOS bool) error {
	f.post = append(f.post, fmt.Sprintf("%s|%s|%v|%v", bos, eos, addBOS, addEOS))
	if f.postErr != nil {
		return f.postErr
	}
	for _, t := range []struct {
		tok string
		on  bool
	}{{bos, addBOS}, {eos, addEOS}} {
		if _, ok := f.special[t.tok]; t.on && !ok {
			return fmt.Errorf("post-processor: token %q is not in the vocabulary", t.tok)
		}
	}
	f.addBOS, f.addEOS = "", ""
	if addBOS {
		f.addBOS = bos
	}
	if addEOS {
		f.addEOS = eos
	}
	return nil
}

func (f *fakeEngine) SetDecodeOptions(skipSpecial, cleanUp bool) {
	f.decode = fmt.Sprintf("skip=%v,cleanUp=%v", skipSpecial, cleanUp)
}
