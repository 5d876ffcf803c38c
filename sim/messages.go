package sim

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strconv"
)

// messagesFormat is the Anthropic Messages API, POST /v1/messages.
type messagesFormat struct{}

// messagesRequest holds the fields of a Messages request read here; others
// (thinking among them: the reasoning is --reasoning-tokens whatever it
// says) are accepted and ignored.
type messagesRequest struct {
	Model       *string         `json:"model"`
	MaxTokens   *int            `json:"max_tokens"`
	Messages    json.RawMessage `json:"messages"`
	System      json.RawMessage `json:"system"`
	Stream      bool            `json:"stream"`
	Temperature *float64        `json:"temperature"`
	TopP        *float64        `json:"top_p"`
	Thinking    *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
	IgnoreEOS bool `json:"ignore_eos"`
}

func (messagesFormat) idPrefix() string    { return "msg_" }
func (messagesFormat) contentType() string { return "text/event-stream" }

// fail writes Anthropic's error body with the error type of the status.
func (messagesFormat) fail(w http.ResponseWriter, e *apiError) {
	writeAnthropicError(w, e.status, e.message)
}

// anthropicErrorType is Anthropic's error type for an HTTP status (the
// simulator's 503 is Anthropic's 529, overloaded).
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusServiceUnavailable, 529:
		return "overloaded_error"
	}
	if status < 500 {
		return "invalid_request_error"
	}
	return "api_error"
}

// writeAnthropicError writes {"type":"error","error":{"type","message"}}.
func writeAnthropicError(w http.ResponseWriter, status int, msg string) {
	b := append([]byte(`{"type":"error","error":{"type":"`), anthropicErrorType(status)...)
	b = append(b, `","message":`...)
	b = appendJSONString(b, msg)
	writeJSON(w, status, append(b, "}}"...))
}

func (messagesFormat) parse(s *Server, r *http.Request, body []byte, j *job) *apiError {
	var q messagesRequest
	if e := decodeBody(body, &q); e != nil {
		return e
	}
	m, e := s.checkModel(q.Model, nil)
	if e != nil {
		return e
	}
	j.model = m
	if q.MaxTokens == nil {
		return badRequest("max_tokens: Field required")
	}
	if isNull(q.Messages) {
		return badRequest("messages: Field required")
	}
	if j.prompt, e = s.contentIDs(nil, q.System, "system", "text"); e != nil {
		return e
	}
	if j.prompt, e = s.messageListIDs(j.prompt, q.Messages, "messages", "text"); e != nil {
		return e
	}
	j.stream, j.ignoreEOS, j.reasoning = q.Stream, q.IgnoreEOS, s.cfg.ReasoningTokens
	j.greedy = isGreedy(q.Temperature)
	j.maxNew, e = maxTokens(q.MaxTokens, "max_tokens", 0, 1)
	return e
}

func (messagesFormat) chunk(j *job, b []byte, from, n int, p *progress) []byte {
	if !j.started {
		j.started = true
		b = evHead(b, "message_start")
		b = append(b, `,"message":{"id":"`...)
		b = append(b, j.id...)
		b = append(b, `","type":"message","role":"assistant","content":[],"model":`...)
		b = appendJSONString(b, j.model)
		b = append(b, `,"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`...)
		b = strconv.AppendInt(b, int64(len(j.prompt)), 10)
		b = append(b, `,"output_tokens":1}}}`+"\n\n"...)
		b = append(b, "event: ping\ndata: {\"type\": \"ping\"}\n\n"...)
	}
	rk, ck := j.split(from, n)
	if rk > 0 {
		if j.ev.phase == evNone {
			j.ev.phase = evReasoning
			b = evHead(b, "content_block_start")
			b = append(b, `,"index":0,"content_block":{"type":"thinking","thinking":""}}`+"\n\n"...)
		}
		b = evHead(b, "content_block_delta")
		b = append(b, `,"index":0,"delta":{"type":"thinking_delta","thinking":"`...)
		b = j.s.vocab.appendText(b, j.req.text, from, rk)
		b = append(b, "\"}}\n\n"...)
	}
	if ck > 0 {
		b = j.msgOpenText(b)
		b = evHead(b, "content_block_delta")
		b = append(b, `,"index":`...)
		index := j.ev.text
		if j.fault.Kind == FaultBadIndex && j.sent == 1 {
			index++ // a block that has not started
		}
		b = strconv.AppendInt(b, int64(index), 10)
		b = append(b, `,"delta":{"type":"text_delta","text":"`...)
		b = j.s.vocab.appendText(b, j.req.text, from+rk, ck)
		b = append(b, "\"}}\n\n"...)
	}
	if p.done {
		b = j.msgOpenText(b)
		b = evHead(b, "content_block_stop")
		b = append(b, `,"index":`...)
		b = strconv.AppendInt(b, int64(j.ev.text), 10)
		b = append(b, "}\n\n"...)
		b = evHead(b, "message_delta")
		b = append(b, `,"delta":{"stop_reason":`...)
		if j.fault.Kind == FaultNoFinish {
			b = append(b, "null"...)
		} else {
			b = append(append(append(b, '"'), stopReason(p)...), '"')
		}
		b = append(b, `,"stop_sequence":null},"usage":{"output_tokens":`...)
		b = strconv.AppendInt(b, int64(j.reportedTokens(p.avail)), 10)
		b = append(b, "}}\n\n"...)
		j.ev.end = len(b)
		b = append(b, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...)
	}
	return b
}

