package sim

import (
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

type msgEvent struct {
	Type    string
	Index   *int
	Message *msgObj
	Delta   *struct {
		Type, Text, Thinking, Signature string
		StopReason                      *string `json:"stop_reason"`
	}
	ContentBlock *struct{ Type string } `json:"content_block"`
	Usage        *msgUsage
	Error        *struct{ Type, Message string }
}

type msgObj struct {
	ID, Type, Role, Model string
	Content               []struct{ Type, Text, Thinking, Signature string }
	StopReason            *string `json:"stop_reason"`
	Usage                 msgUsage
}

type msgUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Shapes of the Messages events.
const (
	msgStart      = `{type:s,message:{id:s,type:s,role:s,content:[],model:s,stop_reason:null,stop_sequence:null,usage:{input_tokens:n,output_tokens:n}}}`
	msgPing       = `{type:s}`
	msgBlockStart = `{type:s,index:n,content_block:{type:s,thinking:s}}`
	msgTextStart  = `{type:s,index:n,content_block:{type:s,text:s}}`
	msgThinking   = `{type:s,index:n,delta:{type:s,thinking:s}}`
	msgSignature  = `{type:s,index:n,delta:{type:s,signature:s}}`
	msgTextDelta  = `{type:s,index:n,delta:{type:s,text:s}}`
	msgBlockStop  = `{type:s,index:n}`
	msgDelta      = `{type:s,delta:{stop_reason:s,stop_sequence:null},usage:{output_tokens:n}}`
	msgStop       = `{type:s}`
	msgWhole      = `{id:s,type:s,role:s,model:s,content:[{type:s,thinking:s,signature:s}|{type:s,text:s}],stop_reason:s,stop_sequence:null,usage:{input_tokens:n,output_tokens:n}}`
)

func TestMessagesStreamThinking(t *testing.T) {
	s, url := newTestServer(t, func(c *Config) { c.ReasoningTokens = 3 })
	r := post(t, url+"/v1/messages", `{"model":"benchserve-sim","max_tokens":7,"system":"be brief","messages":[{"role":"user","content":[{"type":"text","text":"hello there"}]}],"thinking":{"type":"enabled","budget_tokens":1024},"temperature":1,"top_p":0.9,"metadata":{"user_id":"u"},"ignore_eos":true,"stream":true}`)
	if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s: %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	if !bytes.Contains(r.body, []byte("event: ping\ndata: {\"type\": \"ping\"}\n\n")) {
		t.Error("no ping as Anthropic writes it")
	}
	evs := sseEvents(t, r.body)
	want := [][2]string{{"message_start", msgStart}, {"ping", msgPing}, {"content_block_start", msgBlockStart}}
	want = append(want, repeatShape("content_block_delta", msgThinking, 3)...)
	want = append(want, [][2]string{{"content_block_delta", msgSignature}, {"content_block_stop", msgBlockStop}, {"content_block_start", msgTextStart}}...)
	want = append(want, repeatShape("content_block_delta", msgTextDelta, 4)...)
	want = append(want, [][2]string{{"content_block_stop", msgBlockStop}, {"message_delta", msgDelta}, {"message_stop", msgStop}}...)
	checkShapes(t, evs, want)

	var thinking, text string
	wantPrompt := len(s.tok.Encode("be brief", true)) + len(s.tok.Encode("hello there", true))
	for _, ev := range evs {
		e := decode[msgEvent](t, []byte(ev.data))
		switch {
		case ev.name == "message_start":
			if m := e.Message; m.ID != "msg_1" || m.Type != "message" || m.Role != "assistant" || m.Model != "benchserve-sim" ||
				m.Usage.InputTokens != wantPrompt || m.Usage.OutputTokens != 1 {
				t.Errorf("%s, want %d input tokens", ev.data, wantPrompt)
			}
		case ev.name == "content_block_start":
			if wantType := []string{"thinking", "text"}[*e.Index]; e.ContentBlock.Type != wantType {
				t.Errorf("%s", ev.data)
			}
		case e.Delta != nil && e.Delta.Type == "thinking_delta":
			thinking += e.Delta.Thinking
			if *e.Index != 0 {
				t.Errorf("%s", ev.data)
			}
		case e.Delta != nil && e.Delta.Type == "text_delta":
			text += e.Delta.Text
			if *e.Index != 1 {
				t.Errorf("%s", ev.data)
			}
		case e.Delta != nil && e.Delta.Type == "signature_delta":
			if len(e.Delta.Signature) < 16 {
				t.Errorf("%s", ev.data)
			}
		case ev.name == "message_delta":
			if *e.Delta.StopReason != "max_tokens" || e.Usage.OutputTokens != 7 {
				t.Errorf("%s", ev.data)
			}
		}
	}
	if len(s.tok.Encode(thinking, false)) != 3 || len(s.tok.Encode(text, false)) != 4 {
		t.Errorf("thinking %q, text %q", thinking, text)
	}
}

func TestMessagesStreamEndTurn(t *testing.T) {
	_, url := newTestServer(t, func(c *Config) { c.EOSProbability = 0.5 })
	evs := sseEvents(t, post(t, url+"/v1/messages", `{"max_tokens":64,"messages":[{"role":"user","content":"hi"}],"stream":true}`).body)
	k := len(evs) - 6
	want := [][2]string{{"message_start", msgStart}, {"ping", msgPing}, {"content_block_start", msgTextStart}}
	want = append(want, repeatShape("content_block_delta", msgTextDelta, k)...)
	want = append(want, [][2]string{{"content_block_stop", msgBlockStop}, {"message_delta", msgDelta}, {"message_stop", msgStop}}...)
	checkShapes(t, evs, want)
	e := decode[msgEvent](t, []byte(evs[len(evs)-2].data))
	if k < 1 || *e.Delta.StopReason != "end_turn" || e.Usage.OutputTokens != k {
		t.Errorf("%d deltas: %s", k, evs[len(evs)-2].data)
	}
	if e := decode[msgEvent](t, []byte(evs[2].data)); *e.Index != 0 {
		t.Errorf("text block %s", evs[2].data)
	}
}

func TestMessagesWhole(t *testing.T) {
	s, url := newTestServer(t, func(c *Config) { c.ReasoningTokens = 2 })
	r := post(t, url+"/v1/messages", `{"max_tokens":5,"messages":[{"role":"user","content":"hello there"}],"ignore_eos":true}`)
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if got := shape(t, string(r.body)); got != msgWhole {
		t.Errorf("shape\n got %s\nwant %s", got, msgWhole)
	}
	m := decode[msgObj](t, r.body)
	if m.ID != "msg_1" || *m.StopReason != "max_tokens" || m.Content[0].Type != "thinking" || m.Content[0].Signature == "" ||
		len(s.tok.Encode(m.Content[0].Thinking, false)) != 2 || len(s.tok.Encode(m.Content[1].Text, false)) != 3 ||
		m.Usage.OutputTokens != 5 || m.Usage.InputTokens != len(s.tok.Encode("hello there", true)) {
		t.Errorf("%s", r.body)
	}
	_, url = newTestServer(t, func(c *Config) { c.EOSProbability = 0.5 })
	m = decode[msgObj](t, post(t, url+"/v1/messages", `{"max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`).body)
	if *m.StopReason != "end_turn" || len(m.Content) != 1 || m.Content[0].Type != "text" || m.Usage.OutputTokens != len(s.tok.Encode(m.Content[0].Text, false)) {
		t.Errorf("%+v", m)
	}
}

func TestMessagesErrors(t *testing.T) {
	_, url := newTestServer(t, nil)
	for _, c := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"messages":[{"role":"user","content":"hi"}]}`, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}`},
		{`{"max_tokens":4}`, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: Field required"}}`},
		{`{"max_tokens":`, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"Failed to read and parse request body, unexpected end of JSON input"}}`},
		{`{"model":"other","max_tokens":4,"messages":[{"role":"user","content":"hi"}]}`, 404, `{"type":"error","error":{"type":"not_found_error","message":"The model ` + "`other`" + ` does not exist."}}`},
	} {
		r := post(t, url+"/v1/messages", c.body)
		if r.status != c.status || string(r.body) != c.want {
			t.Errorf("%s: %d %s\nwant %d %s", c.body, r.status, r.body, c.status, c.want)
		}
	}
}

func TestMessagesFaults(t *testing.T) {
	_, url := newTestServer(t, nil)
	const body = `{"max_tokens":4,"messages":[{"role":"user","content":"hi"}],"ignore_eos":true,"stream":true}`
	for fault, want := range map[string]string{
		"429": `{"type":"error","error":{"type":"rate_limit_error","message":"Rate limit reached (simulated fault 429)."}}`,
		"500": `{"type":"error","error":{"type":"api_error","message":"Internal server error (simulated fault 500)."}}`,
		"503": `{"type":"error","error":{"type":"overloaded_error","message":"The server is overloaded or not ready yet (simulated fault 503)."}}`,
	} {
		if r := faultDo(t, url+"/v1/messages", body, fault); strconv.Itoa(r.status) != fault || string(r.body) != want {
			t.Errorf("%s: %d %s", fault, r.status, r.body)
		}
	}
	r := faultDo(t, url+"/v1/messages", body, "error-chunk")
	evs := sseEvents(t, r.body)
	wantNames := []string{"message_start", "ping", "content_block_start", "content_block_delta", "error"}
	if names := eventNames(evs); r.err != nil || !slices.Equal(names, wantNames) ||
		evs[4].data != `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` {
		t.Errorf("error-chunk: %v %v %s", r.err, names, r.body)
	}
	r = faultDo(t, url+"/v1/messages", body, "no-done")
	if names := eventNames(sseEvents(t, r.body)); r.err != nil || names[len(names)-1] != "message_delta" {
		t.Errorf("no-done: %v %v", r.err, names)
	}
	r = faultDo(t, url+"/v1/messages", strings.Replace(body, `"stream":true`, `"stream":false`, 1), "error-chunk")
	if r.status != 200 || string(r.body) != `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` {
		t.Errorf("whole error-chunk: %d %s", r.status, r.body)
	}
}

// With --api-key, /v1/messages takes the key as x-api-key or as a bearer
// token; the other endpoints only as a bearer token.
func TestMessagesAPIKey(t *testing.T) {
	_, url := newTestServer(t, func(c *Config) { c.APIKey = "s3cret" })
	const body = `{"max_tokens":2,"messages":[{"role":"user","content":"hi"}]}`
	for _, h := range [][]string{
		{"x-api-key", "s3cret", "anthropic-version", "2023-06-01"},
		{"Authorization", "Bearer s3cret"},
	} {
		if r := do(t, http.MethodPost, url+"/v1/messages", body, h...); r.status != 200 {
			t.Errorf("%v: %d %s", h, r.status, r.body)
		}
	}
	r := do(t, http.MethodPost, url+"/v1/messages", body, "x-api-key", "wrong")
	if r.status != 401 || string(r.body) != `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}` {
		t.Errorf("wrong key: %d %s", r.status, r.body)
	}
	r = do(t, http.MethodPost, url+"/v1/responses", `{"input":"hi"}`, "x-api-key", "s3cret")
	if r.status != 401 || !strings.Contains(string(r.body), `"type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`) {
		t.Errorf("responses with x-api-key: %d %s", r.status, r.body)
	}
	if r := do(t, http.MethodPost, url+"/v1/responses", `{"input":"hi"}`, "Authorization", "Bearer s3cret"); r.status != 200 {
		t.Errorf("responses with the bearer token: %d %s", r.status, r.body)
	}
}
