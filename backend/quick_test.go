package backend

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"benchserve/record"
)

// words counts space-separated words, standing in for a tokenizer.
type words struct{}

func (words) Count(s string) int { return len(strings.Fields(s)) }

// TestTextCount: with a Counter the records carry the text's token count;
// DropText then leaves the text out, except where the metrics may
// retokenize it (sglang-oai, sglang-oai-chat).
func TestTextCount(t *testing.T) {
	body := []byte("data: {\"choices\":[{\"text\":\" a b\"}]}\n\ndata: {\"choices\":[{\"text\":\" c\"}]}\n\ndata: [DONE]\n\n")
	for _, c := range []struct {
		backend   string
		opt       Options
		text      string
		counted   bool
		chunkLens int
	}{
		{"vllm", Options{Stream: true}, " a b c", false, 0},
		{"vllm", Options{Stream: true, Counter: words{}}, " a b c", true, 0},
		{"vllm", Options{Stream: true, Counter: words{}, DropText: true}, "", true, 0},
		{"vllm", Options{Stream: true, DropText: true}, " a b c", false, 0}, // nothing counted: nothing dropped
		{"sglang-oai", Options{Stream: true, Counter: words{}, DropText: true}, " a b c", true, 1},
	} {
		rec := parse(client(t, c.backend, c.opt), body, 1, 16, 100)
		if !rec.Success || rec.Text != c.text || rec.TextCounted != c.counted || len(rec.ChunkLens) != c.chunkLens || rec.Gaps.Len() != 1 {
			t.Errorf("%s %+v: %+v", c.backend, c.opt, rec)
		}
		if c.counted && rec.TextTokens != 3 {
			t.Errorf("%s: %d tokens counted, want 3", c.backend, rec.TextTokens)
		}
	}
}

// readFull parses body with or without the quick path.
func readFull(c *Client, body []byte, quick bool) *record.Record {
	rec := &record.Record{PromptLen: 100, OutputLen: 16}
	cn := c.bareScratch(rec, 16)
	cn.noQuick = !quick
	cn.x.Body(context.Background(), bytes.NewReader(body), time.Now(), &cn.send)
	return rec
}

// sameRecord compares two records of one reply, times aside.
func sameRecord(t *testing.T, name string, a, b *record.Record) {
	t.Helper()
	if a.Success != b.Success || a.Text != b.Text || a.Error != b.Error || a.ErrorKind != b.ErrorKind ||
		a.OutputLen != b.OutputLen || a.PromptLen != b.PromptLen || a.Gaps.Len() != b.Gaps.Len() ||
		len(a.ChunkLens) != len(b.ChunkLens) || a.CachedTokens != b.CachedTokens || (a.TTFT > 0) != (b.TTFT > 0) ||
		(a.CacheDetails == nil) != (b.CacheDetails == nil) {
		t.Fatalf("%s: quick path %+v\nfull parse %+v", name, a, b)
	}
	for i := range a.ChunkLens {
		if a.ChunkLens[i] != b.ChunkLens[i] {
			t.Fatalf("%s: chunk lengths %v, want %v", name, a.ChunkLens, b.ChunkLens)
		}
	}
	if a.CacheDetails != nil && !bytes.Equal(a.CacheDetails.Raw, b.CacheDetails.Raw) {
		t.Fatalf("%s: cache %+v, want %+v", name, a.CacheDetails, b.CacheDetails)
	}
}

// mutate changes a stream at random where the quick path must notice:
// bytes inside and around the text, usage, errors.
func mutate(body []byte, rng *rand.Rand) []byte {
	b := bytes.Clone(body)
	for range 1 + rng.IntN(3) {
		i := rng.IntN(len(b))
		switch rng.IntN(4) {
		case 0:
			const set = `"\{}[],:0a \u`
			b[i] = set[rng.IntN(len(set))]
		case 1:
			b = append(b[:i], b[i+1:]...)
		case 2:
			ins := []string{`\"`, `\\`, `\u00e9`, `"x":1,`, `"usage":{"completion_tokens":7},`, `"error":"boom",`, "\n", `\ud800`}
			b = append(b[:i], append([]byte(ins[rng.IntN(len(ins))]), b[i:]...)...)
		default:
			b[i] ^= 0x20
		}
	}
	return b
}

// TestQuickPath: the quick path and the full parse agree on every stream,
// including streams changed where a chunk stops matching the last one.
func TestQuickPath(t *testing.T) {
	bodies := [][]byte{benchStream("vllm"), benchStream("sglang-oai-chat"),
		fixture(t, "wire/llm-d-inference-sim/chat-stream-usage/response.body"),
		fixture(t, "wire/ollama/completions-stream-usage/response.body")}
	rng := rand.New(rand.NewPCG(7, 7))
	for _, backend := range []string{"vllm", "vllm-chat", "sglang-oai", "sglang-oai-chat", "truss"} {
		c := client(t, backend, Options{Stream: true, CacheReport: true})
		for k, body := range bodies {
			for n := range 300 {
				b := body
				if n > 0 {
					b = mutate(body, rng)
				}
				sameRecord(t, backend+"/"+string(rune('0'+k)), readFull(c, b, true), readFull(c, b, false))
			}
		}
	}
}

// FuzzQuickPath checks the same on any body.
func FuzzQuickPath(f *testing.F) {
	f.Add(benchStream("vllm")[:2000])
	f.Add(benchStream("sglang-oai-chat")[:2000])
	f.Add([]byte("data: {\"choices\":[{\"text\":\"a\"}]}\ndata: {\"choices\":[{\"text\":\"b\\\"\"}]}\ndata: {\"choices\":[{\"text\":\"c\"}],\"error\":1}\ndata: [DONE]\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, backend := range []string{"vllm", "vllm-chat", "sglang-oai"} {
			c := client(t, backend, Options{Stream: true, CacheReport: true})
			sameRecord(t, backend, readFull(c, body, true), readFull(c, body, false))
		}
	})
}
