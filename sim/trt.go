package sim

import (
	"net/http"
)

// trtRequest holds the fields of a Triton generate request for the
// TensorRT-LLM ensemble that are read here.
type trtRequest struct {
	TextInput *string `json:"text_input"`
	MaxTokens *int    `json:"max_tokens"`
	MinLength int     `json:"min_length"`
	// Temperature: benchserve sends 1e-6, TensorRT-LLM's greedy.
	Temperature *float64 `json:"temperature"`
}

// trtFormat is Triton's generate extension with the TensorRT-LLM ensemble:
// POST /v2/models/<model>/generate_stream sends one "data: {...}" event per
// step with that step's text in text_output, and no [DONE]; .../generate
// sends one JSON object.
type trtFormat struct{ stream bool }

func (trtFormat) idPrefix() string    { return "trt-" }
func (trtFormat) contentType() string { return "text/event-stream; charset=utf-8" }

// fail writes Triton's error body, {"error": "<message>"}.
func (trtFormat) fail(w http.ResponseWriter, e *apiError) {
	b := append([]byte(`{"error":`), quoted(e.message)...)
	writeJSON(w, e.status, append(b, '}'))
}

func (f trtFormat) parse(s *Server, r *http.Request, body []byte, j *job) *apiError {
	var q trtRequest
	if e := decodeBody(body, &q); e != nil {
		return e
	}
	if q.TextInput == nil {
		return badRequest("text_input is required")
	}
	if q.MaxTokens == nil {
		return badRequest("max_tokens is required")
	}
	var e *apiError
	if j.maxNew, e = maxTokens(q.MaxTokens, "max_tokens", 0, 1); e != nil {
		return e
	}
	j.prompt = s.tok.Encode(*q.TextInput, true)
	// benchserve asks for exactly max_tokens with min_length = max_tokens.
	j.ignoreEOS = q.MinLength >= j.maxNew
	j.stream, j.greedy = f.stream, isGreedy(q.Temperature)
	j.model = r.PathValue("model")
	return nil
}

func (trtFormat) chunk(j *job, b []byte, from, n int, p *progress) []byte {
	if n == 0 {
		return b
	}
	b = append(b, "data: "...)
	b = trtObject(j, b, from, n)
	return append(b, "\n\n"...)
}

func (trtFormat) whole(j *job, b []byte, p *progress) []byte { return trtObject(j, b, 0, p.avail) }

func trtObject(j *job, b []byte, from, n int) []byte {
	b = append(b, `{"context_logits":0.0,"cum_log_probs":0.0,"generation_logits":0.0,"model_name":`...)
	b = appendJSONString(b, j.model)
	b = append(b, `,"model_version":"1","output_log_probs":[`...)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "0.0"...)
	}
	b = append(b, `],"sequence_end":false,"sequence_id":0,"sequence_start":false,"text_output":"`...)
	b = j.s.vocab.appendText(b, j.req.text, from, n)
	return append(b, `"}`...)
}
