package backend

import (
	"encoding/json"
	"strings"
	"testing"

	"benchserve/record"
)

// An OpenAI Responses stream as its documentation shows it (event lines,
// then data lines whose "type" repeats the event; no [DONE]), with a
// reasoning item before the message: TTFT at the first reasoning delta,
// TTFO at the first output text, the server's usage for the counts.
func TestResponsesStream(t *testing.T) {
	body := `event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[],"usage":null}}
event: response.in_progress
data: {"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_1","object":"response","status":"in_progress"}}
event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[],"content":[]}}
event: response.reasoning_text.delta
data: {"type":"response.reasoning_text.delta","sequence_number":3,"item_id":"rs_1","output_index":0,"content_index":0,"delta":"Let me"}
event: response.reasoning_text.delta
data: {"type":"response.reasoning_text.delta","sequence_number":4,"item_id":"rs_1","output_index":0,"content_index":0,"delta":" think."}
event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":5,"output_index":1,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}}
event: response.content_part.added
data: {"type":"response.content_part.added","sequence_number":6,"item_id":"msg_1","output_index":1,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}
event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"Hello"}
event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":8,"item_id":"msg_1","output_index":1,"content_index":0,"delta":" world"}
event: response.output_text.done
data: {"type":"response.output_text.done","sequence_number":9,"item_id":"msg_1","output_index":1,"content_index":0,"text":"Hello world"}
event: response.incomplete
data: {"type":"response.incomplete","sequence_number":10,"response":{"id":"resp_1","object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":0},"output_tokens":6,"output_tokens_details":{"reasoning_tokens":3},"total_tokens":18}}}`
	var ms []float64
	for i := range strings.Split(body, "\n") {
		ms = append(ms, float64(i/2*10+10))
	}
	rec := feedTimed(t, client(t, "openai-responses", Options{Stream: true}), body, ms, 6, 100)
	check(t, "responses", rec, want{true, "Let me think.Hello world", 6, 12, 3, ""})
	// Reasoning deltas at 40 and 50 ms, text at 80 and 90, last line 110.
	checkTimes(t, "responses", rec, 0.040, 0.110, []float64{0.010, 0.030, 0.010})
	if !near(rec.TTFO, 0.080) || rec.ReasoningTokens != 3 || rec.ContentTokens != 3 || rec.OutputSource != record.OutputServer {
		t.Errorf("TTFO %v, reasoning %d, content %d, source %v", rec.TTFO, rec.ReasoningTokens, rec.ContentTokens, rec.OutputSource)
	}
}

// The Responses API's errors: a failed response, an error event, and a
// stream cut before its terminal event.
func TestResponsesErrors(t *testing.T) {
	c := client(t, "openai-responses", Options{Stream: true})
	for _, x := range []struct{ body, kind, msg string }{
		{`event: response.output_text.delta
data: {"type":"response.output_text.delta","delta":"a"}
event: response.failed
data: {"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The model crashed."}}}`, record.KindStreamError, "The model crashed."},
		{`event: error
data: {"type":"error","code":"rate_limit_exceeded","message":"Slow down.","param":null}`, record.KindStreamError, "Slow down."},
		{`event: response.output_text.delta
data: {"type":"response.output_text.delta","delta":"a"}`, record.KindIncomplete, "the stream ended without"},
	} {
		rec := parse(c, []byte(x.body+"\n"), 7, 8, 1)
		if rec.Success || rec.ErrorKind != x.kind || !strings.Contains(rec.Error, x.msg) {
			t.Errorf("%q: kind %q error %q, want %q %q", x.body[:30], rec.ErrorKind, rec.Error, x.kind, x.msg)
		}
	}
}

