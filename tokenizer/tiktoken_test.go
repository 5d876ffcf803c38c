package tokenizer

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"benchserve/internal/testenv"
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
		if got := tok.(*tiktoken).enc.name; got != tt.enc {
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
// build) for a generated corpus, which ends with mixedText(4096).
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
	if !slices.Contains(g.Texts, mixedText(4096)) {
		t.Error("the corpus lacks mixedText(4096): tiktoken.js's copy of mixedText differs from this one")
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
// text and that VocabSize itself names no token.
func TestVocabSizeDense(t *testing.T) {
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		tok := mustLoad(t, name)
		n := tok.VocabSize()
		if n < 100000 {
			t.Fatalf("%s: VocabSize %d", name, n)
		}
		enc := tok.(*tiktoken).enc
		for id := range n {
			if enc.ranks.piece(id) == "" || tok.Decode([]int{id}) == "" {
				t.Fatalf("%s: id %d decodes to nothing", name, id)
			}
		}
		if got := tok.Decode([]int{n}); got != "" {
			t.Errorf("%s: id %d (VocabSize) decodes to %q", name, n, got)
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

// TestRanksTable checks the tables built from the embedded ranks: every
// id maps to its bytes and back, and building them is timed.
func TestRanksTable(t *testing.T) {
	for _, base := range []*encoding{o200kBase, cl100kBase} {
		start := time.Now()
		table, err := newRankTable(base.data, base.vocab)
		if err != nil {
			t.Fatal(err)
		}
		table.once.Do(table.build)
		t.Logf("%s: %d ranks indexed in %v", base.name, table.n, time.Since(start).Round(time.Millisecond))
		used, end := 0, 0
		for _, e := range table.index {
			if e != 0 {
				used++
			}
		}
		if used != base.vocab {
			t.Errorf("%s: %d entries, want %d", base.name, used, base.vocab)
		}
		for i := range base.vocab {
			p := table.piece(i)
			if table.all[end:end+len(p)] != p {
				t.Fatalf("%s: id %d: %q from the marks, %q from the lengths", base.name, i, p, table.all[end:end+len(p)])
			}
			end += len(p)
		}
		for i := range base.vocab {
			if r, ok := table.rank(table.piece(i)); !ok || int(r) != i {
				t.Fatalf("%s: id %d → %q → %d, %v", base.name, i, table.piece(i), r, ok)
			}
		}
		if _, ok := table.rank("\x00no such token\xff"); ok {
			t.Errorf("%s: a string that is no token has a rank", base.name)
		}
	}
	o200kBase.once.Do(o200kBase.init)
	if r, _ := o200kBase.ranks.rank("hello"); r != 24912 {
		t.Errorf("o200k_base: hello = %d, want 24912", r)
	}
}

func TestRanksTableCorrupt(t *testing.T) {
	for _, tt := range []struct {
		data, err string
		n         int
	}{
		{"\x01", "built-in ranks: 1 bytes, too short for 2 lengths", 2},
		{"\x01\x02abcd", "built-in ranks: lengths add up to 3 bytes, the pieces are 4", 2},
		{"\x01\x02ab", "built-in ranks: lengths add up to 3 bytes, the pieces are 2", 2},
	} {
		if _, err := newRankTable(tt.data, tt.n); err == nil || err.Error() != tt.err {
			t.Errorf("newRankTable(%q, %d) error = %v, want %q", tt.data, tt.n, err, tt.err)
		}
	}
	if table, err := newRankTable("\x01\x02abc", 2); err != nil || table.piece(1) != "bc" {
		t.Errorf("newRankTable of a b c: %v", err)
	}
}

// TestRanksAreOpenAIs checks the embedded files: each is the one
// tools/tiktokengen wrote (its SHA-256, as ranks/README.md gives it), and
// its tokens, written out as a .tiktoken file, are OpenAI's (the SHA-256
// tiktoken's openai_public.py expects of the file it downloads).
func TestRanksAreOpenAIs(t *testing.T) {
	for _, tt := range []struct {
		enc                *encoding
		file, tiktokenFile string
	}{
		{o200kBase, "440741350e7cfa1c0f4869ce742d1b043550adbda5187adcac9e787edac6fba9", "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"},
		{cl100kBase, "18288f996f452d44e0e65996176591a4b712a3eb1b42afd6f0511e735c099480", "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"},
	} {
		if got := sha256.Sum256([]byte(tt.enc.data)); hex.EncodeToString(got[:]) != tt.file {
			t.Errorf("ranks/%s.ranks: SHA-256 %x, want %s", tt.enc.name, got, tt.file)
		}
		table, err := newRankTable(tt.enc.data, tt.enc.vocab)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		for id := range tt.enc.vocab {
			h.Write([]byte(base64.StdEncoding.EncodeToString([]byte(table.piece(id))) + " " + strconv.Itoa(id) + "\n"))
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != tt.tiktokenFile {
			t.Errorf("%s: as a .tiktoken file, SHA-256 %s, want OpenAI's %s", tt.enc.name, got, tt.tiktokenFile)
		}
	}
}

// TestRanksMatchPackage compares with the npm package tiktoken the files
// are made from: the same tokens, and the special ids and split pattern
// written here by hand.
func TestRanksMatchPackage(t *testing.T) {
	for _, e := range []*encoding{o200kBase, cl100kBase} {
		b, err := os.ReadFile(testenv.TokGolden.File(t, "tiktoken/encoders/"+e.name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var pkg struct {
			PatStr        string         `json:"pat_str"`
			SpecialTokens map[string]int `json:"special_tokens"`
			BPERanks      string         `json:"bpe_ranks"`
		}
		if err := json.Unmarshal(b, &pkg); err != nil {
			t.Fatal(err)
		}
		if pkg.PatStr != e.pattern {
			t.Errorf("%s: pattern %q, the package's %q", e.name, e.pattern, pkg.PatStr)
		}
		special := map[int]string{}
		for text, id := range pkg.SpecialTokens {
			special[id] = text
		}
		if !maps.Equal(special, e.special) {
			t.Errorf("%s: special ids %v, the package's %v", e.name, e.special, special)
		}
		table, err := newRankTable(e.data, e.vocab)
		if err != nil {
			t.Fatal(err)
		}
		toks := strings.Split(pkg.BPERanks, " ")[2:]
		if len(toks) != e.vocab {
			t.Fatalf("%s: the package has %d tokens, want %d", e.name, len(toks), e.vocab)
		}
		for id, tok := range toks {
			if want, _ := base64.StdEncoding.DecodeString(tok); table.piece(id) != string(want) {
				t.Fatalf("%s: id %d is %q, the package's %q", e.name, id, table.piece(id), want)
			}
		}
	}
}

// BenchmarkRanksTable is the work of an encoding's first Load (load) and
// of its first encode (index).
func BenchmarkRanksTable(b *testing.B) {
	for _, e := range []*encoding{o200kBase, cl100kBase} {
		b.Run(e.name+"/load", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := newRankTable(e.data, e.vocab); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(e.name+"/index", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				t, err := newRankTable(e.data, e.vocab)
				if err != nil {
					b.Fatal(err)
				}
				t.build()
			}
		})
	}
}
