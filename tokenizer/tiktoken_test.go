package tokenizer

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	tk "github.com/tiktoken-go/tokenizer"
)

func mustLoad(t testing.TB, name string) Tokenizer {
	t.Helper()
	tok, err := Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestLoadUnsupported(t *testing.T) {
	for _, name := range []string{"meta-llama/Llama-3.1-8B-Instruct", "", "O200K_BASE", "p50k_base", "gpt2"} {
		_, err := Load(name)
		want := `tokenizer "` + name + `": not a built-in encoding (o200k_base, cl100k_base, or an OpenAI model name); use Resolve for Hugging Face tokenizers`
		if err == nil || err.Error() != want {
			t.Errorf("Load(%q) error = %v, want %q", name, err, want)
		}
	}
}

func TestLoadAliases(t *testing.T) {
	tests := []struct{ name, enc string }{
		{"o200k_base", "o200k_base"},
		{"gpt-4o", "o200k_base"},
		{"gpt-4o-mini-2024-07-18", "o200k_base"},
		{"gpt-4.1", "o200k_base"},
		{"o3-mini", "o200k_base"},
		{"ft:gpt-4o-2024:org::id", "o200k_base"},
		{"cl100k_base", "cl100k_base"},
		{"gpt-4", "cl100k_base"},
		{"gpt-4-0613", "cl100k_base"},
		{"gpt-3.5-turbo", "cl100k_base"},
		{"ft:gpt-4-0613:org::id", "cl100k_base"},
	}
	for _, tt := range tests {
		tok := mustLoad(t, tt.name)
		if tok.Name() != tt.name {
			t.Errorf("Load(%q).Name() = %q", tt.name, tok.Name())
		}
		if got := tok.(*tiktoken).enc.id; string(got) != tt.enc {
			t.Errorf("Load(%q) uses %s, want %s", tt.name, got, tt.enc)
		}
	}
}

// The expected ids are tiktoken's (Python) for the same text.
func TestEncodeKnownIDs(t *testing.T) {
	tests := []struct {
		enc, text string
		ids       []int
	}{
		{"o200k_base", "hello world", []int{24912, 2375}},
		{"cl100k_base", "hello world", []int{15339, 1917}},
		{"o200k_base", "tiktoken is great!", []int{83, 8251, 2488, 382, 2212, 0}},
		{"cl100k_base", "tiktoken is great!", []int{83, 1609, 5963, 374, 2294, 0}},
		{"o200k_base", "", []int{}},
		{"o200k_base", "a\x7fb", []int{64, 221, 65}},
		{"cl100k_base", "a\x7fb", []int{64, 221, 65}},
		{"o200k_base", "\x7f\x7f del\x7f!", []int{221, 221, 1083, 221, 0}},
		{"cl100k_base", "\x7f\x7f del\x7f!", []int{221, 221, 1624, 221, 0}},
		{"o200k_base", "<|endoftext|>", []int{27, 91, 419, 1440, 919, 91, 29}},
		{"cl100k_base", "<|endoftext|>", []int{27, 91, 8862, 728, 428, 91, 29}},
	}
	for _, tt := range tests {
		tok := mustLoad(t, tt.enc)
		for _, add := range []bool{false, true} {
			if got := tok.Encode(tt.text, add); !slices.Equal(got, tt.ids) {
				t.Errorf("%s Encode(%q, %v) = %v, want %v", tt.enc, tt.text, add, got, tt.ids)
			}
		}
		if got := tok.Count(tt.text); got != len(tt.ids) {
			t.Errorf("%s Count(%q) = %d, want %d", tt.enc, tt.text, got, len(tt.ids))
		}
	}
}

// TestTiktokenGolden compares with OpenAI's tiktoken itself: ids written
// by tools/tokgolden/tiktoken.js (tiktoken's Rust code through its WASM
// build) for a generated corpus. tiktoken-go, whose vocabulary we use, is not
// the oracle: its generated regex matcher drops U+007F and splits some runs
// of whitespace differently from the regex.
func TestTiktokenGolden(t *testing.T) {
	f, err := os.Open("testdata/golden/tiktoken.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Texts []string           `json:"texts"`
		IDs   map[string][][]int `json:"ids"`
	}
	if err := json.NewDecoder(zr).Decode(&g); err != nil {
		t.Fatal(err)
	}
	for name, want := range g.IDs {
		tok := mustLoad(t, name)
		bad := 0
		for i, text := range g.Texts {
			if got := tok.Encode(text, false); !slices.Equal(got, want[i]) && bad < 5 {
				bad++
				t.Errorf("%s %q: %v, tiktoken %v", name, text, got, want[i])
			}
			if n := tok.Count(text); n != len(want[i]) {
				t.Errorf("%s Count(%q) = %d, tiktoken %d", name, text, n, len(want[i]))
			}
		}
	}
}

func TestConstants(t *testing.T) {
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		tok := mustLoad(t, name)
		if tok.NumSpecialTokensToAdd() != 0 || tok.BOSToken() != "" {
			t.Errorf("%s: NumSpecialTokensToAdd %d, BOSToken %q", name, tok.NumSpecialTokensToAdd(), tok.BOSToken())
		}
	}
}

