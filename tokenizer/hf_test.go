package tokenizer

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// tinyBPE is a byte-level BPE tokenizer.json small enough to write by hand:
// every byte's character, a few merges, two special tokens and one added
// token that is not special.
func tinyBPE(post string) string {
	var vocab []string
	for b := range 256 {
		vocab = append(vocab, fmt.Sprintf("%q:%d", string(byteLevelRune[b]), b))
	}
	vocab = append(vocab, `"he":256`, `"ll":257`, `"hell":258`, `"hello":259`, `"Ġw":260`)
	if post == "" {
		post = "null"
	}
	return `{
  "version": "1.0",
  "added_tokens": [
    {"id": 261, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 262, "content": "</s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 263, "content": "<extra>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false}
  ],
  "normalizer": null,
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
  "post_processor": ` + post + `,
  "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
  "model": {"type": "BPE", "dropout": null, "unk_token": null, "vocab": {` + strings.Join(vocab, ",") + `},
    "merges": ["h e", "l l", "he ll", ["hell", "o"], "Ġ w"]}
}`
}

func mustParse(t testing.TB, js string) *HF {
	t.Helper()
	tok, err := ParseHF([]byte(js), "tiny")
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestHFTinyBPE(t *testing.T) {
	tok := mustParse(t, tinyBPE(""))
	if got := tok.Encode("hello world", false); !slices.Equal(got, []int{259, 260, 'o', 'r', 'l', 'd'}) {
		t.Errorf("Encode = %v", got)
	}
	if got := tok.Encode("<s>hello</s><extra>", true); !slices.Equal(got, []int{261, 259, 262, 263}) {
		t.Errorf("Encode with added tokens = %v", got)
	}
	if got := tok.VocabSize(); got != 261 {
		t.Errorf("VocabSize = %d, want 261", got)
	}
	if got := tok.SpecialIDs(); !slices.Equal(got, []int{261, 262}) {
		t.Errorf("SpecialIDs = %v", got)
	}
	if got := tok.AddedTokens(); len(got) != 3 || got["<extra>"] != 263 {
		t.Errorf("AddedTokens = %v", got)
	}
	if id, ok := tok.TokenToID("hell"); !ok || id != 258 {
		t.Errorf("TokenToID(hell) = %d, %v", id, ok)
	}
	if s, ok := tok.IDToToken(262); !ok || s != "</s>" {
		t.Errorf("IDToToken(262) = %q, %v", s, ok)
	}
	if _, ok := tok.IDToToken(100000); ok {
		t.Error("IDToToken(100000) found a token")
	}
	if got := tok.Decode([]int{261, 259, 260, 'o', -5, 99999, 262}); got != "<s>hello wo</s>" {
		t.Errorf("Decode = %q", got)
	}
	// A character cut between tokens is U+FFFD, as from_utf8_lossy makes it.
	ids := tok.Encode("é", false)
	if got := tok.Decode(ids[:1]); got != "\uFFFD" {
		t.Errorf("Decode(half of é) = %q", got)
	}
	tok.SetDecodeOptions(true, false)
	if got := tok.Decode([]int{261, 259, 263, 262}); got != "hello<extra>" {
		t.Errorf("Decode skipping special = %q", got)
	}
	tok.SetDecodeOptions(false, true)
	if got := tok.Decode(tok.Encode("hello , world . I 'm", false)); got != "hello, world. I'm" {
		t.Errorf("Decode with clean-up = %q", got)
	}
	if tok.NumSpecialTokensToAdd() != 0 || tok.BOSToken() != "" || tok.Name() != "tiny" {
		t.Error("NumSpecialTokensToAdd, BOSToken or Name wrong")
	}
}

func TestHFPostProcessors(t *testing.T) {
	tests := []struct {
		post string
		want []int
	}{
		{`{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"</s>","type_id":0}}],"pair":[],"special_tokens":{"<s>":{"id":"<s>","ids":[261],"tokens":["<s>"]},"</s>":{"id":"</s>","ids":[262],"tokens":["</s>"]}}}`, []int{261, 259, 262}},
		{`{"type":"TemplateProcessing","single":"<s> $A:0","pair":"<s> $A $B","special_tokens":{"<s>":{"id":"<s>","ids":[261],"tokens":["<s>"]}}}`, []int{261, 259}},
		{`{"type":"RobertaProcessing","sep":["</s>",262],"cls":["<s>",261],"trim_offsets":true,"add_prefix_space":true}`, []int{261, 259, 262}},
		{`{"type":"BertProcessing","sep":["</s>",262],"cls":["<s>",261]}`, []int{261, 259, 262}},
		{`{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":false,"use_regex":true}`, []int{259}},
		{`{"type":"Sequence","processors":[{"type":"ByteLevel"},{"type":"BertProcessing","sep":["</s>",262],"cls":["<s>",261]}]}`, []int{261, 259, 262}},
	}
	for _, tt := range tests {
		tok := mustParse(t, tinyBPE(tt.post))
		if got := tok.Encode("hello", true); !slices.Equal(got, tt.want) {
			t.Errorf("%s: Encode(true) = %v, want %v", tt.post, got, tt.want)
		}
		if got := tok.Encode("hello", false); !slices.Equal(got, []int{259}) {
			t.Errorf("%s: Encode(false) = %v", tt.post, got)
		}
		if got := tok.NumSpecialTokensToAdd(); got != len(tt.want)-1 {
			t.Errorf("%s: NumSpecialTokensToAdd = %d", tt.post, got)
		}
	}
}

func TestHFSetPostTemplate(t *testing.T) {
	tok := mustParse(t, tinyBPE(""))
	for _, tt := range []struct {
		bos, eos       bool
		want           []int
		wantNumSpecial int
	}{
		{true, false, []int{261, 259}, 1},
		{false, true, []int{259, 262}, 1},
		{true, true, []int{261, 259, 262}, 2},
		{false, false, []int{259}, 0},
	} {
		if err := tok.SetPostTemplate("<s>", "</s>", tt.bos, tt.eos); err != nil {
			t.Fatal(err)
		}
		if got := tok.Encode("hello", true); !slices.Equal(got, tt.want) {
			t.Errorf("bos %v eos %v: Encode = %v, want %v", tt.bos, tt.eos, got, tt.want)
		}
		if got := tok.NumSpecialTokensToAdd(); got != tt.wantNumSpecial {
			t.Errorf("bos %v eos %v: NumSpecialTokensToAdd = %d", tt.bos, tt.eos, got)
		}
	}
	if err := tok.SetPostTemplate("<nope>", "", true, false); err == nil || !strings.Contains(err.Error(), `"<nope>"`) {
		t.Errorf("unknown bos: err = %v", err)
	}
	if err := tok.SetPostTemplate("", "", false, true); err == nil {
		t.Error("add_eos_token without eos: no error")
	}
}

func TestHFParseErrors(t *testing.T) {
	good := tinyBPE("")
	replace := func(old, new string) string {
		if !strings.Contains(good, old) {
			t.Fatalf("%q not in the tiny tokenizer", old)
		}
		return strings.Replace(good, old, new, 1)
	}
	tests := []struct {
		name, json string
		want       []string
	}{
		{"truncated", good[:len(good)/2], []string{"tiny/tokenizer.json: line ", "unexpected end of JSON input"}},
		{"empty", "", []string{"tiny/tokenizer.json: line 1, column 1", "unexpected end"}},
		{"garbage", "{\"version\": \"1.0\",\n  \"model\": ?}", []string{"line 2, column 12", "invalid character '?'"}},
		{"trailing", good + "x", []string{"after the top-level value"}},
		{"version", replace(`"version": "1.0"`, `"version": "2.0"`), []string{`unknown tokenizer version "2.0"`}},
		{"no model", `{"version":"1.0"}`, []string{"tiny/tokenizer.json: no model"}},
		{"model type", replace(`"type": "BPE"`, `"type": "Word2Vec"`), []string{`tiny/tokenizer.json: unsupported model "Word2Vec"`}},
		{"normalizer", replace(`"normalizer": null`, `"normalizer": {"type": "Precompiled", "precompiled_charsmap": null}`), []string{`tiny/tokenizer.json: unsupported normalizer "Precompiled"`}},
		{"nested normalizer", replace(`"normalizer": null`, `"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Magic"}]}`), []string{`tiny/tokenizer.json: unsupported normalizer "Magic"`}},
		{"pre_tokenizer", replace(`"pre_tokenizer": {"type": "ByteLevel"`, `"pre_tokenizer": {"type": "UnicodeScripts"`), []string{`unsupported pre_tokenizer "UnicodeScripts"`}},
		{"decoder", replace(`"decoder": {"type": "ByteLevel"`, `"decoder": {"type": "Magic"`), []string{`unsupported decoder "Magic"`}},
		{"post_processor", replace(`"post_processor": null`, `"post_processor": {"type": "Magic"}`), []string{`unsupported post_processor "Magic"`}},
		{"dropout", replace(`"dropout": null`, `"dropout": 0.1`), []string{`unsupported BPE dropout`}},
		{"merge", replace(`"h e"`, `"h zz"`), []string{`model.merges: token "zz" is not in the vocabulary`, "line "}},
		{"merge form", replace(`"h e"`, `"h e x"`), []string{`is not two tokens separated by a space`}},
		{"vocab id", replace(`"he":256`, `"he":"x"`), []string{`expected an integer`}},
		{"bad regex", replace(`"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}`,
			`"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(unclosed"}, "behavior": "Isolated", "invert": false}`), []string{"(byte ", "pre_tokenizer: Split: regex"}},
		{"behavior", replace(`"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}`,
			`"pre_tokenizer": {"type": "Split", "pattern": {"String": "x"}, "behavior": "Sideways", "invert": false}`), []string{`pre_tokenizer: unknown split behavior "Sideways"`}},
		{"added_tokens", replace(`"added_tokens": [`, `"added_tokens": [7, `), []string{"added_tokens"}},
	}
	for _, tt := range tests {
		_, err := ParseHF([]byte(tt.json), "tiny")
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: error has several lines: %q", tt.name, msg)
		}
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: error %q does not contain %q", tt.name, msg, w)
			}
		}
	}
	// A name that is a path to the file is used as it is.
	if _, err := ParseHF([]byte("{"), "/x/tok.json"); err == nil || !strings.HasPrefix(err.Error(), "/x/tok.json: ") {
		t.Errorf("err = %v", err)
	}
}

