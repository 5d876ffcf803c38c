package sim

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
)

// embedFormat is /v1/embeddings. An embedding request is a prefill-only
// request in the engine: it queues, is prefilled (all its inputs as one
// sequence) and answers when the prefill step ends.
type embedFormat struct{}

func (embedFormat) idPrefix() string    { return "embd-" }
func (embedFormat) contentType() string { return "application/json" }
func (embedFormat) fail(w http.ResponseWriter, e *apiError) {
	writeOAIError(w, e.status, e.typ, e.message, e.param)
}
func (embedFormat) chunk(_ *job, b []byte, _, _ int, _ *progress) []byte {
	return b
}

func (embedFormat) parse(s *Server, r *http.Request, body []byte, j *job) *apiError {
	var q struct {
		Model    *string         `json:"model"`
		Input    json.RawMessage `json:"input"`
		LoRAPath json.RawMessage `json:"lora_path"`
	}
	if e := decodeBody(body, &q); e != nil {
		return e
	}
	m, e := s.checkModel(q.Model, q.LoRAPath)
	if e != nil {
		return e
	}
	inputs, e := s.prompts(q.Input, "input")
	if e != nil {
		return e
	}
	j.model, j.embed, j.inputs = m, true, len(inputs)
	for _, ids := range inputs {
		j.prompt = append(j.prompt, ids...)
		// Each vector is seeded by its input's tokens: same input, same vector.
		_, h := pageKeys(nil, 0, 0, ids, 1<<30)
		j.outIDs = append(j.outIDs, int(h>>1))
	}
	return nil
}

func (embedFormat) whole(j *job, b []byte, p *progress) []byte {
	dim := j.s.cfg.EmbeddingDim
	vec := make([]float64, dim)
	b = append(b, `{"object":"list","data":[`...)
	for i := range j.inputs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"object":"embedding","index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"embedding":[`...)
		seed, norm := uint64(j.outIDs[i]), 0.0
		for k := range vec {
			vec[k] = float64(int64(mix64(seed+uint64(k)))>>11) / (1 << 52)
			norm += vec[k] * vec[k]
		}
		norm = math.Sqrt(norm)
		for k, x := range vec {
			if k > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, float64(float32(x/norm)), 'g', -1, 32)
		}
		b = append(b, "]}"...)
	}
	b = append(b, `],"model":`...)
	b = appendJSONString(b, j.model)
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = appendPromptUsage(b, j)
	return append(b, "}}"...)
}
