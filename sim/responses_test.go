package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// sseEvent is one event of a stream of named events.
type sseEvent struct {
	name, data string
}

// sseEvents reads a stream of "event: <name>\ndata: <json>\n\n" events
// strictly: each event is exactly those two lines, its data is a JSON
// object, and its "type" is the event's name.
func sseEvents(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	if !bytes.HasSuffix(body, []byte("\n\n")) {
		t.Fatalf("stream does not end with a blank line: %q", tail(body))
	}
	var out []sseEvent
	for _, block := range strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n") {
		lines := strings.Split(block, "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "event: ") || !strings.HasPrefix(lines[1], "data: ") {
			t.Fatalf("event is not \"event: \" then \"data: \": %q", block)
		}
		ev := sseEvent{strings.TrimPrefix(lines[0], "event: "), strings.TrimPrefix(lines[1], "data: ")}
		var head struct{ Type string }
		if err := json.Unmarshal([]byte(ev.data), &head); err != nil || head.Type != ev.name {
			t.Fatalf("event %s: data %s (type %q, %v)", ev.name, ev.data, head.Type, err)
		}
		out = append(out, ev)
	}
	return out
}

func eventNames(evs []sseEvent) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.name)
	}
	return out
}

// checkShapes compares each event's name and the shape of its data (keys
// in order, value types) with want.
func checkShapes(t *testing.T, evs []sseEvent, want [][2]string) {
	t.Helper()
	if len(evs) != len(want) {
		t.Fatalf("%d events, want %d:\n got %v", len(evs), len(want), eventNames(evs))
	}
	for i, ev := range evs {
		if ev.name != want[i][0] {
			t.Errorf("event %d is %s, want %s", i, ev.name, want[i][0])
		}
		if s := shape(t, ev.data); s != want[i][1] {
			t.Errorf("event %d %s:\n got %s\nwant %s", i, ev.name, s, want[i][1])
		}
	}
}

type respObj struct {
	ID                string
	Object            string
	Status            string
	Model             string
	Error             *struct{ Code, Message string }
	IncompleteDetails *struct{ Reason string } `json:"incomplete_details"`
	Output            []respItem
	Usage             *respUsage
}

type respItem struct {
	ID, Type, Status, Role string
	Content                []struct{ Type, Text string }
}

type respUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

type respEvent struct {
	Type           string
	SequenceNumber *int   `json:"sequence_number"`
	ItemID         string `json:"item_id"`
	OutputIndex    int    `json:"output_index"`
	ContentIndex   int    `json:"content_index"`
	Delta, Text    string
	Code, Message  string
	Response       *respObj
	Item           *respItem
}

// Shapes of the Responses events.
const (
	respInProgress  = `{type:s,response:{id:s,object:s,created_at:n,status:s,error:null,incomplete_details:null,model:s,output:[],usage:null},sequence_number:n}`
	respRsAdded     = `{type:s,output_index:n,item:{id:s,type:s,summary:[],content:[]},sequence_number:n}`
	respDelta       = `{type:s,item_id:s,output_index:n,content_index:n,delta:s,sequence_number:n}`
	respTextDone    = `{type:s,item_id:s,output_index:n,content_index:n,text:s,sequence_number:n}`
	respRsItem      = `{id:s,type:s,summary:[],content:[{type:s,text:s}]}`
	respMsgItem     = `{id:s,type:s,status:s,role:s,content:[{type:s,text:s,annotations:[]}]}`
	respRsDone      = `{type:s,output_index:n,item:` + respRsItem + `,sequence_number:n}`
	respMsgAdded    = `{type:s,output_index:n,item:{id:s,type:s,status:s,role:s,content:[]},sequence_number:n}`
	respPart        = `{type:s,item_id:s,output_index:n,content_index:n,part:{type:s,text:s,annotations:[]},sequence_number:n}`
	respMsgDone     = `{type:s,output_index:n,item:` + respMsgItem + `,sequence_number:n}`
	respUsageShape  = `{input_tokens:n,input_tokens_details:{cached_tokens:n},output_tokens:n,output_tokens_details:{reasoning_tokens:n},total_tokens:n}`
	respFinalRsMsg  = `{id:s,object:s,created_at:n,status:s,error:null,incomplete_details:{reason:s},model:s,output:[` + respRsItem + `|` + respMsgItem + `],usage:` + respUsageShape + `}`
	respFinalMsgEnd = `{id:s,object:s,created_at:n,status:s,error:null,incomplete_details:null,model:s,output:[` + respMsgItem + `],usage:` + respUsageShape + `}`
)

