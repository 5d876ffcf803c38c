package sim

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// nativeRequest holds the fields SGLang's POST /generate reads here.
type nativeRequest struct {
	Text     json.RawMessage `json:"text"`
	InputIDs json.RawMessage `json:"input_ids"`
	// SamplingParams is an object, or for a batch a list of one per prompt.
	SamplingParams json.RawMessage `json:"sampling_params"`
	Stream         bool            `json:"stream"`
	ImageData      json.RawMessage `json:"image_data"`
}

// samplingParams are the sampling_params read here.
type samplingParams struct {
	MaxNewTokens   *int     `json:"max_new_tokens"`
	IgnoreEOS      bool     `json:"ignore_eos"`
	StreamInterval *int     `json:"stream_interval"`
	Temperature    *float64 `json:"temperature"`
}

// nativeFormat is SGLang's /generate: every chunk carries the cumulative
// text and output_ids with meta_info; the finish reason and the
// speculative-decoding figures come with the last tokens; then [DONE].
type nativeFormat struct{}

func (nativeFormat) idPrefix() string    { return "gen-" }
func (nativeFormat) contentType() string { return "text/event-stream; charset=utf-8" }

// fail writes SGLang's error body for a rejected generate request.
func (nativeFormat) fail(w http.ResponseWriter, e *apiError) {
	b := append([]byte(`{"error":{"message":`), quoted(e.message)...)
	writeJSON(w, e.status, append(b, "}}"...))
}

func (nativeFormat) parse(s *Server, r *http.Request, body []byte, j *job) *apiError {
	var q nativeRequest
	if e := decodeBody(body, &q); e != nil {
		return e
	}
	var e *apiError
	switch {
	case !isNull(q.InputIDs):
		e = s.readPrompts(j, q.InputIDs, "input_ids")
	case !isNull(q.Text):
		e = s.readPrompts(j, q.Text, "text")
	default:
		return badRequest("Either text or input_ids should be provided.")
	}
	if e != nil {
		return e
	}
	if j.prompts == nil {
		j.prompt = imageData(j.prompt, q.ImageData)
	}
	j.model = s.cfg.Model
	j.stream = q.Stream
	sps := []samplingParams{{}}
	switch raw := q.SamplingParams; {
	case isNull(raw):
	case raw[0] == '[' && j.prompts == nil:
		return badRequest("sampling_params: a list is for a batch of prompts")
	case raw[0] == '[':
		if err := json.Unmarshal(raw, &sps); err != nil || len(sps) != len(j.prompts) {
			return badRequest("sampling_params: a list must hold one object per prompt (%d)", len(j.prompts))
		}
	default:
		if err := json.Unmarshal(raw, &sps[0]); err != nil {
			return badRequest("sampling_params: %v", err)
		}
	}
	for _, sp := range sps {
		var pp promptParams
		if pp.maxNew, e = maxTokens(sp.MaxNewTokens, "sampling_params.max_new_tokens", 128, 0); e != nil {
			return e
		}
		pp.ignoreEOS = sp.IgnoreEOS
		if sp.StreamInterval != nil {
			pp.interval = *sp.StreamInterval
		}
		j.params = append(j.params, pp)
	}
	j.maxNew, j.ignoreEOS = j.params[0].maxNew, j.params[0].ignoreEOS
	j.greedy = isGreedy(sps[0].Temperature)
	return nil
}

func (nativeFormat) chunk(j *job, b []byte, from, n int, p *progress) []byte {
	if n > 0 || p.done && !j.started {
		j.started = true
		b = append(b, "data: "...)
		b = nativeObject(j, b, from, n, p)
		b = append(b, "\n\n"...)
	}
	if p.done {
		b = append(b, "data: [DONE]\n\n"...)
	}
	return b
}

func (nativeFormat) whole(j *job, b []byte, p *progress) []byte {
	return nativeObject(j, b, 0, p.avail, p)
}