func TestHFConcurrent(t *testing.T) {
	tok, g := loadGolden(t, "llama3_1")
	corpus := corpusOnce()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < len(corpus.Cases); i += 4 {
				if got := tok.Encode(corpus.Cases[i].Text, false); !slices.Equal(got, g.Cases[i].IDs) {
					t.Errorf("case %s differs under concurrency", corpus.Cases[i].Name)
				}
				if got := tok.Count(corpus.Cases[i].Text); got != len(g.Cases[i].IDs) {
					t.Errorf("case %s: Count differs under concurrency", corpus.Cases[i].Name)
				}
			}
		})
	}
	wg.Wait()
}

// TestFastSplitMatchesRegexp2 checks the hand-written matchers against
// regexp2 on the corpus; FuzzFastSplit does on random text.
func TestFastSplitMatchesRegexp2(t *testing.T) {
	for _, c := range corpusOnce().Cases {
		checkFastSplit(t, c.Text)
	}
}

func FuzzFastSplit(f *testing.F) {
	for _, s := range []string{"Hello world", "it's  \r\n\n x", "'S 'LL 'll", "abc123456 ... !!\n", "中文 \t\u3000x", "  ", "a\u0301b", "\r\r\n  \n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		checkFastSplit(t, s)
	})
}

var fastSplitRefs = sync.OnceValue(func() map[string]regexMatcher {
	m := map[string]regexMatcher{}
	for _, p := range []string{llama3Pattern, qwen2Pattern, gpt2Pattern, o200kPattern, deepseekDigits, deepseekCJK, deepseekWords} {
		m[p] = regexMatcher{regexp2.MustCompile(p, regexp2.None, regexp2.OptionMaxBacktrackingStackSize(-1))}
	}
	return m
})

