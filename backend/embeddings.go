package backend

import (
	"time"

	"benchserve/internal/jsonscan"
	"benchserve/internal/py/pyjson"
	"benchserve/record"
)

// OpenAI embeddings (POST /v1/embeddings): never streamed, nothing
// generated; the reply need only be JSON and no error.
var protoEmbeddings = &protocol{
	name: "embeddings", path: "/v1/embeddings",
	body:      func(_ *Client, in *Input) *pyjson.Object { return embeddingsBody(in) },
	whole:     func(_ *parser, doc []byte, _ time.Time) error { return embeddingsDoc(doc) },
	output:    func(_ *parser, r *record.Record) { r.OutputLen = 0 },
	end:       doneLine,
	stream:    streamNever,
	embedding: true,
}

func embeddingsBody(in *Input) *pyjson.Object {
	o := &pyjson.Object{}
	o.Set("input", prompt(in))
	o.Set("model", pyjson.String(in.Model))
	setLoRA(o, in)
	o.Update(in.Extra)
	return o
}

// embeddingsDoc checks that an embeddings reply is JSON (the reference
// decodes it) and not an error object.
func embeddingsDoc(doc []byte) error {
	v, err := jsonscan.Parse(doc)
	if err != nil {
		return err
	}
	if e, _ := v.Get("error"); e.Truthy() {
		return serverError(errorMessage(e))
	}
	return nil
}