func repeatShape(name, s string, n int) [][2]string {
	return slices.Repeat([][2]string{{name, s}}, n)
}

// A streamed reply with reasoning that reaches max_output_tokens: the
// documented events in order, sequence numbers from 0, deltas that add up
// to the final texts, and the usage.
func TestResponsesStreamReasoningIncomplete(t *testing.T) {
	s, url := newTestServer(t, func(c *Config) { c.ReasoningTokens = 3 })
	r := post(t, url+"/v1/responses", `{"model":"benchserve-sim","input":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"input_text","text":"hello there"}]}],"max_output_tokens":7,"ignore_eos":true,"stream":true,"temperature":0.5,"top_p":1,"store":false}`)
	if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s: %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	if bytes.Contains(r.body, []byte("[DONE]")) {
		t.Error("the stream has a [DONE]")
	}
	evs := sseEvents(t, r.body)
	want := [][2]string{
		{"response.created", respInProgress}, {"response.in_progress", respInProgress},
		{"response.output_item.added", respRsAdded},
	}
	want = append(want, repeatShape("response.reasoning_text.delta", respDelta, 3)...) // one token per chunk
	want = append(want, [][2]string{
		{"response.reasoning_text.done", respTextDone}, {"response.output_item.done", respRsDone},
		{"response.output_item.added", respMsgAdded}, {"response.content_part.added", respPart},
	}...)
	want = append(want, repeatShape("response.output_text.delta", respDelta, 4)...)
	want = append(want, [][2]string{
		{"response.output_text.done", respTextDone}, {"response.content_part.done", respPart},
		{"response.output_item.done", respMsgDone},
		{"response.incomplete", `{type:s,response:` + respFinalRsMsg + `,sequence_number:n}`},
	}...)
	checkShapes(t, evs, want)

	var reasoning, content, reasoningDone, contentDone string
	var final *respObj
	for i, ev := range evs {
		e := decode[respEvent](t, []byte(ev.data))
		if e.SequenceNumber == nil || *e.SequenceNumber != i {
			t.Errorf("event %d %s: sequence_number %v", i, ev.name, e.SequenceNumber)
		}
		switch ev.name {
		case "response.reasoning_text.delta":
			reasoning += e.Delta
			if e.ItemID != "rs_1" || e.OutputIndex != 0 {
				t.Errorf("reasoning delta %s", ev.data)
			}
		case "response.reasoning_text.done":
			reasoningDone = e.Text
		case "response.output_text.delta":
			content += e.Delta
			if e.ItemID != "msg_1" || e.OutputIndex != 1 || e.ContentIndex != 0 {
				t.Errorf("text delta %s", ev.data)
			}
		case "response.output_text.done":
			contentDone = e.Text
		case "response.created", "response.in_progress":
			if o := e.Response; o.ID != "resp_1" || o.Object != "response" || o.Status != "in_progress" || o.Model != "benchserve-sim" {
				t.Errorf("%s", ev.data)
			}
		case "response.incomplete":
			final = e.Response
		}
	}
	if reasoning == "" || content == "" || reasoning != reasoningDone || content != contentDone {
		t.Errorf("reasoning %q / %q, content %q / %q", reasoning, reasoningDone, content, contentDone)
	}
	wantPrompt := len(s.tok.Encode("be brief", true)) + len(s.tok.Encode("hello there", true))
	if final.Status != "incomplete" || final.IncompleteDetails.Reason != "max_output_tokens" ||
		final.Output[0].Content[0].Text != reasoning || final.Output[1].Content[0].Text != content ||
		final.Output[1].Status != "incomplete" || final.Output[1].Role != "assistant" {
		t.Errorf("final response %+v", final)
	}
	if u := final.Usage; u.InputTokens != wantPrompt || u.OutputTokens != 7 || u.OutputTokensDetails.ReasoningTokens != 3 || u.TotalTokens != wantPrompt+7 {
		t.Errorf("usage %+v, want %d prompt tokens", u, wantPrompt)
	}
	if n := len(s.tok.Encode(reasoning+content, false)); n != 7 {
		t.Errorf("%d tokens sent, want 7", n)
	}
}