// msgOpenText closes the thinking block if it is open (its signature, then
// its stop) and starts the text block if it has not started.
func (j *job) msgOpenText(b []byte) []byte {
	if j.ev.phase == evText {
		return b
	}
	if j.ev.phase == evReasoning {
		b = evHead(b, "content_block_delta")
		b = append(b, `,"index":0,"delta":{"type":"signature_delta","signature":"`...)
		b = j.signature(b)
		b = append(b, "\"}}\n\n"...)
		b = evHead(b, "content_block_stop")
		b = append(b, `,"index":0}`+"\n\n"...)
		j.ev.text = 1
	}
	j.ev.phase = evText
	b = evHead(b, "content_block_start")
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, int64(j.ev.text), 10)
	return append(b, `,"content_block":{"type":"text","text":""}}`+"\n\n"...)
}

// signature appends the thinking block's signature: 64 bytes in base64, a
// function of the request's seed.
func (j *job) signature(b []byte) []byte {
	var raw [64]byte
	for i := range 8 {
		binary.LittleEndian.PutUint64(raw[i*8:], mix64(j.req.seed+uint64(i)))
	}
	return base64.StdEncoding.AppendEncode(b, raw[:])
}

// stopReason is Anthropic's stop_reason.
func stopReason(p *progress) string {
	if p.reason == finLength {
		return "max_tokens"
	}
	return "end_turn"
}

func (messagesFormat) whole(j *job, b []byte, p *progress) []byte {
	r := min(j.reasoning, p.avail)
	b = append(b, `{"id":"`...)
	b = append(b, j.id...)
	b = append(b, `","type":"message","role":"assistant","model":`...)
	b = appendJSONString(b, j.model)
	b = append(b, `,"content":[`...)
	if r > 0 {
		b = append(b, `{"type":"thinking","thinking":"`...)
		b = j.s.vocab.appendText(b, j.req.text, 0, r)
		b = append(b, `","signature":"`...)
		b = j.signature(b)
		b = append(b, `"},`...)
	}
	b = append(b, `{"type":"text","text":"`...)
	b = j.s.vocab.appendText(b, j.req.text, r, p.avail-r)
	b = append(b, `"}],"stop_reason":"`...)
	b = append(b, stopReason(p)...)
	b = append(b, `","stop_sequence":null,"usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(len(j.prompt)), 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(p.avail), 10)
	return append(b, "}}"...)
}

// anthropicOverloaded is the error Anthropic sends in a stream, and the
// error-chunk fault's body for this format.
const anthropicOverloaded = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`

func (messagesFormat) errorEvents(*job) []byte {
	return []byte("event: error\ndata: " + anthropicOverloaded + "\n\n")
}

func (messagesFormat) errorWhole(*job) []byte { return []byte(anthropicOverloaded) }

func (messagesFormat) malformedEvent() []byte {
	return []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\n\n")
}
