package tokenizer

import (
	"fmt"
	"strings"
	"sync"

	tk "github.com/tiktoken-go/tokenizer"
)

// Load returns the tokenizer called name: a built-in OpenAI encoding
// (o200k_base, cl100k_base) or an OpenAI model name that tiktoken maps to
// one (gpt-4o → o200k_base, gpt-4 → cl100k_base). The encoding's tables are
// built once, on the first Load that needs them; later Loads share them.
func Load(name string) (Tokenizer, error) {
	enc := lookup(name)
	if enc == nil {
		return nil, fmt.Errorf("tokenizer %q: not supported yet: use --tokenizer o200k_base", name)
	}
	enc.once.Do(enc.init)
	return &tiktoken{name: name, enc: enc}, nil
}

// encoding is one built-in tiktoken encoding, shared by every Tokenizer that
// uses it.
type encoding struct {
	id tk.Encoding
	// vocab is the number of ordinary ids: [0, vocab) is dense.
	vocab   int
	special map[int]string

	once sync.Once
	// enc tokenizes in errors="replace" mode, so invalid UTF-8 in the input
	// is read as U+FFFD; dec returns raw bytes, which Decode repairs after
	// joining the pieces (a character may span tokens).
	enc, dec tk.Codec
	// delID and standInIDs are the ids of the one-byte tokens "\x7f" and
	// delStandIns (see replaceDEL).
	delID      uint
	standInIDs [len(delStandIns)]uint
}

// The special ids are tiktoken's; the library knows them but does not
// expose them, and it never emits them from Encode.
var (
	o200kBase = &encoding{
		id:    tk.O200kBase,
		vocab: 199998,
		special: map[int]string{
			199999: "<|endoftext|>",
			200018: "<|endofprompt|>",
		},
	}
	cl100kBase = &encoding{
		id:    tk.Cl100kBase,
		vocab: 100256,
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

func (e *encoding) init() {
	// Get fails only for an unknown encoding, and ours are constants.
	e.enc, _ = tk.Get(e.id)
	e.enc.SetErrorMode(tk.ErrorModeReplace)
	e.dec, _ = tk.Get(e.id)
	e.dec.SetErrorMode(tk.ErrorModeNone)
	// Every byte is a token among the first 256 ids. (Encode cannot find
	// DEL's: that is the bug worked around.)
	var byteID [256]uint
	for id := range uint(256) {
		if s, _ := e.dec.Decode([]uint{id}); len(s) == 1 {
			byteID[s[0]] = id
		}
	}
	e.delID = byteID[delByte]
	for i := range delStandIns {
		e.standInIDs[i] = byteID[delStandIns[i]]
	}
}

const delByte = 0x7f

// delStandIns are control characters that, like DEL, are in none of the
// split pattern's classes (\s, \p{L}, \p{N}, \r\n, /, ') and, like DEL,
// appear in no token of two or more bytes (TestDelStandIns checks both).
const delStandIns = "\x02\x03\x04\x05\x06\x07\x08\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a"

// replaceDEL works around the library's split pattern, whose generated
// matcher never matches U+007F (DEL) and so drops it from the ids. It swaps
// each DEL in text for a stand-in absent from text that splits the same way
// and, like DEL, never merges with its neighbours; so the ids differ only in
// the stand-in's id, which it returns (ok false when text has no DEL) for
// Encode to swap back. In the absurd case that text holds every stand-in,
// DEL stays dropped.
func (e *encoding) replaceDEL(text string) (out string, standIn uint, ok bool) {
	if strings.IndexByte(text, delByte) < 0 {
		return text, 0, false
	}
	for i := range len(delStandIns) {
		if strings.IndexByte(text, delStandIns[i]) < 0 {
			return strings.ReplaceAll(text, "\x7f", delStandIns[i:i+1]), e.standInIDs[i], true
		}
	}
	return text, 0, false
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

// Encode ignores addSpecial: tiktoken encodings add no BOS or EOS.
func (t *tiktoken) Encode(text string, addSpecial bool) []int {
	text, standIn, swap := t.enc.replaceDEL(text)
	// The library's only errors are regexp timeouts, and none is set.
	ids, _, _ := t.enc.enc.Encode(text)
	out := make([]int, len(ids))
	for i, id := range ids {
		if swap && id == standIn {
			id = t.enc.delID
		}
		out[i] = int(id)
	}
	return out
}

func (t *tiktoken) Count(text string) int {
	text, _, _ = t.enc.replaceDEL(text)
	n, _ := t.enc.enc.Count(text)
	return n
}

// Decode writes special ids as their text and skips ids that name no token
// (negative, past the last special id, or in a gap between them), as Hugging
// Face tokenizers' decode does. Invalid UTF-8 in the joined bytes becomes
// U+FFFD, one per maximal invalid subsequence, as Python's errors="replace".
func (t *tiktoken) Decode(ids []int) string {
	var sb strings.Builder
	run := make([]uint, 0, len(ids))
	flush := func() {
		if len(run) > 0 {
			// Every id in run is ordinary, so this cannot fail.
			s, _ := t.enc.dec.Decode(run)
			sb.WriteString(s)
			run = run[:0]
		}
	}
	for _, id := range ids {
		switch {
		case id >= 0 && id < t.enc.vocab:
			run = append(run, uint(id))
		case t.enc.special[id] != "":
			flush()
			sb.WriteString(t.enc.special[id])
		}
	}
	flush()
	return replaceInvalid(sb.String())
}

func (t *tiktoken) VocabSize() int { return t.enc.vocab }

func (t *tiktoken) NumSpecialTokensToAdd() int { return 0 }

func (t *tiktoken) BOSToken() string { return "" }
