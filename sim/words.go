package sim

import (
	"fmt"
	"strings"

	"benchserve/tokenizer"
)

// candidates are the words the simulator generates, each sent with a
// leading space. Every one is a single token in o200k_base and cl100k_base,
// and a space-led lowercase word is a piece of its own in both encodings'
// split patterns, so any sequence of them retokenizes to exactly one token
// per word: the client's retokenized count equals completion_tokens.
var candidates = strings.Fields(`the of and to in is it that was for on are with
as be at by this had not but from or have an they which one you were her all
she there would their we him been has when who will more no if out so said
what up its about into than them can only other new some could time these two
may then do first any my now such like our over man me even most made after
also did many before must through back years where much your way well down
should because each just those people how too little state good very make
world still own see men work long here get both between life being under
never day same another know while last might us great old year off come since
against go came right used take three`)

// vocab is the output vocabulary for one tokenizer: the candidates that are
// one token in it, with their ids.
type vocab struct {
	text [][]byte // " word"
	ids  []int
}

func newVocab(tok tokenizer.Tokenizer) (*vocab, error) {
	v := &vocab{}
	for _, w := range candidates {
		s := " " + w
		if ids := tok.Encode(s, false); len(ids) == 1 {
			v.text = append(v.text, []byte(s))
			v.ids = append(v.ids, ids[0])
		}
	}
	if len(v.text) < 16 {
		return nil, fmt.Errorf("--tokenizer %s: only %d of the simulator's %d output words are single tokens in it (16 needed)",
			tok.Name(), len(v.text), len(candidates))
	}
	return v, nil
}

// textSeed picks the words of a reply: token i is drawn from seed, or,
// from token at on (at >= 0: the reply diverged, the diverge fault), from
// alt, token at then differing from the undiverged reply's.
type textSeed struct {
	seed, alt uint64
	at        int
}

// word returns the index of token i of the output seeded by s.
func (v *vocab) word(s textSeed, i int) int {
	n := uint64(len(v.text))
	w := int(mix64(s.seed+uint64(i)*0x9e3779b97f4a7c15) % n)
	if s.at >= 0 && i >= s.at {
		d := int(mix64(s.alt+uint64(i)*0x9e3779b97f4a7c15) % n)
		if i == s.at && d == w {
			d = (w + 1) % int(n)
		}
		w = d
	}
	return w
}

// appendText appends the text of tokens [from, from+n).
func (v *vocab) appendText(dst []byte, seed textSeed, from, n int) []byte {
	for i := from; i < from+n; i++ {
		dst = append(dst, v.text[v.word(seed, i)]...)
	}
	return dst
}

// appendIDs appends the ids of tokens [from, from+n) to dst.
func (v *vocab) appendIDs(dst []int, seed textSeed, from, n int) []int {
	for i := from; i < from+n; i++ {
		dst = append(dst, v.ids[v.word(seed, i)])
	}
	return dst
}
