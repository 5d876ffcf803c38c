package tokenizer

import "testing"

// BenchmarkHFEncode encodes the 1 MB corpus text in one goroutine and
// reports tokens/s beside the Rust library's single-threaded rate measured
// when the goldens were written (rust-tok/s) and the ratio; for a rate
// measured now, run `node tools/tokgolden/rate.js llama3_1`.
func BenchmarkHFEncode(b *testing.B) {
	for _, family := range []string{"llama3_1", "qwen3", "gemma3", "deepseek_v3", "gptoss", "llama2", "bert", "unigram"} {
		b.Run(family, func(b *testing.B) {
			tok, g := loadGolden(b, family)
			text := corpusOnce().Big
			b.SetBytes(int64(len(text)))
			n := 0
			b.ResetTimer()
			for b.Loop() {
				n = tok.Count(text)
			}
			rate := float64(n) * float64(b.N) / b.Elapsed().Seconds()
			b.ReportMetric(rate, "tok/s")
			b.ReportMetric(g.RustTokensPerSecond, "rust-tok/s")
			b.ReportMetric(rate/g.RustTokensPerSecond, "x-rust")
		})
	}
}

// BenchmarkHFLoad parses tokenizer.json files: Llama-3's is 9 MB, Qwen3's
// 11 MB, Gemma-3's 33 MB.
func BenchmarkHFLoad(b *testing.B) {
	for _, family := range []string{"llama3_1", "qwen3", "gemma3", "bert"} {
		b.Run(family, func(b *testing.B) {
			_, data := familyFile(b, family)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := ParseHF(data, family); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHFCountPrompt counts the corpus cases one by one, as the
// benchmark counts prompts and outputs.
func BenchmarkHFCountPrompt(b *testing.B) {
	tok, _ := loadGolden(b, "llama3_1")
	cases := corpusOnce().Cases
	size := 0
	for _, c := range cases {
		size += len(c.Text)
	}
	b.SetBytes(int64(size))
	for b.Loop() {
		for _, c := range cases {
			tok.Count(c.Text)
		}
	}
}
