package sim

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// evStream is the state of a stream of named events (/v1/responses,
// /v1/messages) between takes.
type evStream struct {
	seq   int   // next sequence_number (responses)
	seq0  int   // seq when the current take's chunk began
	phase uint8 // evNone, evReasoning (its item open), evText (the message open)
	text  int   // output_index (content block index) of the message or text block
	end   int   // where the terminal event starts in the last take's chunk
}

const (
	evNone uint8 = iota
	evReasoning
	evText
)

// split cuts the tokens [from, from+n) into the reasoning tokens (the
// first j.reasoning of the reply) and the content tokens after them.
func (j *job) split(from, n int) (reasoning, content int) {
	if from < j.reasoning {
		reasoning = min(n, j.reasoning-from)
	}
	return reasoning, n - reasoning
}

// evHead starts an event: event: <typ>\ndata: {"type":"<typ>".
func evHead(b []byte, typ string) []byte {
	b = append(b, "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: {\"type\":\""...)
	b = append(b, typ...)
	return append(b, '"')
}

// responsesFormat is the OpenAI Responses API, POST /v1/responses.
type responsesFormat struct{}

// responsesRequest holds the fields of a Responses request read here;
// others are accepted and ignored.
type responsesRequest struct {
	Model           *string         `json:"model"`
	Input           json.RawMessage `json:"input"`
	MaxOutputTokens *int            `json:"max_output_tokens"`
	Stream          bool            `json:"stream"`
	Temperature     *float64        `json:"temperature"`
	TopP            *float64        `json:"top_p"`
	IgnoreEOS       bool            `json:"ignore_eos"`
}

func (responsesFormat) idPrefix() string    { return "resp_" }
func (responsesFormat) contentType() string { return "text/event-stream" }

// fail writes the OpenAI platform's error body:
// {"error":{"message","type","param","code"}}.
func (responsesFormat) fail(w http.ResponseWriter, e *apiError) {
	writeResponsesError(w, e.status, e.message, e.param)
}

// writeResponsesError writes the OpenAI platform's error body for status:
// invalid_request_error (code null, model_not_found for 404,
// invalid_api_key for 401), requests / rate_limit_exceeded for 429,
// server_error for 5xx.
func writeResponsesError(w http.ResponseWriter, status int, msg, param string) {
	typ, code := "invalid_request_error", "null"
	switch {
	case status == http.StatusUnauthorized:
		code = `"invalid_api_key"`
	case status == http.StatusNotFound:
		code = `"model_not_found"`
	case status == http.StatusTooManyRequests:
		typ, code = "requests", `"rate_limit_exceeded"`
	case status >= 500:
		typ = "server_error"
	}
	b := append([]byte(`{"error":{"message":`), quoted(msg)...)
	b = append(b, `,"type":"`...)
	b = append(b, typ...)
	b = append(b, `","param":`...)
	if param == "" {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, param)
	}
	b = append(b, `,"code":`...)
	b = append(b, code...)
	writeJSON(w, status, append(b, "}}"...))
}

func (responsesFormat) parse(s *Server, r *http.Request, body []byte, j *job) *apiError {
	var q responsesRequest
	if e := decodeBody(body, &q); e != nil {
		return e
	}
	m, e := s.checkModel(q.Model, nil)
	if e != nil {
		return e
	}
	j.model = m
	if j.prompt, e = s.inputIDs(q.Input); e != nil {
		return e
	}
	j.stream, j.ignoreEOS, j.reasoning = q.Stream, q.IgnoreEOS, s.cfg.ReasoningTokens
	j.greedy = isGreedy(q.Temperature)
	j.maxNew, e = maxTokens(q.MaxOutputTokens, "max_output_tokens", 16, 1)
	return e
}

// inputIDs reads a Responses input: a string, or a list of messages whose
// content is a string or a list of input_text (or output_text) parts.
func (s *Server) inputIDs(raw json.RawMessage) ([]int, *apiError) {
	if isNull(raw) {
		return nil, badRequest("Missing required parameter: 'input'.")
	}
	if raw[0] == '[' {
		return s.messageListIDs(nil, raw, "input", "input_text", "output_text")
	}
	return s.contentIDs(nil, raw, "input")
}

