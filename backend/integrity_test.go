package backend

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchserve/internal/py/pyjson"
	"benchserve/record"
)

// parseIn is parse for a request in (its extra body read by the checks).
func parseIn(c *Client, in *Input, body []byte, seed int) *record.Record {
	rec := &record.Record{PromptLen: 1, OutputLen: 64}
	cn := c.bareScratch(rec, 64)
	cn.in = in
	r := &splitReader{data: body, rng: rand.New(rand.NewPCG(uint64(seed), 5)), max: 1 + seed%61}
	cn.x.Body(context.Background(), r, time.Now(), &cn.send)
	return rec
}

// Every streamed 200 of the real servers' transcripts (testdata/wire,
// copied from shared/fixtures/wire) passes the integrity check, but for
// the two failures the transcripts record: an error after content
// (llm-d-inference-sim's mid-stream error) and Ollama's lost [DONE]
// when its runner was killed.
func TestIntegrityOfRealStreams(t *testing.T) {
	want := map[string]record.Integrity{
		"llm-d-inference-sim/error-midstream-multiprompt-stream":  record.ErrorAfterContent,
		"ollama/error-midstream-runner-killed-chat-stream":        record.NoTerminator,
		"ollama/error-midstream-runner-killed-completions-stream": record.NoTerminator,
	}
	dirs, _ := filepath.Glob("testdata/wire/*/*")
	streams := 0
	for _, dir := range dirs {
		name := strings.TrimPrefix(filepath.ToSlash(dir), "testdata/wire/")
		head, _ := os.ReadFile(filepath.Join(dir, "response.headers"))
		var req struct {
			Stream bool `json:"stream"`
			N      *int `json:"n"`
		}
		body, _ := os.ReadFile(filepath.Join(dir, "request.json"))
		if json.Unmarshal(body, &req) != nil || !req.Stream || !strings.HasPrefix(string(head), "HTTP/1.1 200") {
			continue
		}
		backend := "vllm"
		if strings.HasPrefix(strings.TrimPrefix(name, "ollama/"), "chat") || strings.Contains(name, "chat-stream") || strings.Contains(name, "messages") {
			backend = "vllm-chat"
		}
		in := &Input{}
		if req.N != nil {
			in.Extra = &pyjson.Object{}
			in.Extra.Set("n", pyjson.Int(*req.N))
		}
		resp := fixture(t, "wire/"+name+"/response.body")
		streams++
		for seed := range 8 {
			rec := parseIn(client(t, backend, Options{Stream: true}), in, resp, seed)
			if rec.Stream != want[name]|record.StreamRead {
				t.Errorf("%s (%s, seed %d): integrity %q (%08b), want %q; error %q", name, backend, seed, rec.Stream.Problems(), rec.Stream, want[name].Problems(), rec.Error)
			}
		}
	}
	if streams < 12 {
		t.Errorf("only %d streamed transcripts checked", streams)
	}
	for _, c := range []struct {
		backend, file string
		want          record.Integrity
	}{
		{"sglang", "generate/stream", 0},
		{"sglang", "generate/error-midstream", record.ErrorAfterContent},
		{"trt", "trt/stream", 0},
		{"truss", "truss/stream", 0},
	} {
		rec := parseIn(client(t, c.backend, Options{Stream: true}), &Input{}, fixture(t, c.file), 3)
		if rec.Stream != c.want|record.StreamRead {
			t.Errorf("%s: integrity %q, want %q", c.file, rec.Stream.Problems(), c.want.Problems())
		}
	}
}

