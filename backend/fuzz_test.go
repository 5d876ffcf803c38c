package backend

import (
	"strings"
	"testing"
)

// FuzzRead feeds arbitrary response bodies to every parser, streamed and
// whole: they must never panic, and must fail with one line or succeed with
// a consistent record.
func FuzzRead(f *testing.F) {
	for _, path := range []string{
		"generate/stream", "generate/nostream", "generate/error-midstream", "trt/stream", "truss/stream",
		"wire/llm-d-inference-sim/chat-stream-usage/response.body",
		"wire/llm-d-inference-sim/error-midstream-multiprompt-stream/response.body",
		"wire/ollama/completions-stream-usage/response.body",
		"wire/llm-d-inference-sim/chat-nostream/response.body",
	} {
		f.Add(fixture(f, path), uint8(0))
	}
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"reasoning\":\"\\ud800\",\"content\":null}}]}\ndata: [DONE]"), uint8(3))
	f.Fuzz(func(t *testing.T, body []byte, seed uint8) {
		for _, backend := range []string{"sglang", "vllm", "vllm-chat", "vllm-embedding", "trt", "truss"} {
			for _, stream := range []bool{true, false} {
				c := client(t, backend, Options{Stream: stream, CacheReport: true})
				rec := parse(c, body, int(seed), 16, 100)
				if !rec.Success {
					if rec.Error == "" || strings.ContainsAny(rec.Error, "\r\n") {
						t.Fatalf("%s: bad error %q", backend, rec.Error)
					}
					continue
				}
				if rec.ChunkLens != nil && len(rec.ChunkLens) != len(rec.ITL) {
					t.Fatalf("%s: %d chunk lengths, %d ITL", backend, len(rec.ChunkLens), len(rec.ITL))
				}
				if rec.Latency < rec.TTFT || rec.TTFT < 0 {
					t.Fatalf("%s: TTFT %v latency %v", backend, rec.TTFT, rec.Latency)
				}
			}
		}
	})
}
