package sim

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// oaiRequest holds the fields the OpenAI-style endpoints read.
type oaiRequest struct {
	Model               *string         `json:"model"`
	Prompt              json.RawMessage `json:"prompt"`
	Messages            json.RawMessage `json:"messages"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	IgnoreEOS                 bool            `json:"ignore_eos"`
	Temperature               *float64        `json:"temperature"`
	N                         *int            `json:"n"`
	LoRAPath                  json.RawMessage `json:"lora_path"`
	ReturnCachedTokensDetails bool            `json:"return_cached_tokens_details"`
	ImageData                 json.RawMessage `json:"image_data"`
}

// parseCommon reads what completions and chat share.
func (s *Server) parseCommon(body []byte, j *job, anyModel bool) (*oaiRequest, *apiError) {
	var q oaiRequest
	if e := decodeBody(body, &q); e != nil {
		return nil, e
	}
	if anyModel {
		j.model = s.cfg.Model
		if q.Model != nil && *q.Model != "" {
			j.model = *q.Model
		}
	} else {
		m, e := s.checkModel(q.Model, q.LoRAPath)
		if e != nil {
			return nil, e
		}
		j.model = m
	}
	if q.N != nil && *q.N != 1 {
		return nil, badRequest("n = %d is not supported by the simulator (only 1)", *q.N)
	}
	j.stream, j.ignoreEOS, j.greedy = q.Stream, q.IgnoreEOS, isGreedy(q.Temperature)
	j.usage = q.StreamOptions != nil && q.StreamOptions.IncludeUsage
	j.cacheDetails = q.ReturnCachedTokensDetails
	return &q, nil
}

// completionsFormat is /v1/completions, and Truss's predict endpoint,
// which speaks the same format.
type completionsFormat struct{ truss bool }

func (completionsFormat) idPrefix() string    { return "cmpl-" }
func (completionsFormat) contentType() string { return "text/event-stream" }
func (completionsFormat) fail(w http.ResponseWriter, e *apiError) {
	writeOAIError(w, e.status, e.typ, e.message, e.param)
}

func (f completionsFormat) parse(s *Server, r *http.Request, body []byte, j *job) *apiError {
	q, e := s.parseCommon(body, j, f.truss)
	if e != nil {
		return e
	}
	if e = s.readPrompts(j, q.Prompt, "prompt"); e != nil {
		return e
	}
	if j.prompts == nil {
		j.prompt = imageData(j.prompt, q.ImageData)
	}
	j.maxNew, e = maxTokens(q.MaxTokens, "max_tokens", 16, 1)
	return e
}

func (completionsFormat) chunk(j *job, b []byte, from, n int, p *progress) []byte {
	b = completionText(j, b, from, n)
	if p.done {
		b = j.lastChunks(b, "text_completion", `"text":""`, p)
	}
	return b
}

// completionText appends the content chunk of tokens [from, from+n), if
// any.
func completionText(j *job, b []byte, from, n int) []byte {
	if n == 0 {
		return b
	}
	b = oaiHead(b, j, "text_completion")
	b = append(b, `null,"text":"`...)
	b = j.s.vocab.appendText(b, j.req.text, from, n)
	return append(b, "\"}]}\n\n"...)
}

// promptID: vLLM's chunks of a batch all carry the request's id; the
// choice's index tells the prompts apart.
func (completionsFormat) promptID(id string, _ int) string { return id }

// batchChunk is vLLM's stream of a batch: each chunk holds one choice of
// one prompt, index its position; its finish chunk when it ends.
func (completionsFormat) batchChunk(j *job, b []byte, from, n int, p *progress) []byte {
	b = completionText(j, b, from, n)
	if p.done {
		b = j.finishChunk(b, "text_completion", `"text":""`, p)
	}
	return b
}

// batchEnd appends the usage chunk of the whole batch, if asked for, and
// [DONE].
func (completionsFormat) batchEnd(bt *batch, b []byte) []byte {
	prompt, p := bt.totals()
	b = bt.head.usageChunk(b, "text_completion", prompt, &p)
	return append(b, "data: [DONE]\n\n"...)
}

