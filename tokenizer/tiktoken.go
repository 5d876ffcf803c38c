package tokenizer

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
)

// The encodings' vocabularies, OpenAI's tiktoken ranks (MIT licence) in a
// compact form made by tools/tiktokengen; ranks/README.md says from what.
//
//go:generate go run ../tools/tiktokengen
var (
	//go:embed ranks/o200k_base.ranks
	o200kRanks string
	//go:embed ranks/cl100k_base.ranks
	cl100kRanks string
)

// Load returns the tokenizer called name: a built-in OpenAI encoding
// (o200k_base, cl100k_base) or an OpenAI model name that tiktoken maps to
// one (gpt-4o → o200k_base, gpt-4 → cl100k_base). The encoding's tables are
// built once, on the first Load that needs them; later Loads share them.
func Load(name string) (Tokenizer, error) {
	enc := lookup(name)
	if enc == nil {
		return nil, fmt.Errorf("tokenizer %q: not a built-in encoding (o200k_base, cl100k_base, or an OpenAI model name); use Resolve for Hugging Face tokenizers", name)
	}
	enc.once.Do(enc.init)
	if enc.err != nil {
		return nil, fmt.Errorf("tokenizer %q: %v", name, enc.err)
	}
	return &tiktoken{name: name, enc: enc}, nil
}

// encoding is one built-in tiktoken encoding, shared by every Tokenizer that
// uses it: the split matchers of the Hugging Face engine (hand-written,
// checked against the regexes by FuzzFastSplit) and tiktoken's rank-based
// byte-pair merge over the embedded ranks.
type encoding struct {
	name string
	// vocab is the number of ordinary ids: [0, vocab) is dense.
	vocab   int
	special map[int]string
	pattern string
	data    string // the .ranks file

	once  sync.Once
	err   error
	split matcher
	// ranks maps a token's bytes to its id (tiktoken's rank) and back.
	ranks *rankTable
}

// The special ids are tiktoken's (openai_public.py), not in the .ranks
// files; TestRanksMatchPackage checks them against the npm package.
var (
	o200kBase = &encoding{
		name:    "o200k_base",
		vocab:   199998,
		data:    o200kRanks,
		pattern: o200kPattern,
		special: map[int]string{
			199999: "<|endoftext|>",
			200018: "<|endofprompt|>",
		},
	}
	cl100kBase = &encoding{
		name:    "cl100k_base",
		vocab:   100256,
		data:    cl100kRanks,
		pattern: llama3Pattern, // cl100k_base's, which Llama-3 took over
		special: map[int]string{
			100257: "<|endoftext|>",
			100258: "<|fim_prefix|>",
			100259: "<|fim_middle|>",
			100260: "<|fim_suffix|>",
			100276: "<|endofprompt|>",
		},
	}
)

// aliases maps model names to encodings as tiktoken's MODEL_TO_ENCODING does
// (the subset that uses o200k_base or cl100k_base).
var aliases = map[string]*encoding{
	"o200k_base":             o200kBase,
	"gpt-5":                  o200kBase,
	"gpt-4.1":                o200kBase,
	"gpt-4o":                 o200kBase,
	"chatgpt-4o-latest":      o200kBase,
	"o1":                     o200kBase,
	"o3":                     o200kBase,
	"o4-mini":                o200kBase,
	"cl100k_base":            cl100kBase,
	"gpt-4":                  cl100kBase,
	"gpt-3.5-turbo":          cl100kBase,
	"gpt-3.5":                cl100kBase,
	"gpt-35-turbo":           cl100kBase,
	"text-embedding-ada-002": cl100kBase,
	"text-embedding-3-small": cl100kBase,
	"text-embedding-3-large": cl100kBase,
}

// prefixes is tiktoken's MODEL_PREFIX_TO_ENCODING subset, longest first
// where one prefix starts another ("ft:gpt-4o" before "ft:gpt-4").
var prefixes = []struct {
	prefix string
	enc    *encoding
}{
	{"gpt-5-", o200kBase},
	{"gpt-4.1-", o200kBase},
	{"gpt-4o-", o200kBase},
	{"chatgpt-4o-", o200kBase},
	{"o1-", o200kBase},
	{"o3-", o200kBase},
	{"o4-mini-", o200kBase},
	{"ft:gpt-4o", o200kBase},
	{"gpt-4-", cl100kBase},
	{"gpt-3.5-turbo-", cl100kBase},
	{"gpt-35-turbo-", cl100kBase},
	{"ft:gpt-4", cl100kBase},
	{"ft:gpt-3.5-turbo", cl100kBase},
}