// A reply that stops at EOS completes; without reasoning tokens the
// message is output 0.
func TestResponsesStreamCompleted(t *testing.T) {
	_, url := newTestServer(t, func(c *Config) { c.EOSProbability = 0.5 })
	evs := sseEvents(t, post(t, url+"/v1/responses", `{"input":"hi","max_output_tokens":64,"stream":true}`).body)
	k := len(evs) - 8 // the deltas
	want := [][2]string{
		{"response.created", respInProgress}, {"response.in_progress", respInProgress},
		{"response.output_item.added", respMsgAdded}, {"response.content_part.added", respPart},
	}
	want = append(want, repeatShape("response.output_text.delta", respDelta, k)...)
	want = append(want, [][2]string{
		{"response.output_text.done", respTextDone}, {"response.content_part.done", respPart},
		{"response.output_item.done", respMsgDone},
		{"response.completed", `{type:s,response:` + respFinalMsgEnd + `,sequence_number:n}`},
	}...)
	checkShapes(t, evs, want)
	e := decode[respEvent](t, []byte(evs[len(evs)-1].data))
	if o := e.Response; k < 1 || o.Status != "completed" || o.IncompleteDetails != nil || o.Output[0].Status != "completed" ||
		o.Usage.OutputTokens != k || o.Usage.OutputTokensDetails.ReasoningTokens != 0 {
		t.Errorf("%d deltas: %s", k, evs[len(evs)-1].data)
	}
	if e := decode[respEvent](t, []byte(evs[2].data)); e.OutputIndex != 0 || e.Item.ID != "msg_1" {
		t.Errorf("message item %s", evs[2].data)
	}
}

func TestResponsesWhole(t *testing.T) {
	s, url := newTestServer(t, func(c *Config) { c.ReasoningTokens = 2 })
	r := post(t, url+"/v1/responses", `{"input":"hello there","max_output_tokens":5,"ignore_eos":true}`)
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if got := shape(t, string(r.body)); got != respFinalRsMsg {
		t.Errorf("shape\n got %s\nwant %s", got, respFinalRsMsg)
	}
	o := decode[respObj](t, r.body)
	text := o.Output[0].Content[0].Text + o.Output[1].Content[0].Text
	if o.ID != "resp_1" || o.Status != "incomplete" || o.Output[0].ID != "rs_1" || o.Output[1].ID != "msg_1" ||
		len(s.tok.Encode(o.Output[0].Content[0].Text, false)) != 2 || len(s.tok.Encode(text, false)) != 5 ||
		o.Usage.OutputTokens != 5 || o.Usage.OutputTokensDetails.ReasoningTokens != 2 || o.Usage.InputTokens != len(s.tok.Encode("hello there", true)) {
		t.Errorf("%s", r.body)
	}
	// Stopped at EOS: completed.
	_, url = newTestServer(t, func(c *Config) { c.EOSProbability = 0.5 })
	o = decode[respObj](t, post(t, url+"/v1/responses", `{"input":"hi","max_output_tokens":64}`).body)
	if o.Status != "completed" || o.IncompleteDetails != nil || len(o.Output) != 1 || o.Output[0].Status != "completed" {
		t.Errorf("%+v", o)
	}
}

