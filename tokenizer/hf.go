package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// HF is a Hugging Face tokenizer read from a tokenizer.json, encoding and
// decoding as the Rust tokenizers library does (the engine behind
// transformers' fast tokenizers).
//
// The pipeline is the library's: added tokens are split out of the text
// (first those matched on the raw text, then, after normalization, those
// matched on normalized text), each remaining piece is normalized,
// pre-tokenized into words, and each word is tokenized by the model; the
// post-processor then adds the special tokens. Offsets are not computed:
// only ids are needed here.
type HF struct {
	name  string
	file  string
	model hfModel
	norm  normalizer
	pre   preTokenizer
	// rawBytes is set when the pre-tokenizer ends with a ByteLevel step whose
	// byte-to-character mapping is skipped: the BPE model then reads the raw
	// bytes of each word, which is the same thing and much cheaper.
	rawBytes bool
	post     postProcessor
	dec      decoder
	added    addedVocab

	skipSpecial atomic.Bool
	cleanUp     atomic.Bool
}

var _ Tokenizer = (*HF)(nil)

// ParseHF reads a tokenizer.json. name is what the user selected; messages
// name the file as "<name>/tokenizer.json" (or name itself when it already
// ends in .json).
func ParseHF(data []byte, name string) (*HF, error) {
	file := name
	if !strings.HasSuffix(name, ".json") {
		file = strings.TrimSuffix(name, "/") + "/tokenizer.json"
	}
	d := &jsonDoc{file: file, data: data, text: string(data)}
	end, err := d.skip(0)
	if err != nil {
		return nil, err
	}
	if i := d.ws(end); i != len(data) {
		return nil, d.errorf(i, "invalid character %q after the top-level value", data[i])
	}
	top, err := d.object(0)
	if err != nil {
		return nil, err
	}
	t := &HF{name: name, file: file}
	var modelSpan, addedSpan *jsonSpan
	comps := map[string]jsonSpan{}
	for i := range top {
		m := &top[i]
		switch m.key {
		case "version":
			var v string
			if err := d.unmarshal(m.start, m.end, "version", &v); err != nil {
				return nil, err
			}
			if v != "1.0" {
				return nil, fmt.Errorf("%s: unknown tokenizer version %q", file, v)
			}
		case "model":
			modelSpan = m
		case "added_tokens":
			addedSpan = m
		case "normalizer", "pre_tokenizer", "post_processor", "decoder":
			comps[m.key] = *m
		}
		// truncation and padding are ignored: transformers turns them off
		// unless a call asks for them.
	}
	if modelSpan == nil {
		return nil, fmt.Errorf("%s: no model", file)
	}
	if t.model, err = parseModel(d, modelSpan.start, modelSpan.end); err != nil {
		return nil, err
	}
	for _, key := range []string{"normalizer", "pre_tokenizer", "post_processor", "decoder"} {
		s, ok := comps[key]
		if !ok || d.isNull(s.start, s.end) {
			continue
		}
		raw := d.data[s.start:s.end]
		switch key {
		case "normalizer":
			t.norm, err = parseNormalizer(raw)
		case "pre_tokenizer":
			t.pre, err = parsePreTokenizer(raw)
		case "post_processor":
			t.post, err = parsePostProcessor(raw)
		case "decoder":
			t.dec, err = parseDecoder(raw)
		}
		if err != nil {
			return nil, d.componentErr(key, s.start, err)
		}
	}
	var tokens []addedTokenJSON
	if addedSpan != nil && !d.isNull(addedSpan.start, addedSpan.end) {
		if err := d.unmarshal(addedSpan.start, addedSpan.end, "added_tokens", &tokens); err != nil {
			return nil, err
		}
	}
	t.added.build(tokens, t.model, t.norm)
	if bpe, ok := t.model.(*bpeModel); ok {
		if last, ok := lastByteLevel(t.pre); ok && bpe.canReadRawBytes() {
			last.raw = true
			t.rawBytes = true
			bpe.rawBytes = true
		}
	}
	return t, nil
}

// componentErr turns a component's error into one line naming the file
// and the component; unsupported components are named without a position.
func (d *jsonDoc) componentErr(key string, pos int, err error) error {
	var u *unsupportedError
	if errors.As(err, &u) {
		return fmt.Errorf("%s: %v", d.file, err)
	}
	return d.errorf(pos, "%s: %v", key, err)
}

// unsupportedError names a component this package does not implement.
type unsupportedError struct{ kind, name string }

func (e *unsupportedError) Error() string {
	return fmt.Sprintf("unsupported %s %q", e.kind, e.name)
}

func asErr[T error](err error, target *T) bool { return errors.As(err, target) }

// piece is a part of the input on its way to the model. first is set when it
// starts at the beginning of the input, which Metaspace's prepend_scheme
// "first" looks at.
type piece struct {
	s     string
	first bool
}

func (t *HF) Name() string { return t.name }

// Encode returns the ids of text. Invalid UTF-8 is read as U+FFFD, one per
// maximal invalid subsequence, as Python decodes bytes with
// errors="replace" (Rust strings cannot hold it).
func (t *HF) Encode(text string, addSpecial bool) []int {
	ids := t.encode(text, nil)
	if t.post != nil {
		return t.post.process(ids, addSpecial)
	}
	return ids
}

var idPool = sync.Pool{New: func() any { s := make([]int, 0, 256); return &s }}

// Count is len(Encode(text, false)); it reuses a pooled buffer.
func (t *HF) Count(text string) int {
	p := idPool.Get().(*[]int)
	ids := t.encode(text, (*p)[:0])
	n := len(ids)
	if cap(ids) <= 1<<20 {
		*p = ids[:0]
		idPool.Put(p)
	}
	return n
}

