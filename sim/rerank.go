package sim

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// rerankKind is the API a rerank or score request came in by.
type rerankKind uint8

const (
	rerankVLLM   rerankKind = iota // /v1/rerank, /rerank with documents: results [...]
	rerankTEI                      // /rerank with texts: a bare list
	rerankScore                    // /score: text_1, text_2; data [...]
	rerankSGLang                   // /v1/rerank with return_documents: a bare list
)

// rerankFormat serves /v1/rerank, /rerank (vLLM's, SGLang's and TEI's
// bodies) and /score. A cross-encoder scores each query-document pair as one sequence,
// so the cost model prefills every pair: the engine request is the pairs'
// tokens end to end, prefill only, as an embedding request is.
type rerankFormat struct{ score bool }

func (rerankFormat) idPrefix() string    { return "rerank-" }
func (rerankFormat) contentType() string { return "application/json" }
func (rerankFormat) fail(w http.ResponseWriter, e *apiError) {
	writeOAIError(w, e.status, e.typ, e.message, e.param)
}
func (rerankFormat) chunk(_ *job, b []byte, _, _ int, _ *progress) []byte { return b }

func (f rerankFormat) parse(s *Server, r *http.Request, body []byte, j *job) *apiError {
	var q struct {
		Model     *string         `json:"model"`
		Query     json.RawMessage `json:"query"`
		Documents json.RawMessage `json:"documents"`
		Texts     json.RawMessage `json:"texts"`
		Text1     json.RawMessage `json:"text_1"`
		Text2     json.RawMessage `json:"text_2"`
		LoRAPath  json.RawMessage `json:"lora_path"`
		// ReturnDocs is SGLang's field: its reply is a bare list.
		ReturnDocs json.RawMessage `json:"return_documents"`
	}
	if e := decodeBody(body, &q); e != nil {
		return e
	}
	m, e := s.checkModel(q.Model, q.LoRAPath)
	if e != nil {
		return e
	}
	kind, query, docs, qName, dName := rerankVLLM, q.Query, q.Documents, "query", "documents"
	switch {
	case f.score:
		kind, query, docs, qName, dName = rerankScore, q.Text1, q.Text2, "text_1", "text_2"
	case r.URL.Path == "/rerank" && !isNull(q.Texts):
		kind, docs, dName = rerankTEI, q.Texts, "texts"
	case !isNull(q.ReturnDocs):
		kind = rerankSGLang
	}
	qs, e := s.texts(query, qName)
	if e != nil {
		return e
	}
	if len(qs) != 1 {
		return badRequest("%s must be one string", qName)
	}
	ds, e := s.texts(docs, dName)
	if e != nil {
		return e
	}
	j.model, j.embed, j.inputs, j.rerank = m, true, len(ds), kind
	for _, d := range ds {
		j.prompt = append(j.prompt, qs[0]...)
		j.prompt = append(j.prompt, d...)
		// Each score is seeded by its pair's tokens: same pair, same score.
		_, h := pageKeys(nil, 0, 0, append(append([]int(nil), qs[0]...), d...), 1<<30)
		j.outIDs = append(j.outIDs, int(h>>1))
	}
	return nil
}

// texts is a string or a non-empty list of strings, each tokenized.
func (s *Server) texts(raw json.RawMessage, field string) ([][]int, *apiError) {
	if isNull(raw) {
		return nil, badRequest("%s is required", field)
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		var one string
		if json.Unmarshal(raw, &one) != nil {
			return nil, badRequest("%s must be a string or a list of strings", field)
		}
		list = []string{one}
	}
	if len(list) == 0 {
		return nil, badRequest("%s must not be empty", field)
	}
	out := make([][]int, len(list))
	for i, t := range list {
		out[i] = s.tok.Encode(t, true)
	}
	return out, nil
}

// whole writes the scores in the request's order (vLLM sorts rerank
// results by score; the client reads only that they are there).
func (f rerankFormat) whole(j *job, b []byte, _ *progress) []byte {
	score := func(i int) float64 { return float64(mix64(uint64(j.outIDs[i]))>>11) / (1 << 53) }
	switch j.rerank {
	case rerankTEI:
		b = append(b, '[')
		for i := range j.inputs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"index":`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `,"score":`...)
			b = strconv.AppendFloat(b, score(i), 'g', -1, 32)
			b = append(b, '}')
		}
		return append(b, ']')
	case rerankSGLang:
		b = append(b, '[')
		for i := range j.inputs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"score":`...)
			b = strconv.AppendFloat(b, score(i), 'g', -1, 32)
			b = append(b, `,"document":null,"index":`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `,"meta_info":{"id":`...)
			b = appendJSONString(b, j.id)
			b = append(b, "}}"...)
		}
		return append(b, ']')
	case rerankScore:
		b = appendListHead(b, j)
		for i := range j.inputs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"index":`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `,"object":"score","score":`...)
			b = strconv.AppendFloat(b, score(i), 'g', -1, 32)
			b = append(b, '}')
		}
		b = append(b, `],"usage":{"prompt_tokens":`...)
	default:
		b = append(b, `{"id":`...)
		b = appendJSONString(b, j.id)
		b = append(b, `,"model":`...)
		b = appendJSONString(b, j.model)
		b = append(b, `,"results":[`...)
		for i := range j.inputs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"index":`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `,"document":null,"relevance_score":`...)
			b = strconv.AppendFloat(b, score(i), 'g', -1, 32)
			b = append(b, '}')
		}
		b = append(b, `],"usage":{"prompt_tokens":`...)
	}
	b = appendPromptUsage(b, j)
	return append(b, "}}"...)
}

// appendListHead opens vLLM's list reply (/score, /classify) up to its
// data array.
func appendListHead(b []byte, j *job) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, j.id)
	b = append(b, `,"object":"list","created":`...)
	b = strconv.AppendInt(b, j.created, 10)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, j.model)
	return append(b, `,"data":[`...)
}

// appendPromptUsage writes a prefill-only request's usage counts, after
// "prompt_tokens": (its tokens, and the total, the same).
func appendPromptUsage(b []byte, j *job) []byte {
	b = strconv.AppendInt(b, int64(len(j.prompt)), 10)
	b = append(b, `,"total_tokens":`...)
	return strconv.AppendInt(b, int64(len(j.prompt)), 10)
}
