package backend

import (
	"strings"
	"testing"

	"benchserve/record"
)

// Replies in the shapes llama.cpp's llama-server sends (tools/server,
// server-task.cpp and server-context.cpp): ids, times and text are
// illustrative, the members and their order are the server's.

// llama.cpp's completions stream puts usage in the last chunk that has a
// choice (empty text, finish_reason) and sends no usage-only chunk: the
// server's 24 tokens count, not the 100 requested.
func TestLlamaCppCompletionsUsageInLastChoice(t *testing.T) {
	body := `data: {"choices":[{"text":"Once","index":0,"logprobs":null,"finish_reason":null}],"created":1764950000,"model":"tiny","system_fingerprint":"b9187-0a1b2c3d","object":"text_completion","id":"cmpl-abc"}

data: {"choices":[{"text":" upon","index":0,"logprobs":null,"finish_reason":null}],"created":1764950000,"model":"tiny","system_fingerprint":"b9187-0a1b2c3d","object":"text_completion","id":"cmpl-abc"}

data: {"choices":[{"text":"","index":0,"logprobs":null,"finish_reason":"stop"}],"created":1764950000,"model":"tiny","system_fingerprint":"b9187-0a1b2c3d","object":"text_completion","usage":{"completion_tokens":24,"prompt_tokens":10,"total_tokens":34},"id":"cmpl-abc","timings":{"cache_n":0,"prompt_n":10,"prompt_ms":3.1,"predicted_n":24,"predicted_ms":40.2}}

data: [DONE]

`
	for _, backend := range []string{"vllm", "sglang-oai", "lmdeploy"} {
		for seed := range 20 {
			rec := parse(client(t, backend, Options{Stream: true}), []byte(body), seed, 100, 500)
			check(t, backend, rec, want{true, "Once upon", 24, 10, 1, ""})
			if rec.OutputSource != record.OutputServer {
				t.Errorf("%s: output source %v", backend, rec.OutputSource)
			}
		}
	}
}

// A reply whose one token was the stop string: no text, completion_tokens
// 1. Streamed or not, it succeeded with 1 token, its TTFT its latency.
func TestFirstTokenStop(t *testing.T) {
	cases := []struct {
		name, backend, body string
		stream              bool
	}{
		{"chat stream", "vllm-chat", `data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"object":"chat.completion.chunk"}

data: {"choices":[],"object":"chat.completion.chunk","usage":{"completion_tokens":1,"prompt_tokens":7,"total_tokens":8}}

data: [DONE]

`, true},
		{"completions stream", "vllm", `data: {"choices":[{"text":"","index":0,"logprobs":null,"finish_reason":"stop"}],"object":"text_completion","usage":{"completion_tokens":1,"prompt_tokens":7,"total_tokens":8}}

data: [DONE]

`, true},
		{"chat whole", "vllm-chat", `{"choices":[{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":""}}],"object":"chat.completion","usage":{"completion_tokens":1,"prompt_tokens":7,"total_tokens":8}}`, false},
		{"completions whole", "vllm", `{"choices":[{"text":"","index":0,"finish_reason":"stop"}],"object":"text_completion","usage":{"completion_tokens":1,"prompt_tokens":7,"total_tokens":8}}`, false},
	}
	for _, c := range cases {
		for seed := range 10 {
			rec := parse(client(t, c.backend, Options{Stream: c.stream}), []byte(c.body), seed, 64, 100)
			check(t, c.name, rec, want{true, "", 1, 7, 0, ""})
			if rec.TTFT <= 0 || rec.TTFT != rec.Latency {
				t.Errorf("%s: TTFT %v, latency %v", c.name, rec.TTFT, rec.Latency)
			}
		}
	}
}

// Anthropic's input_tokens leaves out the cached and cache-written
// tokens: the prompt length is the sum.
func TestMessagesPromptWithCache(t *testing.T) {
	stream := `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","usage":{"input_tokens":12,"cache_creation_input_tokens":200,"cache_read_input_tokens":3000,"output_tokens":1}}}
event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}
event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}
event: message_stop
data: {"type":"message_stop"}
`
	rec := parse(client(t, "anthropic-messages", Options{Stream: true}), []byte(stream), 3, 8, 1)
	check(t, "messages cache stream", rec, want{true, "Hi", 2, 3212, 0, ""})
	whole := `{"type":"message","content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn","usage":{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":3000,"output_tokens":2}}`
	rec = parse(client(t, "anthropic-messages", Options{}), []byte(whole), 3, 8, 1)
	check(t, "messages cache whole", rec, want{true, "Hi", 2, 3012, 0, ""})
	// llama.cpp's shape: input_tokens is the prompt less its cached part.
	llama := `{"id":"chatcmpl-x","type":"message","role":"assistant","content":[{"type":"text","text":"Hi"}],"model":"tiny","stop_reason":"end_turn","stop_sequence":null,"usage":{"cache_read_input_tokens":3000,"input_tokens":566,"output_tokens":2}}`
	rec = parse(client(t, "anthropic-messages", Options{}), []byte(llama), 3, 8, 1)
	check(t, "messages llama.cpp whole", rec, want{true, "Hi", 2, 3566, 0, ""})
}

// Errors a server sends mid-stream on the Responses and Messages APIs are
// stream errors with the server's message; a cut stream names the event
// its API ends with, not [DONE].
func TestEventStreamErrors(t *testing.T) {
	cases := []struct{ name, backend, body, kind, msg string }{
		// llama.cpp's Responses stream: a bare error object, no type.
		{"responses bare error", "openai-responses", `event: response.output_text.delta
data: {"type":"response.output_text.delta","delta":"a"}

data: {"error":{"code":500,"message":"the request exceeds the available context size","type":"server_error"}}

`, record.KindStreamError, "the request exceeds the available context size"},
		// llama.cpp's Messages stream: the error object under event: error.
		{"messages event error", "anthropic-messages", `event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}

event: error
data: {"code":500,"message":"slot unavailable","type":"server_error"}

`, record.KindStreamError, "slot unavailable"},
		// Anthropic's own shape.
		{"messages anthropic error", "anthropic-messages", "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n", record.KindStreamError, "Overloaded"},
		// llama.cpp builds of 2025: a non-standard "error:" field.
		{"error field", "vllm-chat", "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\nerror: {\"code\":400,\"message\":\"the request exceeds the available context size\",\"type\":\"invalid_request_error\"}\n\ndata: [DONE]\n\n", record.KindStreamError, "the request exceeds the available context size"},
		{"messages cut", "anthropic-messages", "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\n", record.KindIncomplete, "the stream ended without message_stop"},
		{"responses cut", "openai-responses", "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"a\"}\n", record.KindIncomplete, "the stream ended without its terminal event"},
	}
	for _, c := range cases {
		for seed := range 10 {
			rec := parse(client(t, c.backend, Options{Stream: true}), []byte(c.body), seed, 8, 1)
			if rec.Success || rec.ErrorKind != c.kind || !strings.Contains(rec.Error, c.msg) || strings.Contains(rec.Error, "[DONE]") && c.backend != "vllm-chat" {
				t.Fatalf("%s: kind %q error %q, want %q %q", c.name, rec.ErrorKind, rec.Error, c.kind, c.msg)
			}
		}
	}
}