// A whole Responses reply: the output items' texts, usage, status.
func TestResponsesWhole(t *testing.T) {
	body := `{"id":"resp_2","object":"response","status":"completed","output":[{"type":"reasoning","id":"rs_2","content":[{"type":"reasoning_text","text":"hm"}]},{"type":"message","id":"msg_2","role":"assistant","content":[{"type":"output_text","text":"Done.","annotations":[]}]}],"usage":{"input_tokens":5,"output_tokens":4,"output_tokens_details":{"reasoning_tokens":1},"total_tokens":9}}`
	rec := parse(client(t, "openai-responses", Options{}), []byte(body), 3, 16, 1)
	check(t, "responses/whole", rec, want{true, "hmDone.", 4, 5, 0, ""})
	if rec.ReasoningTokens != 1 || rec.ContentTokens != 3 || rec.TTFO != rec.TTFT {
		t.Errorf("reasoning %d content %d TTFO %v TTFT %v", rec.ReasoningTokens, rec.ContentTokens, rec.TTFO, rec.TTFT)
	}
}

// An Anthropic Messages stream in the documented order (message_start,
// ping, a thinking block with its signature, a text block, message_delta
// with the usage, message_stop).
func TestMessagesStream(t *testing.T) {
	body := `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}
event: ping
data: {"type": "ping"}
event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}
event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Hmm."}}
event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}}
event: content_block_stop
data: {"type":"content_block_stop","index":0}
event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}
event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}
event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" there"}}
event: content_block_stop
data: {"type":"content_block_stop","index":1}
event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":5}}
event: message_stop
data: {"type":"message_stop"}`
	var ms []float64
	for i := range strings.Split(body, "\n") {
		ms = append(ms, float64(i/2*10+10))
	}
	rec := feedTimed(t, client(t, "anthropic-messages", Options{Stream: true, Counter: wordCounter{}}), body, ms, 5, 100)
	check(t, "messages", rec, want{true, "Hmm.Hi there", 5, 25, 2, ""})
	// Thinking at 40 ms, text at 80 and 90, message_stop at 120.
	checkTimes(t, "messages", rec, 0.040, 0.120, []float64{0.040, 0.010})
	// No reasoning count from the server: the thinking text's own (1 word).
	if !near(rec.TTFO, 0.080) || rec.ReasoningTokens != 1 || rec.ContentTokens != 4 {
		t.Errorf("TTFO %v, reasoning %d, content %d", rec.TTFO, rec.ReasoningTokens, rec.ContentTokens)
	}
	errBody := "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n"
	if rec := parse(client(t, "anthropic-messages", Options{Stream: true}), []byte(errBody), 1, 5, 1); rec.Success || rec.Error != "Overloaded" {
		t.Errorf("error event: %q", rec.Error)
	}
}

// A whole Messages reply, and one whose thinking used up every token: no
// content, so no TTFO and 0 content tokens.
func TestMessagesWhole(t *testing.T) {
	body := `{"id":"msg_2","type":"message","role":"assistant","model":"m","content":[{"type":"thinking","thinking":"x y","signature":"s"},{"type":"text","text":"Yes."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":7,"output_tokens":3}}`
	rec := parse(client(t, "anthropic-messages", Options{Counter: wordCounter{}}), []byte(body), 5, 16, 1)
	check(t, "messages/whole", rec, want{true, "x yYes.", 3, 7, 0, ""})
	if rec.ReasoningTokens != 2 || rec.ContentTokens != 1 || rec.TTFO != rec.TTFT {
		t.Errorf("reasoning %d content %d", rec.ReasoningTokens, rec.ContentTokens)
	}
	thinking := `{"type":"message","content":[{"type":"thinking","thinking":"a b c d"}],"stop_reason":"max_tokens","usage":{"input_tokens":7,"output_tokens":4}}`
	rec = parse(client(t, "anthropic-messages", Options{Counter: wordCounter{}}), []byte(thinking), 5, 4, 1)
	if !rec.Success || rec.TTFO != 0 || rec.ContentTokens != 0 || rec.ReasoningTokens != 4 {
		t.Errorf("thinking only: success %v TTFO %v content %d reasoning %d", rec.Success, rec.TTFO, rec.ContentTokens, rec.ReasoningTokens)
	}
}