func (t *HF) encode(text string, out []int) []int {
	text = replaceInvalid(text)
	e := encoder{t: t, out: out}
	t.added.raw.split(text, true, &t.added, e.rawSegment)
	return e.out
}

// encoder carries one Encode call's state through the pipeline's callbacks.
type encoder struct {
	t   *HF
	out []int
}

func (e *encoder) rawSegment(s string, id int, first bool) {
	if id >= 0 {
		e.out = append(e.out, id)
		return
	}
	if e.t.norm != nil {
		s, first = e.t.norm.normalize(s, first)
	}
	e.t.added.normalized.split(s, first, &e.t.added, e.normSegment)
}

func (e *encoder) normSegment(s string, id int, first bool) {
	if id >= 0 {
		e.out = append(e.out, id)
		return
	}
	if e.t.pre == nil {
		e.word(piece{s, first})
		return
	}
	e.t.pre.split(piece{s, first}, e.word)
}

func (e *encoder) word(p piece) {
	if p.s != "" {
		e.out = e.t.model.tokenize(p.s, e.out)
	}
}

// Decode turns ids back into text as the library's decode does: ids that
// name no token are skipped, special tokens too when SetDecodeOptions asked
// for it, and the decoder joins the rest.
func (t *HF) Decode(ids []int) string {
	skip := t.skipSpecial.Load()
	toks := make([]string, 0, len(ids))
	for _, id := range ids {
		tok, ok := t.IDToToken(id)
		if !ok || skip && t.added.isSpecial(tok) {
			continue
		}
		toks = append(toks, tok)
	}
	var s string
	if t.dec == nil {
		s = strings.Join(toks, " ")
	} else {
		s = strings.Join(t.dec.decodeChain(toks), "")
	}
	s = replaceInvalid(s)
	if t.cleanUp.Load() {
		s = cleanUpTokenization(s)
	}
	return s
}

// cleanUpTokenization is transformers' clean_up_tokenization.
func cleanUpTokenization(s string) string {
	return cleanUpReplacer.Replace(s)
}

var cleanUpReplacer = strings.NewReplacer(" .", ".", " ?", "?", " !", "!", " ,", ",", " ' ", "'", " n't", "n't", " 'm", "'m", " 's", "'s", " 've", "'ve", " 're", "'re")

func (t *HF) VocabSize() int { return t.model.vocabSize() }

func (t *HF) NumSpecialTokensToAdd() int {
	if t.post == nil {
		return 0
	}
	return t.post.added()
}

// BOSToken is "": tokenizer.json does not say which token is BOS;
// tokenizer_config.json does.
func (t *HF) BOSToken() string { return "" }

// TokenToID returns the id of a token, added tokens first, as the library's
// token_to_id.
func (t *HF) TokenToID(tok string) (int, bool) {
	if id, ok := t.added.ids[tok]; ok {
		return id, true
	}
	return t.model.tokenToID(tok)
}

// IDToToken returns the token of an id, added tokens first.
func (t *HF) IDToToken(id int) (string, bool) {
	if tok, ok := t.added.byID[id]; ok {
		return tok.Content, true
	}
	return t.model.idToToken(id)
}

// SpecialIDs returns the ids of the added tokens marked special, ascending.
func (t *HF) SpecialIDs() []int {
	var ids []int
	for id, tok := range t.added.byID {
		if tok.special() {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// AddedTokens returns the added tokens and their ids.
func (t *HF) AddedTokens() map[string]int {
	m := make(map[string]int, len(t.added.ids))
	for k, v := range t.added.ids {
		m[k] = v
	}
	return m
}

// SetPostTemplate replaces the post-processor with a TemplateProcessing
// that puts bos before and eos after a sequence, each when asked, as
// transformers' LlamaTokenizerFast.update_post_processor does for
// add_bos_token and add_eos_token. Call it before the tokenizer is shared.
func (t *HF) SetPostTemplate(bos, eos string, addBOS, addEOS bool) error {
	var tp templateProcessor
	if addBOS {
		if bos == "" {
			return fmt.Errorf("%s: add_bos_token is set but there is no bos_token", t.file)
		}
		id, ok := t.TokenToID(bos)
		if !ok {
			return fmt.Errorf("%s: bos_token %q is not in the vocabulary", t.file, bos)
		}
		tp.prefix = []int{id}
	}
	if addEOS {
		if eos == "" {
			return fmt.Errorf("%s: add_eos_token is set but there is no eos_token", t.file)
		}
		id, ok := t.TokenToID(eos)
		if !ok {
			return fmt.Errorf("%s: eos_token %q is not in the vocabulary", t.file, eos)
		}
		tp.suffix = []int{id}
	}
	t.post = &tp
	return nil
}

// SetDecodeOptions sets what Decode does: skipSpecial drops special tokens
// (transformers' skip_special_tokens), cleanUp applies transformers'
// clean_up_tokenization to the result.
func (t *HF) SetDecodeOptions(skipSpecial, cleanUp bool) {
	t.skipSpecial.Store(skipSpecial)
	t.cleanUp.Store(cleanUp)
}

// component is the part of every component's JSON that names its type.
type component struct {
	Type string `json:"type"`
}

func componentType(raw []byte) (string, error) {
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return "", err
	}
	return c.Type, nil
}

// parseSequence parses the list under key of a Sequence component, each
// element with parse.
func parseSequence[T any](raw []byte, key string, parse func([]byte) (T, error)) ([]T, error) {
	var c map[string]json.RawMessage
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(c[key], &items); err != nil && c[key] != nil {
		return nil, err
	}
	out := make([]T, 0, len(items))
	for _, r := range items {
		v, err := parse(r)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