// batchWhole is one object with a choice per prompt and the batch's usage.
func (completionsFormat) batchWhole(bt *batch, b []byte) []byte {
	head := bt.head
	prompt, sum := bt.totals()
	b = oaiIdentity(b, head, "text_completion")
	b = append(b, `,"usage":`...)
	b = usageObject(b, prompt, sum.avail, sum.cached)
	b = append(b, `,"choices":[`...)
	for i, sj := range bt.subs {
		if i > 0 {
			b = append(b, ',')
		}
		p := &bt.st[i].p
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"finish_reason":`...)
		b = appendJSONString(b, p.reason.String())
		b = append(b, `,"text":"`...)
		b = sj.s.vocab.appendText(b, sj.req.text, 0, p.avail)
		b = append(b, `"}`...)
	}
	b = append(b, ']')
	b = head.sglext(b, &sum)
	return append(b, '}')
}

// lastChunks appends the end of an OpenAI stream: the finish chunk, the
// usage chunk, and [DONE].
func (j *job) lastChunks(b []byte, object, empty string, p *progress) []byte {
	b = j.finishChunk(b, object, empty, p)
	b = j.usageChunk(b, object, len(j.prompt), p)
	return append(b, "data: [DONE]\n\n"...)
}

// finishChunk appends the chunk with the finish reason and an empty
// content field (empty).
func (j *job) finishChunk(b []byte, object, empty string, p *progress) []byte {
	b = oaiHead(b, j, object)
	if j.fault.Kind == FaultNoFinish {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, p.reason.String())
	}
	b = append(b, ',')
	b = append(b, empty...)
	b = append(b, '}', ']')
	b = j.sglext(b, p)
	return append(b, "}\n\n"...)
}

func (completionsFormat) whole(j *job, b []byte, p *progress) []byte {
	b = oaiObject(b, j, "text_completion", p)
	b = append(b, `"text":"`...)
	b = j.s.vocab.appendText(b, j.req.text, 0, p.avail)
	b = append(b, `"}]`...)
	b = j.sglext(b, p)
	return append(b, '}')
}

// chatFormat is /v1/chat/completions.
type chatFormat struct{}

func (chatFormat) idPrefix() string    { return "chatcmpl-" }
func (chatFormat) contentType() string { return "text/event-stream" }
func (chatFormat) fail(w http.ResponseWriter, e *apiError) {
	writeOAIError(w, e.status, e.typ, e.message, e.param)
}

func (chatFormat) parse(s *Server, r *http.Request, body []byte, j *job) *apiError {
	q, e := s.parseCommon(body, j, false)
	if e != nil {
		return e
	}
	if j.prompt, e = s.messageIDs(q.Messages); e != nil {
		return e
	}
	j.reasoning = s.cfg.ReasoningTokens
	limit := q.MaxCompletionTokens
	field := "max_completion_tokens"
	if limit == nil {
		limit, field = q.MaxTokens, "max_tokens"
	}
	// vLLM's default: whatever the context leaves.
	j.maxNew, e = maxTokens(limit, field, max(s.cfg.ContextLength-len(j.prompt), 1), 1)
	return e
}

func (chatFormat) chunk(j *job, b []byte, from, n int, p *progress) []byte {
	if !j.started {
		j.started = true
		b = oaiHead(b, j, "chat.completion.chunk")
		b = append(b, `null,"delta":{"role":"assistant"}}]}`+"\n\n"...)
	}
	if n > 0 {
		b = oaiHead(b, j, "chat.completion.chunk")
		b = append(b, `null,"delta":{`...)
		b = j.chatText(b, from, n)
		b = append(b, "}}]}\n\n"...)
	}
	if p.done {
		b = j.lastChunks(b, "chat.completion.chunk", `"delta":{}`, p)
	}
	return b
}