func checkFastSplit(t *testing.T, s string) {
	t.Helper()
	// Oniguruma folds ſ to s under (?i); regexp2 does not (the goldens show
	// the library does, see the contractions case).
	if strings.ContainsRune(s, 'ſ') {
		return
	}
	for pat, ref := range fastSplitRefs() {
		fast, _ := compileRegex(pat)
		var got, want [][2]int
		fast.matches(s, func(a, b int) { got = append(got, [2]int{a, b}) })
		ref.matches(s, func(a, b int) { want = append(want, [2]int{a, b}) })
		if !slices.Equal(got, want) {
			t.Fatalf("pattern %s on %q:\n got  %v\n want %v", pat, s, got, want)
		}
	}
}

// FuzzHFRoundTrip checks that Decode(Encode(s)) == s with Llama-3's
// byte-level BPE, which has no normalizer, on any valid UTF-8.
func FuzzHFRoundTrip(f *testing.F) {
	for _, s := range []string{"", "hello world", "<|begin_of_text|>x", "\x00\x7f", "👨‍👩‍👧", "a\r\n\r\nb", strings.Repeat("ab ", 100)} {
		f.Add(s)
	}
	tok, _ := loadGolden(f, "llama3_1")
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Encode(s, false)
		if tok.Count(s) != len(ids) {
			t.Fatalf("Count(%q) = %d, len(Encode) = %d", s, tok.Count(s), len(ids))
		}
		if !utf8.ValidString(s) {
			return
		}
		if got := tok.Decode(ids); got != s {
			t.Fatalf("Decode(Encode(%q)) = %q", s, got)
		}
	})
}