func (responsesFormat) chunk(j *job, b []byte, from, n int, p *progress) []byte {
	j.ev.seq0 = j.ev.seq
	if !j.started {
		j.started = true
		b = evHead(b, "response.created")
		b = j.respEnvelope(b, "in_progress", nil)
		b = evHead(b, "response.in_progress")
		b = j.respEnvelope(b, "in_progress", nil)
	}
	rk, ck := j.split(from, n)
	if rk > 0 {
		if j.ev.phase == evNone {
			j.ev.phase = evReasoning
			b = evHead(b, "response.output_item.added")
			b = append(b, `,"output_index":0,"item":`...)
			b = j.reasoningItem(b, 0)
			b = j.evSeq(b)
		}
		b = j.respDelta(b, "response.reasoning_text.delta", j.reasoningID(), 0, from, rk)
	}
	if ck > 0 {
		b = j.respOpenMessage(b, from+rk)
		b = j.respDelta(b, "response.output_text.delta", j.messageID(), j.ev.text, from+rk, ck)
	}
	if p.done {
		b = j.respOpenMessage(b, from+n)
		r := min(j.reasoning, p.avail)
		b = evHead(b, "response.output_text.done")
		b = j.respItemRef(b, j.messageID(), j.ev.text)
		b = append(b, `,"text":"`...)
		b = j.s.vocab.appendText(b, j.req.text, r, p.avail-r)
		b = j.evSeq(append(b, '"'))
		b = evHead(b, "response.content_part.done")
		b = j.respItemRef(b, j.messageID(), j.ev.text)
		b = append(b, `,"part":`...)
		b = j.outputText(b, r, p.avail-r)
		b = j.evSeq(b)
		b = evHead(b, "response.output_item.done")
		b = append(b, `,"output_index":`...)
		b = strconv.AppendInt(b, int64(j.ev.text), 10)
		b = append(b, `,"item":`...)
		b = j.messageItem(b, respItemStatus(p), r, p.avail-r)
		b = j.evSeq(b)
		j.ev.end = len(b)
		if p.reason == finLength {
			b = evHead(b, "response.incomplete")
			b = j.respEnvelope(b, "incomplete", p)
		} else {
			b = evHead(b, "response.completed")
			b = j.respEnvelope(b, "completed", p)
		}
	}
	return b
}

// respOpenMessage closes the reasoning item if it is open and opens the
// message item and its output_text part if they are not; the reply's
// reasoning tokens are [0, upto) once the message begins.
func (j *job) respOpenMessage(b []byte, upto int) []byte {
	if j.ev.phase == evText {
		return b
	}
	if j.ev.phase == evReasoning {
		r := min(j.reasoning, upto)
		b = evHead(b, "response.reasoning_text.done")
		b = j.respItemRef(b, j.reasoningID(), 0)
		b = append(b, `,"text":"`...)
		b = j.s.vocab.appendText(b, j.req.text, 0, r)
		b = j.evSeq(append(b, '"'))
		b = evHead(b, "response.output_item.done")
		b = append(b, `,"output_index":0,"item":`...)
		b = j.reasoningItem(b, r)
		b = j.evSeq(b)
		j.ev.text = 1
	}
	j.ev.phase = evText
	b = evHead(b, "response.output_item.added")
	b = append(b, `,"output_index":`...)
	b = strconv.AppendInt(b, int64(j.ev.text), 10)
	b = append(b, `,"item":`...)
	b = j.messageItem(b, "in_progress", 0, -1)
	b = j.evSeq(b)
	b = evHead(b, "response.content_part.added")
	b = j.respItemRef(b, j.messageID(), j.ev.text)
	b = append(b, `,"part":`...)
	b = j.outputText(b, 0, 0)
	return j.evSeq(b)
}

// respDelta appends a delta event of the tokens [from, from+n).
func (j *job) respDelta(b []byte, typ, itemID string, index, from, n int) []byte {
	b = evHead(b, typ)
	b = j.respItemRef(b, itemID, index)
	b = append(b, `,"delta":"`...)
	b = j.s.vocab.appendText(b, j.req.text, from, n)
	return j.evSeq(append(b, '"'))
}

// respItemRef appends ,"item_id","output_index","content_index":0.
func (j *job) respItemRef(b []byte, itemID string, index int) []byte {
	b = append(b, `,"item_id":"`...)
	b = append(b, itemID...)
	b = append(b, `","output_index":`...)
	b = strconv.AppendInt(b, int64(index), 10)
	return append(b, `,"content_index":0`...)
}

// evSeq ends a Responses event with its sequence_number.
func (j *job) evSeq(b []byte) []byte {
	b = append(b, `,"sequence_number":`...)
	seq := j.ev.seq
	if j.fault.Kind == FaultBadIndex && seq == 4 {
		seq-- // the first delta repeats the number before it
	}
	b = strconv.AppendInt(b, int64(seq), 10)
	j.ev.seq++
	return append(b, "}\n\n"...)
}

