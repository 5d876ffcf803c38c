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
var protoRerankVLLM = &protocol{
	name: "rerank", path: "/v1/rerank",
	body: func(_ *Client, in *Input) *pyjson.Object {
		o := &pyjson.Object{}
		o.Set("model", pyjson.String(in.Model))
		o.Set("query", pyjson.String(in.Text))
		o.Set("documents", pyjson.Strings(in.Docs))
		setLoRA(o, in)
		o.Update(in.Extra)
		return o
	},
	whole:     func(_ *parser, doc []byte, _ time.Time) error { return scoresDoc(doc, "results") },
	output:    func(_ *parser, r *record.Record) { r.OutputLen = 0 },
	stream:    streamNever,
	embedding: true,
}

// SGLang's /v1/rerank: vLLM's path and request fields, but the reply is a
// bare list of {score, document, index, meta_info}. return_documents false
// keeps the documents out of it (SGLang's default sends them back).
var protoRerankSGLang = &protocol{
	name: "sglang-rerank", path: "/v1/rerank",
	body: func(_ *Client, in *Input) *pyjson.Object {
		o := &pyjson.Object{}
		o.Set("model", pyjson.String(in.Model))
		o.Set("query", pyjson.String(in.Text))
		o.Set("documents", pyjson.Strings(in.Docs))
		o.Set("return_documents", jsonFalse)
		setLoRA(o, in)
		o.Update(in.Extra)
		return o
	},
	whole:     func(_ *parser, doc []byte, _ time.Time) error { return scoresDoc(doc, "") },
	output:    func(_ *parser, r *record.Record) { r.OutputLen = 0 },
	stream:    streamNever,
	embedding: true,
}

// vLLM's /score: text_1 the query, text_2 the documents; data [{index, score}].
var protoScore = &protocol{
	name: "score", path: "/score",
	body: func(_ *Client, in *Input) *pyjson.Object {
		o := &pyjson.Object{}
		o.Set("model", pyjson.String(in.Model))
		o.Set("text_1", pyjson.String(in.Text))
		o.Set("text_2", pyjson.Strings(in.Docs))
		setLoRA(o, in)
		o.Update(in.Extra)
		return o
	},
	whole:     func(_ *parser, doc []byte, _ time.Time) error { return scoresDoc(doc, "data") },
	output:    func(_ *parser, r *record.Record) { r.OutputLen = 0 },
	stream:    streamNever,
	embedding: true,
}

// Hugging Face TEI's /rerank: query and texts; the reply is a bare list of
// {index, score}. TEI serves one model, so the body names none.
var protoRerankTEI = &protocol{
	name: "tei-rerank", path: "/rerank",
	body: func(_ *Client, in *Input) *pyjson.Object {
		o := &pyjson.Object{}
		o.Set("query", pyjson.String(in.Text))
		o.Set("texts", pyjson.Strings(in.Docs))
		o.Set("return_text", jsonFalse)
		o.Update(in.Extra)
		return o
	},
	whole:     func(_ *parser, doc []byte, _ time.Time) error { return scoresDoc(doc, "") },
	output:    func(_ *parser, r *record.Record) { r.OutputLen = 0 },
	stream:    streamNever,
	embedding: true,
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