// FuzzParseHF checks that no input makes ParseHF panic, and that a
// tokenizer it accepts encodes and decodes without panicking.
func FuzzParseHF(f *testing.F) {
	f.Add(tinyBPE(""))
	f.Add(`{"model":{"type":"WordPiece","vocab":{"[UNK]":0,"a":1,"##b":2}},"pre_tokenizer":{"type":"BertPreTokenizer"},"normalizer":{"type":"BertNormalizer"},"decoder":{"type":"WordPiece"}}`)
	f.Add(`{"model":{"type":"Unigram","unk_id":0,"vocab":[["<unk>",0],["a",-1.5],["b",-2e0],["ab",-1]]},"pre_tokenizer":{"type":"Metaspace","replacement":"▁"},"decoder":{"type":"Metaspace","replacement":"▁"}}`)
	f.Add(`{"model":{"type":"WordLevel","vocab":{"a":0},"unk_token":"a"},"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Whitespace"},{"type":"Digits"},{"type":"Split","pattern":{"Regex":"\\s+"},"behavior":"MergedWithNext","invert":true}]}}`)
	f.Add(`{"model":{"vocab":{"a":0,"b":1,"ab":2},"merges":["a b"],"unk_token":"a","byte_fallback":true,"continuing_subword_prefix":"##"},"added_tokens":[{"id":3,"content":"x","lstrip":true,"rstrip":true,"single_word":true,"normalized":true,"special":false}],"normalizer":{"type":"Sequence","normalizers":[{"type":"Lowercase"},{"type":"Strip","strip_left":true,"strip_right":true},{"type":"Replace","pattern":{"String":"a"},"content":""}]}}`)
	f.Fuzz(func(t *testing.T, js string) {
		tok, err := ParseHF([]byte(js), "fuzz")
		if err != nil {
			return
		}
		for _, s := range []string{"", "ab a b", "  x\r\nAB xx ab", "中文 😀 1234"} {
			ids := tok.Encode(s, true)
			tok.Decode(ids)
			tok.Decode([]int{0, 1, 2, 3, -1, 1 << 20})
		}
	})
}

func TestSerdeFloat(t *testing.T) {
	// Short numbers are exact, as with strconv.
	for _, s := range []string{"0", "-0", "1", "-1.5", "0.1", "-3.25", "12345.678", "1e5", "-2.5E-3", "6.02e23", "-10.0625", "1e-300", "123456789012345"} {
		got, ok := serdeFloat(s)
		want, _ := strconv.ParseFloat(s, 64)
		if !ok || got != want {
			t.Errorf("serdeFloat(%q) = %v, %v; want %v", s, got, ok, want)
		}
	}
	// A long significand is rounded to a u64's float, then divided:
	// serde_json's result, not the correctly rounded one.
	got, _ := serdeFloat("-8.123456789012345678")
	if want := -(float64(uint64(8123456789012345678)) / 1e18); got != want {
		t.Errorf("long significand: got %v, want %v", got, want)
	}
	for _, s := range []string{"", "-", "1.", ".5", "1e", "1x", "--1"} {
		if _, ok := serdeFloat(s); ok {
			t.Errorf("serdeFloat(%q) accepted", s)
		}
	}
	if v, ok := serdeFloat("1e400"); ok && !math.IsInf(v, 0) {
		t.Errorf("1e400 = %v", v)
	}
}

// TestHFByteLevelGeneric runs Llama-3 through the general byte-level path
// (characters mapped by the pre-tokenizer, looked up by the model) that the
// raw-bytes shortcut replaces, and checks both give the goldens.
func TestHFByteLevelGeneric(t *testing.T) {
	tok, g := loadGolden(t, "llama3_1")
	if !tok.rawBytes {
		t.Fatal("Llama-3 does not take the raw-bytes path")
	}
	last, _ := lastByteLevel(tok.pre)
	last.raw = false
	bpe := tok.model.(*bpeModel)
	bpe.rawBytes = false
	bpe.cache = wordCache{}
	for i, c := range corpusOnce().Cases {
		if got := tok.Encode(c.Text, false); !slices.Equal(got, g.Cases[i].IDs) {
			t.Errorf("%s: got %v, want %v", c.Name, clipIDs(got), clipIDs(g.Cases[i].IDs))
		}
	}
}

// TestHFTruncated cuts the tiny tokenizer.json at every byte: each prefix
// is an error naming the file and a position.
func TestHFTruncated(t *testing.T) {
	js := strings.TrimSpace(tinyBPE(""))
	for n := 0; n < len(js); n++ {
		_, err := ParseHF([]byte(js[:n]), "tiny")
		if err == nil {
			t.Fatalf("prefix of %d bytes: no error", n)
		}
		if !strings.HasPrefix(err.Error(), "tiny/tokenizer.json: line ") {
			t.Fatalf("prefix of %d bytes: %v", n, err)
		}
	}
}
