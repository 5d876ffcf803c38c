package backend

import (
	"strings"
	"testing"

	"benchserve/record"
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
	// What the simulator's faults send (docs/sim.md): a truncated chunk, an
	// error object then [DONE], a reply with no tokens, a comment line.
	f.Add([]byte("data: {\"choices\":[{\"text\":\" a\"}]}\n\ndata: {\"object\":\"malformed\",\"choices\":[{\"index\":0,\"text\":\"\n\ndata: [DONE]\n\n"), uint8(5))
	f.Add([]byte("data: {\"text\":\" a\",\"meta_info\":{\"completion_tokens\":1}}\n\ndata: {\"error\":{\"message\":\"x\",\"type\":\"InternalServerError\",\"param\":null,\"code\":500}}\n\ndata: [DONE]\n\n"), uint8(7))
	f.Add([]byte("data: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"stop\"}]}\n\ndata: {\"choices\":[],\"usage\":{\"completion_tokens\":0}}\n\n: xxxx\ndata: [DONE]\n\n"), uint8(9))
	f.Add([]byte(`{"text":"","meta_info":{"completion_tokens":0}}`), uint8(11))
	// The event streams of the Responses and Messages APIs.
	f.Add([]byte("event: response.reasoning_text.delta\ndata: {\"type\":\"response.reasoning_text.delta\",\"delta\":\"r\"}\n\nevent: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"a\"}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"usage\":{\"input_tokens\":3,\"output_tokens\":2,\"output_tokens_details\":{\"reasoning_tokens\":1}}}}\n\n"), uint8(13))
	f.Add([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"t\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"), uint8(15))
	// The kinds a 200 reply can fail with.
	kinds := map[string]bool{record.KindStreamError: true, record.KindIncomplete: true, record.KindInvalid: true,
		record.KindEmpty: true, record.KindTooLarge: true}
	f.Fuzz(func(t *testing.T, body []byte, seed uint8) {
		for _, backend := range []string{"sglang", "vllm", "vllm-chat", "vllm-embedding", "trt", "truss", "openai-responses", "anthropic-messages"} {
			for _, stream := range []bool{true, false} {
				c := client(t, backend, Options{Stream: stream, CacheReport: true})
				rec := parse(c, body, int(seed), 16, 100)
				if !rec.Success {
					if rec.Error == "" || strings.ContainsAny(rec.Error, "\r\n") || !kinds[rec.ErrorKind] {
						t.Fatalf("%s: bad error %q of kind %q", backend, rec.Error, rec.ErrorKind)
					}
					continue
				}
				if rec.ErrorKind != "" {
					t.Fatalf("%s: success with error kind %q", backend, rec.ErrorKind)
				}
				if rec.ChunkLens != nil && len(rec.ChunkLens) != rec.Gaps.Len() {
					t.Fatalf("%s: %d chunk lengths, %d ITL", backend, len(rec.ChunkLens), rec.Gaps.Len())
				}
				if rec.Latency < rec.TTFT || rec.TTFT < 0 {
					t.Fatalf("%s: TTFT %v latency %v", backend, rec.TTFT, rec.Latency)
				}
				if rec.TTFO != 0 && (rec.TTFO < rec.TTFT || rec.TTFO > rec.Latency) {
					t.Fatalf("%s: TTFO %v outside [TTFT %v, latency %v]", backend, rec.TTFO, rec.TTFT, rec.Latency)
				}
				if rec.ChunkTokens != nil && len(rec.ChunkTokens) != rec.Gaps.Len() {
					t.Fatalf("%s: %d chunk token counts, %d ITL", backend, len(rec.ChunkTokens), rec.Gaps.Len())
				}
				if rec.ReasoningTokens+rec.ContentTokens > rec.OutputLen || rec.ReasoningTokens < 0 || rec.ContentTokens < 0 {
					t.Fatalf("%s: reasoning %d + content %d > output %d", backend, rec.ReasoningTokens, rec.ContentTokens, rec.OutputLen)
				}
			}
		}
	})
}