func (chatFormat) whole(j *job, b []byte, p *progress) []byte {
	b = oaiObject(b, j, "chat.completion", p)
	b = append(b, `"message":{"role":"assistant",`...)
	b = j.chatText(b, 0, p.avail)
	b = append(b, '}')
	if j.s.eng.spec.on() {
		b = append(b, `,"meta_info":{"spec_accept_length":`...)
		b = appendFloat(b, specAcceptLength(p))
		b = append(b, `,"spec_verify_ct":`...)
		b = strconv.AppendInt(b, int64(p.verify), 10)
		b = append(b, '}')
	}
	b = append(b, "}]"...)
	b = j.sglext(b, p)
	return append(b, '}')
}

// chatText appends the members of a delta or message for tokens
// [from, from+n): the first --reasoning-tokens of the reply go to
// reasoning_content, the rest to content.
func (j *job) chatText(b []byte, from, n int) []byte {
	v, seed, r := j.s.vocab, j.req.text, j.reasoning
	if from < r {
		k := min(n, r-from)
		b = append(b, `"reasoning_content":"`...)
		b = v.appendText(b, seed, from, k)
		b = append(b, '"')
		from, n = from+k, n-k
		if n == 0 {
			return b
		}
		b = append(b, ',')
	}
	b = append(b, `"content":"`...)
	b = v.appendText(b, seed, from, n)
	return append(b, '"')
}

// oaiHead starts a stream chunk, up to the value of finish_reason:
// data: {"id","model","object","created","usage":null,"choices":[{"index":i,"finish_reason":
// (i is the prompt's position in a batch, else 0).
func oaiHead(b []byte, j *job, object string) []byte {
	b = oaiIdentity(append(b, "data: "...), j, object)
	b = append(b, `,"usage":null,"choices":[{"index":`...)
	index := j.index
	if j.fault.Kind == FaultBadIndex && j.sent == 1 {
		index++ // the second content chunk names another choice
	}
	b = strconv.AppendInt(b, int64(index), 10)
	return append(b, `,"finish_reason":`...)
}

// oaiIdentity appends the members every OpenAI object starts with:
// {"id","model","object","created".
func oaiIdentity(b []byte, j *job, object string) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, j.id...)
	b = append(b, `","model":`...)
	b = appendJSONString(b, j.model)
	b = append(b, `,"object":"`...)
	b = append(b, object...)
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, j.created, 10)
	return b
}

// oaiObject starts a whole reply, up to the first member after
// finish_reason in choices[0].
func oaiObject(b []byte, j *job, object string, p *progress) []byte {
	b = oaiIdentity(b, j, object)
	b = append(b, `,"usage":`...)
	b = usageObject(b, len(j.prompt), p.avail, p.cached)
	b = append(b, `,"choices":[{"index":0,"finish_reason":`...)
	b = appendJSONString(b, p.reason.String())
	return append(b, ',')
}

// usageChunk appends the stream_options.include_usage chunk, if asked for:
// prompt tokens, and p's completion and cached tokens.
func (j *job) usageChunk(b []byte, object string, prompt int, p *progress) []byte {
	if !j.usage {
		return b
	}
	b = oaiIdentity(append(b, "data: "...), j, object)
	b = append(b, `,"usage":`...)
	b = usageObject(b, prompt, j.reportedTokens(p.avail), p.cached)
	return append(b, `,"choices":[]}`+"\n\n"...)
}

func usageObject(b []byte, prompt, completion, cached int) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(completion), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt+completion), 10)
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(cached), 10)
	return append(b, "}}"...)
}

// sglext appends SGLang's cache breakdown when the request asked for it
// (return_cached_tokens_details); the simulator's cache is all on device.
func (j *job) sglext(b []byte, p *progress) []byte {
	if !j.cacheDetails {
		return b
	}
	b = append(b, `,"sglext":{"cached_tokens_details":{"device":`...)
	b = strconv.AppendInt(b, int64(p.cached), 10)
	return append(b, `,"host":0,"storage":0,"storage_backend":null}}`...)
}
