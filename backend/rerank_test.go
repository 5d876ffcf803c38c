package backend

import (
	"strings"
	"testing"
	"time"

	"benchserve/internal/py/pyjson"
)

// The bodies are the servers' published request schemas: vLLM's
// /v1/rerank (model, query, documents), vLLM's /score (model, text_1,
// text_2), TEI's /rerank (query, texts, return_text; no model), Cohere's
// /v2/rerank (model, query, documents) and vLLM's /classify (input,
// model). The
// extra body adds to them (top_n, say).
func TestRerankBodies(t *testing.T) {
	extra := &pyjson.Object{}
	extra.Set("top_n", pyjson.Int(2))
	in := &Input{Text: "q \"x\"", Docs: []string{"a", "b"}, Model: "m", OutputLen: 9}
	for _, c := range []struct{ be, want, path string }{
		{"vllm-rerank", `{"model": "m", "query": "q \"x\"", "documents": ["a", "b"]}`, "/v1/rerank"},
		{"sglang-rerank", `{"model": "m", "query": "q \"x\"", "documents": ["a", "b"], "return_documents": false}`, "/v1/rerank"},
		{"vllm-score", `{"model": "m", "text_1": "q \"x\"", "text_2": ["a", "b"]}`, "/score"},
		{"tei-rerank", `{"query": "q \"x\"", "texts": ["a", "b"], "return_text": false}`, "/rerank"},
		{"cohere-rerank", `{"model": "m", "query": "q \"x\"", "documents": ["a", "b"]}`, "/v2/rerank"},
		{"vllm-classify", `{"input": "q \"x\"", "model": "m"}`, "/classify"},
	} {
		c1, err := New(c.be, "http://h:1", Options{}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(c1.Body(in)); got != c.want {
			t.Errorf("%s body %s\nwant %s", c.be, got, c.want)
		}
		if c1.URL() != "http://h:1"+c.path {
			t.Errorf("%s URL %s", c.be, c1.URL())
		}
		withExtra := *in
		withExtra.Extra = extra
		if got := string(c1.Body(&withExtra)); !strings.HasSuffix(got, `, "top_n": 2}`) {
			t.Errorf("%s body with extra %s", c.be, got)
		}
	}
}

// A reply is read as done only when it holds its list of scores.
func TestRerankReplies(t *testing.T) {
	for _, c := range []struct {
		proto *protocol
		doc   string
		ok    bool
	}{
		{protoRerankVLLM, `{"id":"r","results":[{"index":0,"relevance_score":0.5}],"usage":{"total_tokens":3}}`, true},
		{protoRerankVLLM, `{"id":"r","results":[]}`, false},
		{protoRerankVLLM, `{"error":{"message":"bad"}}`, false},
		{protoRerankSGLang, `[{"score":0.9,"document":null,"index":0,"meta_info":{"id":"x"}}]`, true},
		{protoRerankSGLang, `{"results":[{"index":0}]}`, false},
		{protoScore, `{"data":[{"index":0,"object":"score","score":0.1}]}`, true},
		{protoScore, `{"results":[{"index":0}]}`, false},
		{protoRerankTEI, `[{"index":0,"score":0.9}]`, true},
		{protoRerankTEI, `{"error":"model overloaded","error_type":"Overloaded"}`, false},
		{protoRerankTEI, `not json`, false},
		{protoRerankCohere, `{"id":"c","results":[{"index":1,"relevance_score":0.2}],"meta":{"api_version":{"version":"2"}}}`, true},
		{protoRerankCohere, `{"id":"c","results":[]}`, false},
		{protoClassify, `{"id":"classify-1","object":"list","created":1,"model":"m","data":[{"index":0,"label":"LABEL_0","probs":[0.7,0.3],"num_classes":2}],"usage":{"prompt_tokens":3,"total_tokens":3,"completion_tokens":0}}`, true},
		{protoClassify, `{"object":"list","data":[]}`, false},
		{protoClassify, `{"error":{"message":"bad input"}}`, false},
	} {
		err := c.proto.whole(nil, []byte(c.doc), time.Time{})
		if (err == nil) != c.ok {
			t.Errorf("%s %s: %v", c.proto.name, c.doc, err)
		}
	}
}
