package sim

import (
	"testing"
)

// The three APIs answer in their servers' shapes, one score per document,
// the same score for the same pair; the engine prefilled every pair (the
// query once per document); bad bodies are refused with the field named.
func TestRerankFormats(t *testing.T) {
	s, url := newTestServer(t, nil)
	type scored struct {
		Index int     `json:"index"`
		Score float64 `json:"score"`
		Rel   float64 `json:"relevance_score"`
	}
	type usage struct {
		PromptTokens int `json:"prompt_tokens"`
	}
	vllm := post(t, url+"/v1/rerank", `{"model":"benchserve-sim","query":"a b","documents":["c","d e","c"]}`)
	v := decode[struct {
		Results []scored
		Usage   usage
	}](t, vllm.body)
	qa, qb := s.tok.Encode("a b", true), s.tok.Encode("c", true)
	pair := len(qa) + len(qb)
	if vllm.status != 200 || len(v.Results) != 3 || v.Results[0].Rel != v.Results[2].Rel || v.Results[0].Rel == v.Results[1].Rel {
		t.Errorf("/v1/rerank: %d %s", vllm.status, vllm.body)
	}
	if want := 2*pair + len(qa) + len(s.tok.Encode("d e", true)); v.Usage.PromptTokens != want {
		t.Errorf("/v1/rerank prefilled %d tokens, want the pairs' %d", v.Usage.PromptTokens, want)
	}
	// vLLM serves its body at /rerank too; TEI's has texts.
	if got := post(t, url+"/rerank", `{"query":"a b","documents":["c"]}`); got.status != 200 || len(decode[struct{ Results []scored }](t, got.body).Results) != 1 {
		t.Errorf("/rerank, vLLM's body: %d %s", got.status, got.body)
	}
	sg := post(t, url+"/v1/rerank", `{"query":"a b","documents":["c","d e"],"return_documents":false}`)
	if l := decode[[]scored](t, sg.body); sg.status != 200 || len(l) != 2 || l[0].Score != v.Results[0].Rel || l[1].Index != 1 {
		t.Errorf("/v1/rerank, SGLang's body: %d %s", sg.status, sg.body)
	}
	tei := post(t, url+"/rerank", `{"query":"a b","texts":["c","d e","c"],"return_text":false}`)
	if l := decode[[]scored](t, tei.body); tei.status != 200 || len(l) != 3 || l[0].Score != v.Results[0].Rel || l[2].Index != 2 {
		t.Errorf("/rerank, TEI's body: %d %s", tei.status, tei.body)
	}
	score := post(t, url+"/score", `{"model":"benchserve-sim","text_1":"a b","text_2":["c","d e"]}`)
	sc := decode[struct {
		Object string
		Data   []scored
	}](t, score.body)
	if score.status != 200 || sc.Object != "list" || len(sc.Data) != 2 || sc.Data[0].Score != v.Results[0].Rel {
		t.Errorf("/score: %d %s", score.status, score.body)
	}
	for _, c := range []struct{ path, body, msg string }{
		{"/v1/rerank", `{"documents":["c"]}`, "query is required"},
		{"/v1/rerank", `{"query":"a","documents":[]}`, "documents must not be empty"},
		{"/v1/rerank", `{"query":["a","b"],"documents":["c"]}`, "query must be one string"},
		{"/score", `{"text_1":"a","text_2":5}`, "text_2 must be a string or a list of strings"},
	} {
		got := post(t, url+c.path, c.body)
		e := decode[struct {
			Error struct{ Message string } `json:"error"`
		}](t, got.body)
		if got.status != 400 || e.Error.Message != c.msg {
			t.Errorf("%s %s: %d %q, want %q", c.path, c.body, got.status, e.Error.Message, c.msg)
		}
	}
}