// Each problem, in each API that can have it, sets its bit, and only it.
func TestIntegrityProblems(t *testing.T) {
	const (
		chunk  = `data: {"choices":[{"index":0,"finish_reason":null,"text":" a"}],"usage":null}` + "\n\n"
		finish = `data: {"choices":[{"index":0,"finish_reason":"length","text":""}],"usage":null}` + "\n\n"
		usage8 = `data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":8}}` + "\n\n"
		done   = "data: [DONE]\n\n"
	)
	many := strings.Repeat(chunk, 8)
	for _, c := range []struct {
		name, backend, body string
		want                record.Integrity
	}{
		{"clean completions", "vllm", many + finish + usage8 + done, 0},
		{"no [DONE]", "vllm", many + finish + usage8, record.NoTerminator},
		{"no finish reason", "vllm", many + usage8 + done, record.NoFinish},
		{"usage below the chunks", "vllm", strings.Repeat(chunk, 20) + finish + usage8 + done, record.UsageMismatch},
		{"usage within the slack", "vllm", strings.Repeat(chunk, 11) + finish + usage8 + done, 0},
		{"running count goes back", "vllm", strings.Replace(many, `"usage":null`, `"usage":{"completion_tokens":5}`, 1) +
			strings.Replace(chunk, `"usage":null`, `"usage":{"completion_tokens":2}`, 1) + finish + usage8 + done, record.UsageMismatch},
		{"choice index 1", "vllm", many + strings.Replace(chunk, `"index":0`, `"index":1`, 1) + finish + usage8 + done, record.BadIndex},
		{"error after content", "vllm", many + `data: {"error":{"message":"boom"}}` + "\n\n" + done, record.ErrorAfterContent},
		{"chat clean", "vllm-chat", `data: {"choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}` + "\n\n" +
			`data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}` + "\n\n" +
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" + done, 0},
		{"generate count goes back", "sglang",
			`data: {"text":"a","meta_info":{"completion_tokens":2,"finish_reason":null}}` + "\n\n" +
				`data: {"text":"ab","meta_info":{"completion_tokens":1,"finish_reason":null}}` + "\n\n" +
				`data: {"text":"abc","meta_info":{"completion_tokens":3,"finish_reason":{"type":"length","length":3}}}` + "\n\n" + done, record.BadIndex},
		{"generate no finish", "sglang",
			`data: {"text":"a","meta_info":{"completion_tokens":1,"finish_reason":null}}` + "\n\n" + done, record.NoFinish},
		{"responses sequence repeats", "openai-responses", responsesStream(3, 3), record.BadIndex},
		{"responses clean", "openai-responses", responsesStream(3, 4), 0},
		{"messages clean", "anthropic-messages", messagesStream(0, 0, `"end_turn"`, true), 0},
		{"messages block index", "anthropic-messages", messagesStream(0, 1, `"end_turn"`, true), record.BadIndex},
		{"messages no stop reason", "anthropic-messages", messagesStream(0, 0, "null", true), record.NoFinish},
		{"messages no message_stop", "anthropic-messages", messagesStream(0, 0, `"end_turn"`, false), record.NoTerminator},
	} {
		for seed := range 4 {
			rec := parseIn(client(t, c.backend, Options{Stream: true}), &Input{}, []byte(c.body), seed)
			if rec.Stream != c.want|record.StreamRead {
				t.Errorf("%s (seed %d): integrity %q, want %q; error %q", c.name, seed, rec.Stream.Problems(), c.want.Problems(), rec.Error)
			}
		}
	}
}

func responsesStream(seqA, seqB int) string {
	ev := func(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }
	return ev("response.created", `{"type":"response.created","response":{"status":"in_progress"},"sequence_number":0}`) +
		ev("response.output_text.delta", `{"type":"response.output_text.delta","delta":" a","sequence_number":1}`) +
		ev("response.output_text.delta", `{"type":"response.output_text.delta","delta":" b","sequence_number":`+itoa(seqA)+`}`) +
		ev("response.output_text.delta", `{"type":"response.output_text.delta","delta":" c","sequence_number":`+itoa(seqB)+`}`) +
		ev("response.completed", `{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":3,"output_tokens":3}},"sequence_number":9}`)
}

func messagesStream(start, delta int, stop string, end bool) string {
	ev := func(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }
	b := ev("message_start", `{"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":1}}}`) +
		ev("content_block_start", `{"type":"content_block_start","index":`+itoa(start)+`,"content_block":{"type":"text","text":""}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":`+itoa(delta)+`,"delta":{"type":"text_delta","text":"hi"}}`) +
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`) +
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":`+stop+`},"usage":{"output_tokens":1}}`)
	if end {
		b += ev("message_stop", `{"type":"message_stop"}`)
	}
	return b
}

func itoa(n int) string { return string(pyjson.Int(n)) }

// The text retokenized to far more than the server's count disagrees;
// a count above the text's own does not.
func TestIntegrityRetokenized(t *testing.T) {
	words := countWords{}
	body := func(text string, n int) []byte {
		return []byte(`data: {"choices":[{"index":0,"finish_reason":null,"text":"` + text + `"}],"usage":null}` + "\n\n" +
			`data: {"choices":[{"index":0,"finish_reason":"stop","text":""}],"usage":null}` + "\n\n" +
			`data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":` + itoa(n) + `}}` + "\n\n" + "data: [DONE]\n\n")
	}
	long := strings.Repeat(" w", 40)
	for _, c := range []struct {
		text string
		n    int
		want record.Integrity
	}{{long, 40, 0}, {long, 200, 0}, {long, 10, record.UsageMismatch}} {
		for _, deferred := range []bool{false, true} {
			cl := client(t, "vllm", Options{Stream: true, Counter: words, DeferCount: deferred})
			rec := parseIn(cl, &Input{}, body(c.text, c.n), 1)
			cl.CountText(rec)
			if rec.Stream != c.want|record.StreamRead {
				t.Errorf("%d words, server %d (deferred %v): %q, want %q", len(strings.Fields(c.text)), c.n, deferred, rec.Stream.Problems(), c.want.Problems())
			}
		}
	}
}

type countWords struct{}

func (countWords) Count(s string) int { return len(strings.Fields(s)) }

// A probe goes out at temperature 0 whatever the flags and the extra
// body say; another request keeps the extra body's temperature.
func TestProbeIsGreedy(t *testing.T) {
	for _, name := range Names() {
		s, _ := Lookup(name)
		if !s.Implemented || s.Embedding || s.proto.audio || s.proto.audioIn {
			continue // nothing is sampled; transcription's form: TestTranscriptionBody
		}
		c := client(t, name, Options{Stream: true, Temperature: 0.7})
		extra := &pyjson.Object{}
		if !s.Sampling() {
			extra.Set("temperature", pyjson.Float(0.7))
		}
		in := &Input{Text: "hi", OutputLen: 4, Model: "m", Extra: extra}
		var plain, probe map[string]any
		json.Unmarshal(c.Body(in), &plain)
		in.Probe = true
		json.Unmarshal(c.Body(in), &probe)
		temp := func(m map[string]any) any {
			if sp, ok := m["sampling_params"].(map[string]any); ok {
				return sp["temperature"]
			}
			return m["temperature"]
		}
		want := 0.0
		if name == "trt" {
			want = 0.000001
		}
		if temp(probe) != want || temp(plain) != 0.7 {
			t.Errorf("%s: probe temperature %v, plain %v", name, temp(probe), temp(plain))
		}
	}
}