// Bodies: the Responses input and max_output_tokens; the Messages
// max_tokens and messages.
func TestResponsesMessagesBodies(t *testing.T) {
	in := &Input{Text: "Hi", OutputLen: 7, Model: "m"}
	if got := string(client(t, "openai-responses", Options{Stream: true}).Body(in)); got != `{"model": "m", "input": "Hi", "max_output_tokens": 7, "stream": true, "store": false, "temperature": 0.0, "ignore_eos": false}` {
		t.Errorf("responses body %s", got)
	}
	if got := string(client(t, "anthropic-messages", Options{Stream: true, IgnoreEOS: true}).Body(in)); got != `{"model": "m", "max_tokens": 7, "messages": [{"role": "user", "content": "Hi"}], "stream": true, "temperature": 0.0, "ignore_eos": true}` {
		t.Errorf("messages body %s", got)
	}
}

// Images: the Responses API's input_image parts; Anthropic's base64
// image blocks, from the data URIs the image datasets make.
func TestResponsesMessagesImages(t *testing.T) {
	in := &Input{Text: "What is it?", OutputLen: 3, Model: "m", Images: []string{"data:image/png;base64,iVBORw0K"}}
	if got := string(client(t, "openai-responses", Options{}).Body(in)); !strings.Contains(got, `"input": [{"type": "message", "role": "user", "content": [{"type": "input_image", "image_url": "data:image/png;base64,iVBORw0K"}, {"type": "input_text", "text": "What is it?"}]}]`) {
		t.Errorf("responses body %s", got)
	}
	if got := string(client(t, "anthropic-messages", Options{}).Body(in)); !strings.Contains(got, `"messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}}, {"type": "text", "text": "What is it?"}]}]`) {
		t.Errorf("messages body %s", got)
	}
}

// Responses input messages (a conversation's history) carry the item type
// llama.cpp requires; items that have a type keep theirs.
func TestResponsesHistoryItems(t *testing.T) {
	in := &Input{OutputLen: 4, Model: "m", Messages: []byte(`[{"role": "user", "content": "one"}, {"role":"assistant","content":"r"}, {"type": "message", "role": "user", "content": "two"}, {}]`)}
	got := string(client(t, "openai-responses", Options{}).Body(in))
	want := `"input": [{"type": "message", "role": "user", "content": "one"}, {"type": "message", "role":"assistant","content":"r"}, {"type": "message", "role": "user", "content": "two"}, {"type": "message"}]`
	if !strings.Contains(got, want) {
		t.Errorf("responses body %s\nwant %s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Errorf("not JSON: %s", got)
	}
}

// wordCounter counts words, for the reasoning counts.
type wordCounter struct{}

func (wordCounter) Count(s string) int { return len(strings.Fields(s)) }

// A chat stream with the usage in every chunk (continuous_usage_stats):
// each gap's chunk carried the difference of the server's running counts.
func TestChunkTokensFromContinuousUsage(t *testing.T) {
	body := `data: {"choices":[{"delta":{"content":"a"}}],"usage":{"prompt_tokens":3,"completion_tokens":1}}
data: {"choices":[{"delta":{"content":"bcd"}}],"usage":{"prompt_tokens":3,"completion_tokens":4}}
data: {"choices":[{"delta":{"content":"ef"}}],"usage":{"prompt_tokens":3,"completion_tokens":6}}
data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":6}}
data: [DONE]`
	rec := feedTimed(t, client(t, "vllm-chat", Options{Stream: true}), body, []float64{10, 40, 60, 61, 62}, 6, 3)
	if got := rec.ChunkTokens; len(got) != 2 || got[0] != 3 || got[1] != 2 {
		t.Errorf("chunk tokens %v, want [3 2]", got)
	}
	// Without counts in every chunk: none.
	body = strings.Replace(body, `,"usage":{"prompt_tokens":3,"completion_tokens":4}`, "", 1)
	if rec := feedTimed(t, client(t, "vllm-chat", Options{Stream: true}), body, []float64{10, 40, 60, 61, 62}, 6, 3); rec.ChunkTokens != nil {
		t.Errorf("chunk tokens %v without a count in every chunk", rec.ChunkTokens)
	}
	if got := string(client(t, "vllm-chat", Options{Stream: true, ContinuousUsage: true}).Body(&Input{Text: "x", OutputLen: 1})); !strings.Contains(got, `"stream_options": {"include_usage": true, "continuous_usage_stats": true}`) {
		t.Errorf("body %s", got)
	}
}