// TestVocabSizeDense checks that every id below VocabSize decodes to some
// text and that VocabSize itself is not an ordinary token.
func TestVocabSizeDense(t *testing.T) {
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		tok := mustLoad(t, name)
		n := tok.VocabSize()
		if n < 100000 {
			t.Fatalf("%s: VocabSize %d", name, n)
		}
		dec, _ := tk.Get(tk.Encoding(name))
		for id := range n {
			if s, err := dec.Decode([]uint{uint(id)}); err != nil || s == "" {
				t.Fatalf("%s: id %d decodes to %q, %v", name, id, s, err)
			}
			if tok.Decode([]int{id}) == "" {
				t.Fatalf("%s: Decode([%d]) is empty", name, id)
			}
		}
		if _, err := dec.Decode([]uint{uint(n)}); err == nil {
			t.Errorf("%s: id %d (VocabSize) is an ordinary token: the dense range is larger", name, n)
		}
	}
}

func TestSpecialTokens(t *testing.T) {
	tests := []struct {
		enc  string
		id   int
		text string
	}{
		{"o200k_base", 199999, "<|endoftext|>"},
		{"o200k_base", 200018, "<|endofprompt|>"},
		{"cl100k_base", 100257, "<|endoftext|>"},
		{"cl100k_base", 100260, "<|fim_suffix|>"},
	}
	for _, tt := range tests {
		tok := mustLoad(t, tt.enc)
		if got := tok.Decode([]int{tt.id}); got != tt.text {
			t.Errorf("%s Decode([%d]) = %q, want %q", tt.enc, tt.id, got, tt.text)
		}
		// Special text in the input is ordinary text.
		ids := tok.Encode(tt.text, true)
		if len(ids) < 2 || slices.Contains(ids, tt.id) {
			t.Errorf("%s Encode(%q) = %v, want it split as ordinary text", tt.enc, tt.text, ids)
		}
		if got := tok.Decode(ids); got != tt.text {
			t.Errorf("%s round trip of %q gave %q", tt.enc, tt.text, got)
		}
	}
}

func TestDecodeSkipsUnknownIDs(t *testing.T) {
	tok := mustLoad(t, "o200k_base")
	hello := tok.Encode("hello", false)
	world := tok.Encode(" world", false)
	ids := slices.Concat([]int{-1}, hello, []int{199998, 200000, 200019, 1 << 40}, world)
	if got := tok.Decode(ids); got != "hello world" {
		t.Errorf("Decode(%v) = %q, want %q", ids, got, "hello world")
	}
	if got := tok.Decode(nil); got != "" {
		t.Errorf("Decode(nil) = %q", got)
	}
}

func TestDecodeInvalidUTF8(t *testing.T) {
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		tok := mustLoad(t, name)
		text := "crab 🦀 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 and ꙮ"
		ids := tok.Encode(text, false)
		if got := tok.Decode(ids); got != text {
			t.Fatalf("%s: round trip %q gave %q", name, text, got)
		}
		split := false
		for i := range ids {
			got := tok.Decode(ids[:i])
			if !utf8.ValidString(got) {
				t.Fatalf("%s: Decode(ids[:%d]) = %q is not valid UTF-8", name, i, got)
			}
			if strings.ContainsRune(got, utf8.RuneError) {
				split = true
			}
		}
		if !split {
			t.Errorf("%s: no prefix of %v ended inside a character; the test text is too easy", name, ids)
		}
	}
}

func TestEncodeInvalidUTF8(t *testing.T) {
	tok := mustLoad(t, "cl100k_base")
	got := tok.Encode("a\xffb\xe2\x82c", false)
	want := tok.Encode("a\uFFFDb\uFFFDc", false)
	if !slices.Equal(got, want) {
		t.Errorf("Encode of invalid UTF-8 = %v, want %v (as U+FFFD)", got, want)
	}
	if n := tok.Count("a\xffb\xe2\x82c"); n != len(want) {
		t.Errorf("Count = %d, want %d", n, len(want))
	}
}