func lookup(name string) *encoding {
	if enc, ok := aliases[name]; ok {
		return enc
	}
	for _, p := range prefixes {
		if strings.HasPrefix(name, p.prefix) {
			return p.enc
		}
	}
	return nil
}

// init builds the tables on first use: the pieces stay where go:embed put
// them, in the binary's read-only data; only offsets are made, and the
// index on the first encode (see rankTable).
func (e *encoding) init() {
	e.ranks, e.err = newRankTable(e.data, e.vocab)
	// Both patterns have hand-written matchers, so this cannot fail.
	e.split, _ = compileRegex(e.pattern)
}

// appendPiece appends the ids of one piece of split text: its own id when it
// is a token, else tiktoken's byte-pair merge, which joins the adjacent
// parts whose union has the lowest rank until none is a token.
func (e *encoding) appendPiece(dst []int, piece string) []int {
	if id, ok := e.ranks.rank(piece); ok {
		return append(dst, int(id))
	}
	var stack [64]int
	bounds := stack[:0]
	if len(piece)+1 > len(stack) {
		bounds = make([]int, 0, len(piece)+1)
	}
	for i := range len(piece) + 1 {
		bounds = append(bounds, i)
	}
	for len(bounds) > 2 {
		best, bestRank := -1, ^uint(0)
		for i := 0; i+2 < len(bounds); i++ {
			if r, ok := e.ranks.rank(piece[bounds[i]:bounds[i+2]]); ok && r < bestRank {
				best, bestRank = i, r
			}
		}
		if best < 0 {
			break
		}
		bounds = append(bounds[:best+1], bounds[best+2:]...)
	}
	for i := 0; i+1 < len(bounds); i++ {
		r, _ := e.ranks.rank(piece[bounds[i]:bounds[i+1]])
		dst = append(dst, int(r))
	}
	return dst
}

// countPiece is len(appendPiece(nil, piece)) without the slice for the
// common case of a piece that is one token.
func (e *encoding) countPiece(piece string) int {
	if _, ok := e.ranks.rank(piece); ok {
		return 1
	}
	var buf [64]int
	return len(e.appendPiece(buf[:0], piece))
}

// tiktoken is a Tokenizer over a built-in encoding. Special-token text in the
// input ("<|endoftext|>") is encoded as ordinary text, as tiktoken's
// encode_ordinary does: benchmark prompts and generated text are data, and
// no template puts special tokens into them here.
type tiktoken struct {
	name string
	enc  *encoding
}

var _ Tokenizer = (*tiktoken)(nil)

func (t *tiktoken) Name() string { return t.name }

// Encode ignores addSpecial: tiktoken encodings add no BOS or EOS. Invalid
// UTF-8 is read as U+FFFD, as a Python str would hold it.
func (t *tiktoken) Encode(text string, addSpecial bool) []int {
	text = replaceInvalid(text)
	out := make([]int, 0, len(text)/4+1)
	t.enc.split.matches(text, func(start, end int) {
		out = t.enc.appendPiece(out, text[start:end])
	})
	return out
}

func (t *tiktoken) Count(text string) int {
	text = replaceInvalid(text)
	n := 0
	t.enc.split.matches(text, func(start, end int) {
		n += t.enc.countPiece(text[start:end])
	})
	return n
}

// Decode writes special ids as their text and skips ids that name no token
// (negative, past the last special id, or in a gap between them), as Hugging
// Face tokenizers' decode does. Invalid UTF-8 in the joined bytes becomes
// U+FFFD, one per maximal invalid subsequence, as Python's errors="replace".
func (t *tiktoken) Decode(ids []int) string {
	n := 0
	for _, id := range ids {
		if id >= 0 && id < t.enc.vocab {
			n += int(t.enc.ranks.lens[id])
		} else {
			n += len(t.enc.special[id])
		}
	}
	var sb strings.Builder
	sb.Grow(n)
	for _, id := range ids {
		switch {
		case id >= 0 && id < t.enc.vocab:
			sb.WriteString(t.enc.ranks.piece(id))
		case t.enc.special[id] != "":
			sb.WriteString(t.enc.special[id])
		}
	}
	return replaceInvalid(sb.String())
}

func (t *tiktoken) VocabSize() int { return t.enc.vocab }

func (t *tiktoken) NumSpecialTokensToAdd() int { return 0 }

func (t *tiktoken) BOSToken() string { return "" }