func TestResponsesErrors(t *testing.T) {
	_, url := newTestServer(t, nil)
	for _, c := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"input":`, 400, `{"error":{"message":"Failed to read and parse request body, unexpected end of JSON input","type":"invalid_request_error","param":null,"code":null}}`},
		{`{"max_output_tokens":4}`, 400, `{"error":{"message":"Missing required parameter: 'input'.","type":"invalid_request_error","param":null,"code":null}}`},
		{`{"input":"hi","max_output_tokens":0}`, 400, `{"error":{"message":"max_output_tokens must be at least 1, got 0.","type":"invalid_request_error","param":null,"code":null}}`},
		{`{"input":"hi","model":"other"}`, 404, `{"error":{"message":"The model ` + "`other`" + ` does not exist.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`},
	} {
		r := post(t, url+"/v1/responses", c.body)
		if r.status != c.status || string(r.body) != c.want {
			t.Errorf("%s: %d %s\nwant %d %s", c.body, r.status, r.body, c.status, c.want)
		}
	}
}

func TestResponsesFaults(t *testing.T) {
	_, url := newTestServer(t, func(c *Config) { c.ReasoningTokens = 1 })
	const body = `{"input":"hello there","max_output_tokens":4,"ignore_eos":true,"stream":true}`
	r := faultDo(t, url+"/v1/responses", body, "429")
	if r.status != 429 || string(r.body) != `{"error":{"message":"Rate limit reached (simulated fault 429).","type":"requests","param":null,"code":"rate_limit_exceeded"}}` {
		t.Errorf("429: %d %s", r.status, r.body)
	}
	if r := faultDo(t, url+"/v1/responses", body, "500"); r.status != 500 || !strings.Contains(string(r.body), `"type":"server_error"`) {
		t.Errorf("500: %d %s", r.status, r.body)
	}

	// error-chunk: after the first content chunk, an error event and
	// response.failed end the stream, the sequence numbers running on.
	r = faultDo(t, url+"/v1/responses", body, "error-chunk")
	evs := sseEvents(t, r.body)
	names := eventNames(evs)
	wantNames := []string{"response.created", "response.in_progress", "response.output_item.added", "response.reasoning_text.delta", "error", "response.failed"}
	if r.err != nil || !slices.Equal(names, wantNames) {
		t.Fatalf("%v: %v", r.err, names)
	}
	if s := shape(t, evs[4].data); s != `{type:s,code:s,message:s,param:null,sequence_number:n}` {
		t.Errorf("error event %s", s)
	}
	if s := shape(t, evs[5].data); s != `{type:s,response:{id:s,object:s,created_at:n,status:s,error:{code:s,message:s},incomplete_details:null,model:s,output:[],usage:null},sequence_number:n}` {
		t.Errorf("response.failed %s", s)
	}
	for i, ev := range evs {
		e := decode[respEvent](t, []byte(ev.data))
		if *e.SequenceNumber != i {
			t.Errorf("%s: sequence_number %d, want %d", ev.name, *e.SequenceNumber, i)
		}
		if ev.name == "error" && e.Code != "server_error" || ev.name == "response.failed" && (e.Response.Status != "failed" || e.Response.Error.Code != "server_error") {
			t.Errorf("%s", ev.data)
		}
	}

	// no-done: everything but the terminal event.
	r = faultDo(t, url+"/v1/responses", body, "no-done")
	if names := eventNames(sseEvents(t, r.body)); r.err != nil || names[len(names)-1] != "response.output_item.done" || len(names) != 14 {
		t.Errorf("no-done: %v %v", r.err, names)
	}
	// malformed: a truncated event, then the stream goes on.
	r = faultDo(t, url+"/v1/responses", body, "malformed")
	if !bytes.Contains(r.body, []byte("\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"\n\n")) || !bytes.HasSuffix(bytes.TrimSpace(r.body), []byte(`"sequence_number":14}`)) {
		t.Errorf("malformed: %s", r.body)
	}
	// empty: a completed response with no output token.
	r = faultDo(t, url+"/v1/responses", body, "empty")
	evs = sseEvents(t, r.body)
	if e := decode[respEvent](t, []byte(evs[len(evs)-1].data)); len(evs) != 8 || e.Type != "response.completed" || e.Response.Usage.OutputTokens != 0 {
		t.Errorf("empty: %v", eventNames(evs))
	}
	// A whole reply's error-chunk: a failed response object with status 200.
	r = faultDo(t, url+"/v1/responses", strings.Replace(body, `"stream":true`, `"stream":false`, 1), "error-chunk")
	if o := decode[respObj](t, r.body); r.status != 200 || o.Status != "failed" || o.Error.Code != "server_error" {
		t.Errorf("whole error-chunk: %d %s", r.status, r.body)
	}
}

// The truth of the chat-like endpoints: ttfo is the first chunk with
// content tokens, after the reasoning, and reasoning_tokens counts them.
func TestTruthTTFO(t *testing.T) {
	for _, reasoning := range []int{0, 2, 10} {
		_, url := newTestServer(t, func(c *Config) { c.ReasoningTokens = reasoning })
		reqs := []struct{ path, body string }{
			{"/v1/responses", `{"input":"a b c","max_output_tokens":5,"ignore_eos":true,"stream":true}`},
			{"/v1/messages", `{"max_tokens":5,"messages":[{"role":"user","content":"a b c"}],"ignore_eos":true,"stream":true}`},
			{"/v1/chat/completions", `{"messages":[{"role":"user","content":"a b c"}],"max_tokens":5,"ignore_eos":true,"stream":true}`},
			{"/v1/responses", `{"input":"a b c","max_output_tokens":5,"ignore_eos":true}`},
			{"/v1/messages", `{"max_tokens":5,"messages":[{"role":"user","content":"a b c"}],"ignore_eos":true}`},
		}
		for _, q := range reqs {
			if r := post(t, url+q.path, q.body); r.status != 200 {
				t.Fatalf("%s: %d %s", q.path, r.status, r.body)
			}
		}
		doc := decode[truthDoc](t, do(t, http.MethodGet, url+"/sim/truth", "").body)
		if len(doc.Requests) != len(reqs) {
			t.Fatalf("%d records", len(doc.Requests))
		}
		for i, r := range doc.Requests {
			if r.Endpoint != reqs[i].path || r.CompletionTokens != 5 || r.ReasoningTokens != min(reasoning, 5) {
				t.Errorf("reasoning %d, %s: endpoint %s, completion %d, reasoning_tokens %d", reasoning, r.ID, r.Endpoint, r.CompletionTokens, r.ReasoningTokens)
			}
			switch {
			case reasoning >= 5: // all reasoning: no content
				if r.TTFO != nil || r.FirstContent != nil {
					t.Errorf("reasoning %d, %s: ttfo %v", reasoning, r.ID, r.TTFO)
				}
			case reasoning == 0 || !strings.Contains(reqs[i].body, "stream"):
				if r.TTFO == nil || *r.TTFO != *r.TTFT {
					t.Errorf("reasoning %d, %s: ttfo %v, ttft %v", reasoning, r.ID, r.TTFO, *r.TTFT)
				}
			default: // one token per chunk: content from the third chunk
				if r.TTFO == nil || !(*r.TTFO > *r.TTFT) || *r.FirstContent != r.Chunks[reasoning][0] {
					t.Errorf("reasoning %d, %s: ttfo %v, ttft %v, chunks %v", reasoning, r.ID, r.TTFO, *r.TTFT, r.Chunks)
				}
			}
		}
	}
}
