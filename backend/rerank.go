package backend

import (
	"errors"
	"time"

	"benchserve/internal/jsonscan"
	"benchserve/internal/py/pyjson"
	"benchserve/record"
)

// Rerank and score (one query, Input.Docs documents): never streamed,
// nothing generated, like embeddings. The reply must be JSON, no error,
// and carry its list of scores.

// vLLM's /v1/rerank (Jina/Cohere style): results [{index, relevance_score,
// document}]. top_n is left to the server (all documents) unless the extra
// body sets it.
var protoRerankVLLM = rerankProto("rerank", "/v1/rerank", "query", "documents", true, nil, "results")

// SGLang's /v1/rerank: vLLM's path and request fields, but the reply is a
// bare list of {score, document, index, meta_info}. return_documents false
// keeps the documents out of it (SGLang's default sends them back).
var protoRerankSGLang = rerankProto("sglang-rerank", "/v1/rerank", "query", "documents", true, []string{"return_documents"}, "")

// vLLM's /score: text_1 the query, text_2 the documents; data [{index, score}].
var protoScore = rerankProto("score", "/score", "text_1", "text_2", true, nil, "data")

// Hugging Face TEI's /rerank: query and texts; the reply is a bare list of
// {index, score}. TEI serves one model, so the body names none (nor an
// adapter).
var protoRerankTEI = rerankProto("tei-rerank", "/rerank", "query", "texts", false, []string{"return_text"}, "")

// Cohere's /v2/rerank, which vLLM serves too: vLLM's fields (Cohere's v2
// sends no documents back), results [{index, relevance_score}].
var protoRerankCohere = rerankProto("cohere-rerank", "/v2/rerank", "query", "documents", true, nil, "results")

// vLLM's /classify: input the prompt; data [{index, label, probs,
// num_classes}]. Any text dataset feeds it, as embeddings.
var protoClassify = &protocol{
	name: "classify", path: "/classify",
	body:      func(_ *Client, in *Input) *pyjson.Object { return embeddingsBody(in) },
	whole:     func(_ *parser, doc []byte, _ time.Time) error { return scoresDoc(doc, "data") },
	output:    func(_ *parser, r *record.Record) { r.OutputLen = 0 },
	stream:    streamNever,
	embedding: true,
}

// rerankProto is a rerank API: its path, the body's query and documents
// keys, whether the body names the model (and adapter), the keys it sets
// false (no texts sent back), and the reply's list of scores (see
// scoresDoc).
func rerankProto(name, path, queryKey, docsKey string, model bool, off []string, list string) *protocol {
	return &protocol{
		name: name, path: path,
		body: func(_ *Client, in *Input) *pyjson.Object {
			o := &pyjson.Object{}
			if model {
				o.Set("model", pyjson.String(in.Model))
			}
			o.Set(queryKey, pyjson.String(in.Text))
			o.Set(docsKey, pyjson.Strings(in.Docs))
			for _, k := range off {
				o.Set(k, jsonFalse)
			}
			if model {
				setLoRA(o, in)
			}
			o.Update(in.Extra)
			return o
		},
		whole:     func(_ *parser, doc []byte, _ time.Time) error { return scoresDoc(doc, list) },
		output:    func(_ *parser, r *record.Record) { r.OutputLen = 0 },
		stream:    streamNever,
		embedding: true,
	}
}

// scoresDoc checks that a reply is JSON, not an error object, and holds a
// non-empty list of scores: member list of the top-level object, or the
// top-level array when list is "".
func scoresDoc(doc []byte, list string) error {
	v, err := jsonscan.Parse(doc)
	if err != nil {
		return err
	}
	if e, ok := v.Get("error"); ok && e.Truthy() {
		return serverError(errorMessage(e))
	}
	if list != "" {
		v, _ = v.Get(list)
	}
	if _, ok := v.First(); v.Kind != jsonscan.Array || !ok {
		if list == "" {
			return errors.New("reply is not a non-empty list of scores")
		}
		return errors.New("reply has no scores in " + list)
	}
	return nil
}