// nativeObject appends {"text","output_ids","meta_info"} after adding
// tokens [from, from+n) to the text so far.
func nativeObject(j *job, b []byte, from, n int, p *progress) []byte {
	v, seed := j.s.vocab, j.req.text
	j.text = v.appendText(j.text, seed, from, n)
	// The ids so far, already written out: each chunk repeats them all.
	for i := from; i < from+n; i++ {
		if i > 0 {
			j.idsJSON = append(j.idsJSON, ',')
		}
		j.idsJSON = strconv.AppendInt(j.idsJSON, int64(v.ids[v.word(seed, i)]), 10)
	}
	b = append(b, `{"text":"`...)
	b = append(b, j.text...)
	b = append(b, `","output_ids":[`...)
	b = append(b, j.idsJSON...)
	b = append(b, `],"meta_info":{"id":"`...)
	b = append(b, j.id...)
	b = append(b, `","finish_reason":`...)
	switch {
	case !p.done || j.fault.Kind == FaultNoFinish:
		b = append(b, "null"...)
	case p.reason == finStop:
		b = append(b, `{"type":"stop","matched":`...)
		b = strconv.AppendInt(b, int64(j.s.eosID()), 10)
		b = append(b, '}')
	default:
		b = append(b, `{"type":"length","length":`...)
		b = strconv.AppendInt(b, int64(p.avail), 10)
		b = append(b, '}')
	}
	b = append(b, `,"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(len(j.prompt)), 10)
	b = append(b, `,"weight_version":"default","total_retractions":0,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(from+n), 10)
	b = append(b, `,"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(p.cached), 10)
	if p.done {
		if spec := j.s.eng.spec; spec.on() {
			// SGLang: accept rate = accepted draft tokens / (verify steps × draft depth).
			rate := 0.0
			if p.verify > 0 {
				rate = float64(max(p.avail-1-p.verify, 0)) / float64(p.verify*spec.k)
			}
			b = append(b, `,"spec_accept_rate":`...)
			b = appendFloat(b, rate)
			b = append(b, `,"spec_accept_length":`...)
			b = appendFloat(b, specAcceptLength(p))
			b = append(b, `,"spec_verify_ct":`...)
			b = strconv.AppendInt(b, int64(p.verify), 10)
		}
		b = append(b, `,"e2e_latency":`...)
		b = appendFloat(b, time.Since(j.arrival).Seconds())
	}
	return append(b, "}}"...)
}

// eosID is the id reported as the matched stop token: the tokenizer's
// <|endoftext|>, the id right after the base vocabulary in the built-in
// encodings.
func (s *Server) eosID() int { return s.tok.VocabSize() + 1 }

// promptID: SGLang gives every prompt of a batch its own meta_info.id.
func (nativeFormat) promptID(id string, i int) string { return id + "-" + strconv.Itoa(i) }

// batchChunk is SGLang's chunk for a prompt of a batch: its object with
// "index" added last (tokenizer_manager's _handle_batch_request). Unlike a
// single stream, a finish with no new tokens still sends the object, so
// every prompt's finish_reason is seen.
func (nativeFormat) batchChunk(j *job, b []byte, from, n int, p *progress) []byte {
	b = append(b, "data: "...)
	b = nativeObject(j, b, from, n, p)
	b = append(b[:len(b)-1], `,"index":`...)
	b = strconv.AppendInt(b, int64(j.index), 10)
	return append(b, "}\n\n"...)
}

func (nativeFormat) batchEnd(_ *batch, b []byte) []byte { return append(b, "data: [DONE]\n\n"...) }

// batchWhole is a JSON list of the prompts' objects, as SGLang answers a
// batch that is not streamed (no "index" there).
func (nativeFormat) batchWhole(bt *batch, b []byte) []byte {
	b = append(b, '[')
	for i, sj := range bt.subs {
		if i > 0 {
			b = append(b, ',')
		}
		b = nativeObject(sj, b, 0, bt.st[i].p.avail, &bt.st[i].p)
	}
	return append(b, ']')
}