// Expected strings are Python's bytes.decode("utf-8", "replace").
func TestReplaceInvalid(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"\xe2\x82", "\uFFFD"},
		{"\xff\xfe", "\uFFFD\uFFFD"},
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"},
		{"\xf0\x9f\x98a", "\uFFFDa"},
		{"\xc0\xaf", "\uFFFD\uFFFD"},
		{"\xe0\x80\x80", "\uFFFD\uFFFD\uFFFD"},
		{"\xf4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"},
		{"a\xe2\x82\xac\xe2\x82", "a€\uFFFD"},
		{"\xf0\x9f\x98\xf0\x9f\x98\x80", "\uFFFD😀"},
	}
	for _, tt := range tests {
		if got := replaceInvalid(tt.in); got != tt.want {
			t.Errorf("replaceInvalid(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	texts := []string{"hello world", mixedText(3000), "日本語のテキスト 🦀", "<|endoftext|> x"}
	var want [][]int
	serial := mustLoad(t, "o200k_base")
	for _, s := range texts {
		want = append(want, serial.Encode(s, false))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 16 {
		wg.Go(func() {
			name := "o200k_base"
			if g%2 == 1 {
				name = "gpt-4o"
			}
			tok := mustLoad(t, name)
			for i := range 20 {
				k := (g + i) % len(texts)
				ids := tok.Encode(texts[k], false)
				if !slices.Equal(ids, want[k]) {
					errs <- "Encode differs under concurrency"
					return
				}
				if tok.Count(texts[k]) != len(ids) {
					errs <- "Count differs under concurrency"
					return
				}
				if tok.Decode(ids) != texts[k] {
					errs <- "Decode differs under concurrency"
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"", "hello world", "a\xffb", "\x7f", "x\x02\x7f", "\xe2\x82", "<|endoftext|>", "  \n\n\t x", "𝔘🦀"} {
		f.Add(s)
	}
	tok := mustLoad(f, "o200k_base")
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Encode(s, false)
		if n := tok.Count(s); n != len(ids) {
			t.Fatalf("Count(%q) = %d, len(Encode) = %d", s, n, len(ids))
		}
		if got, want := tok.Decode(ids), replaceInvalid(s); got != want {
			t.Fatalf("Decode(Encode(%q)) = %q, want %q", s, got, want)
		}
	})
}

// mixedText returns about n bytes of English, code, numbers, CJK and emoji,
// the same on every call.
func mixedText(n int) string {
	parts := []string{
		"The quick brown fox jumps over the lazy dog. ",
		"func main() {\n\tfmt.Println(\"hello, world\")\n}\n",
		"Revenue grew 12.5% to $3,141,592 in Q3 2024; margins held at 0.618. ",
		"机器学习模型的推理速度很重要。",
		"Les élèves étudient l'histoire de l'Europe. ",
		"🚀🔥 emoji run 🦀🐍 ",
		"    indented    spaces\n\n\n",
		"<div class=\"row\"><span>42</span></div>\n",
	}
	var sb strings.Builder
	for i := 0; sb.Len() < n; i++ {
		sb.WriteString(parts[(i*7+i/len(parts))%len(parts)])
	}
	return sb.String()
}

func BenchmarkEncode(b *testing.B) {
	text := mixedText(300 << 10)
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		b.Run(name, func(b *testing.B) {
			tok := mustLoad(b, name)
			tokens := tok.Count(text)
			b.SetBytes(int64(len(text)))
			b.ResetTimer()
			for b.Loop() {
				tok.Encode(text, false)
			}
			b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

func BenchmarkCount(b *testing.B) {
	text := mixedText(300 << 10)
	tok := mustLoad(b, "o200k_base")
	tokens := tok.Count(text)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tok.Count(text)
	}
	b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

func BenchmarkDecode(b *testing.B) {
	tok := mustLoad(b, "o200k_base")
	ids := tok.Encode(mixedText(300<<10), false)
	for b.Loop() {
		tok.Decode(ids)
	}
	b.ReportMetric(float64(len(ids))*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// TestTiktokenInit checks the table read back from the library, and logs
// what building it costs beyond the library's own (which Get pays first).
func TestTiktokenInit(t *testing.T) {
	for _, base := range []*encoding{o200kBase, cl100kBase} {
		c, _ := tk.Get(base.id)
		enc := &encoding{id: base.id, vocab: base.vocab, pattern: base.pattern, special: base.special}
		start := time.Now()
		enc.init()
		t.Logf("%s: %d ranks read in %v", base.id, len(enc.ranks.off)-1, time.Since(start).Round(time.Millisecond))
		if len(enc.ranks.off)-1 != enc.vocab {
			t.Errorf("%s: %d pieces, want %d", base.id, len(enc.ranks.off)-1, enc.vocab)
		}
		// Every id maps to its bytes and back.
		for i := range enc.vocab {
			if r, ok := enc.ranks.rank(enc.ranks.piece(i)); !ok || int(r) != i {
				t.Fatalf("%s: id %d → %q → %d, %v", base.id, i, enc.ranks.piece(i), r, ok)
			}
		}
		if _, ok := enc.ranks.rank("\x00no such token\xff"); ok {
			t.Errorf("%s: a string that is no token has a rank", base.id)
		}
		text := mixedText(4 << 10)
		want, _, err := c.Encode(text)
		if err != nil {
			t.Fatal(err)
		}
		tok := &tiktoken{enc: enc}
		var got []uint
		for _, id := range tok.Encode(text, false) {
			got = append(got, uint(id))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: Encode differs from the library's", base.id)
		}
	}
	o200kBase.once.Do(o200kBase.init)
	if r, _ := o200kBase.ranks.rank("hello"); r != 24912 {
		t.Errorf("o200k_base: hello = %d, want 24912", r)
	}
}