// respEnvelope appends ,"response":{…} and ends the event; p nil: the
// response in progress (no output, usage null).
func (j *job) respEnvelope(b []byte, status string, p *progress) []byte {
	b = append(b, `,"response":`...)
	b = j.respObject(b, status, p)
	return j.evSeq(b)
}

func (j *job) reasoningID() string { return "rs_" + strconv.FormatUint(j.num, 10) }
func (j *job) messageID() string   { return "msg_" + strconv.FormatUint(j.num, 10) }

// respItemStatus is the message item's final status.
func respItemStatus(p *progress) string {
	if p.reason == finLength {
		return "incomplete"
	}
	return "completed"
}

// reasoningItem appends the reasoning item; with r > 0 tokens, its
// content is their reasoning_text.
func (j *job) reasoningItem(b []byte, r int) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, j.reasoningID()...)
	b = append(b, `","type":"reasoning","summary":[],"content":[`...)
	if r > 0 {
		b = append(b, `{"type":"reasoning_text","text":"`...)
		b = j.s.vocab.appendText(b, j.req.text, 0, r)
		b = append(b, `"}`...)
	}
	return append(b, "]}"...)
}

// messageItem appends the message item; with n >= 0 its content is the
// output_text of tokens [from, from+n), else empty.
func (j *job) messageItem(b []byte, status string, from, n int) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, j.messageID()...)
	b = append(b, `","type":"message","status":"`...)
	b = append(b, status...)
	b = append(b, `","role":"assistant","content":[`...)
	if n >= 0 {
		b = j.outputText(b, from, n)
	}
	return append(b, "]}"...)
}

// outputText appends an output_text part of tokens [from, from+n).
func (j *job) outputText(b []byte, from, n int) []byte {
	b = append(b, `{"type":"output_text","text":"`...)
	b = j.s.vocab.appendText(b, j.req.text, from, n)
	return append(b, `","annotations":[]}`...)
}

// respObject appends the response object. p nil: in progress, output []
// and usage null; else the output items with their full texts and the
// usage. status "failed" carries the fault's error.
func (j *job) respObject(b []byte, status string, p *progress) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, j.id...)
	b = append(b, `","object":"response","created_at":`...)
	b = strconv.AppendInt(b, j.created, 10)
	b = append(b, `,"status":"`...)
	b = append(b, status...)
	b = append(b, `","error":`...)
	if status == "failed" {
		b = append(b, `{"code":"server_error","message":"`+faultMessage+`"}`...)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"incomplete_details":`...)
	if status == "incomplete" {
		b = append(b, `{"reason":"max_output_tokens"}`...)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"model":`...)
	b = appendJSONString(b, j.model)
	b = append(b, `,"output":[`...)
	if p == nil {
		return append(b, `],"usage":null}`...)
	}
	r := min(j.reasoning, p.avail)
	if r > 0 {
		b = j.reasoningItem(b, r)
		b = append(b, ',')
	}
	b = j.messageItem(b, respItemStatus(p), r, p.avail-r)
	b = append(b, `],"usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(len(j.prompt)), 10)
	b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(p.cached), 10)
	b = append(b, `},"output_tokens":`...)
	b = strconv.AppendInt(b, int64(j.reportedTokens(p.avail)), 10)
	b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, int64(r), 10)
	b = append(b, `},"total_tokens":`...)
	b = strconv.AppendInt(b, int64(len(j.prompt)+p.avail), 10)
	return append(b, "}}"...)
}

func (responsesFormat) whole(j *job, b []byte, p *progress) []byte {
	status := "completed"
	if p.reason == finLength {
		status = "incomplete"
	}
	return j.respObject(b, status, p)
}

// faultMessage is the message of the error-chunk fault's events.
const faultMessage = "simulated fault: the engine failed mid-generation"

// errorEvents: the error event, then response.failed, which ends the
// stream. They take the sequence numbers from where the take's dropped
// chunk began.
func (responsesFormat) errorEvents(j *job) []byte {
	j.ev.seq = j.ev.seq0
	b := evHead(nil, "error")
	b = append(b, `,"code":"server_error","message":"`+faultMessage+`","param":null`...)
	b = j.evSeq(b)
	b = evHead(b, "response.failed")
	return j.respEnvelope(b, "failed", nil)
}

// errorWhole is a failed response object.
func (responsesFormat) errorWhole(j *job) []byte { return j.respObject(nil, "failed", nil) }

func (responsesFormat) malformedEvent() []byte {
	return []byte("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"\n\n")
}
