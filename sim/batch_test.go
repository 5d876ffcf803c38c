package sim

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// batchChunk is a /generate chunk of a batch: SGLang's object plus index.
type batchChunk struct {
	nativeChunk
	Index *int `json:"index"`
}

// batchTruth is a /sim/truth record of a batch's prompt.
type batchTruth struct {
	ID               string       `json:"id"`
	Batch            string       `json:"batch"`
	Index            *int         `json:"index"`
	Arrival          float64      `json:"arrival"`
	FirstChunk       *float64     `json:"first_chunk"`
	End              *float64     `json:"end"`
	CompletionTokens int          `json:"completion_tokens"`
	PromptTokens     int          `json:"prompt_tokens"`
	FinishReason     string       `json:"finish_reason"`
	Error            string       `json:"error"`
	Chunks           [][3]float64 `json:"chunks"`
}

func truthOf(t *testing.T, url string) []batchTruth {
	t.Helper()
	return decode[struct {
		Requests []batchTruth `json:"requests"`
	}](t, do(t, http.MethodGet, url+"/sim/truth", "").body).Requests
}

// TestBatchGenerateStream sends a batch of four prompts, three that end
// at their own max_new_tokens and one at an early EOS, in lockstep and on
// the engine's clock.
func TestBatchGenerateStream(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Config)
	}{
		{"lockstep", func(c *Config) { c.EOSProbability = 0.5 }},
		{"engine", func(c *Config) { c.EOSProbability, c.DecodeBase, c.PrefillOverhead = 0.5, 1e6, 1e6 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, url := newTestServer(t, c.edit)
			got := post(t, url+"/generate", `{"sampling_params":[{"max_new_tokens":3,"ignore_eos":true},{"max_new_tokens":5,"ignore_eos":true},`+
				`{"max_new_tokens":8,"ignore_eos":true,"json_schema":null},{"max_new_tokens":60}],"return_logprob":false,"stream":true,`+
				`"parallel_batch":true,"input_ids":[[1,2,3],[4,5,6,7],[8,9],[10]],"lora_path":["a","b","c","d"],`+
				`"bootstrap_host":"2.2.2.2","bootstrap_room":0,"skip_cache_insert":true}`)
			if got.status != 200 || got.header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
				t.Fatalf("%d %q %s", got.status, got.header.Get("Content-Type"), got.body)
			}
			batchID := got.header.Get("X-Request-Id")
			evs := events(t, got.body)
			if evs[len(evs)-1] != "[DONE]" || slices.Index(evs, "[DONE]") != len(evs)-1 {
				t.Fatalf("[DONE] is not once and last: %v", evs)
			}
			evs = evs[:len(evs)-1]
			var last [4]*batchChunk
			var chunks [4]int
			for _, ev := range evs {
				ch := decode[batchChunk](t, []byte(ev))
				if ch.Index == nil || *ch.Index < 0 || *ch.Index > 3 {
					t.Fatalf("chunk without a valid index: %s", ev)
				}
				i := *ch.Index
				if want := nativeBatchShape(ch.Meta.FinishReason != nil, i == 3); shape(t, ev) != want {
					t.Errorf("shape %s, want %s", shape(t, ev), want)
				}
				if p := last[i]; p != nil && (p.Meta.FinishReason != nil || ch.Meta.CompletionTokens <= p.Meta.CompletionTokens ||
					!strings.HasPrefix(ch.Text, p.Text)) {
					t.Errorf("prompt %d: chunk %s after %+v", i, ev, p.Meta)
				}
				if ch.Meta.ID != fmt.Sprintf("%s-%d", batchID, i) || ch.Meta.CompletionTokens != len(ch.OutputIDs) ||
					ch.Meta.PromptTokens != []int{3, 4, 2, 1}[i] {
					t.Errorf("prompt %d: meta %+v", i, ch.Meta)
				}
				last[i] = &ch
				chunks[i]++
			}
			for i, want := range []int{3, 5, 8} {
				fr := last[i].Meta.FinishReason
				if fr == nil || (*fr)["type"] != "length" || (*fr)["length"] != float64(want) || last[i].Meta.CompletionTokens != want {
					t.Errorf("prompt %d ends with %v after %d tokens, want length %d", i, fr, last[i].Meta.CompletionTokens, want)
				}
			}
			if fr := last[3].Meta.FinishReason; fr == nil || (*fr)["type"] != "stop" || (*fr)["matched"] != float64(s.eosID()) {
				t.Errorf("prompt 3 ends with %v", fr)
			}

			recs := truthOf(t, url)
			if len(recs) != 4 {
				t.Fatalf("%d truth records", len(recs))
			}
			slices.SortFunc(recs, func(a, b batchTruth) int { return *a.Index - *b.Index })
			var lastEnd float64
			for i, r := range recs {
				sum := 0
				for _, c := range r.Chunks {
					sum += int(c[1])
				}
				if r.Batch != batchID || *r.Index != i || r.ID != fmt.Sprintf("%s-%d", batchID, i) || r.Arrival != recs[0].Arrival ||
					r.CompletionTokens != last[i].Meta.CompletionTokens || sum != r.CompletionTokens || len(r.Chunks) != chunks[i] ||
					r.Error != "" || r.End == nil || r.Chunks[len(r.Chunks)-1][0] != *r.End || r.Chunks[0][0] != *r.FirstChunk {
					t.Errorf("record %d: %+v", i, r)
				}
				lastEnd = max(lastEnd, *r.End)
			}
			// One write per engine step: every prompt's first token came in
			// one prefill step, and each step's tokens share a write.
			longest := recs[slices.IndexFunc(recs, func(r batchTruth) bool { return *r.End == lastEnd })]
			for _, r := range recs {
				if *r.FirstChunk != *recs[0].FirstChunk {
					t.Errorf("%s: first chunk at %v, prompt 0's at %v", r.ID, *r.FirstChunk, *recs[0].FirstChunk)
				}
				for _, c := range r.Chunks {
					if !slices.ContainsFunc(longest.Chunks, func(l [3]float64) bool { return l[0] == c[0] }) {
						t.Errorf("%s: chunk %v is in no write of %s", r.ID, c, longest.ID)
					}
				}
			}
			// The engine is idle again: its cache can be flushed.
			if got := post(t, url+"/flush_cache", ""); got.status != 200 {
				t.Errorf("flush after the batch: %d %s", got.status, got.body)
			}
		})
	}
}

// nativeBatchShape is a batch chunk: SGLang's object (no speculative
// decoding) with index last.
func nativeBatchShape(last, stop bool) string {
	head := "{text:s,output_ids:[n],meta_info:{id:s,finish_reason:"
	tailS := ",prompt_tokens:n,weight_version:s,total_retractions:n,completion_tokens:n,cached_tokens:n"
	switch {
	case !last:
		return head + "null" + tailS + "},index:n}"
	case stop:
		return head + "{type:s,matched:n}" + tailS + ",e2e_latency:n},index:n}"
	}
	return head + "{type:s,length:n}" + tailS + ",e2e_latency:n},index:n}"
}

func TestBatchOfOne(t *testing.T) {
	_, url := newTestServer(t, nil)
	got := post(t, url+"/generate", `{"input_ids":[[1,2,3]],"sampling_params":{"max_new_tokens":4,"ignore_eos":true},"stream":true}`)
	evs := events(t, got.body)
	if len(evs) != 5 || evs[4] != "[DONE]" {
		t.Fatalf("events %v", evs)
	}
	for k, ev := range evs[:4] {
		ch := decode[batchChunk](t, []byte(ev))
		if ch.Index == nil || *ch.Index != 0 || ch.Meta.CompletionTokens != k+1 || ch.Meta.ID != got.header.Get("X-Request-Id")+"-0" {
			t.Errorf("chunk %d: %s", k, ev)
		}
	}
	// A text list is a batch too; one prompt alone is not.
	if ev := events(t, post(t, url+"/generate", `{"text":["hi"],"sampling_params":{"max_new_tokens":1},"stream":true}`).body); !strings.HasSuffix(ev[0], `,"index":0}`) {
		t.Errorf("text batch of one: %s", ev[0])
	}
	if ev := events(t, post(t, url+"/generate", `{"input_ids":[1,2],"sampling_params":{"max_new_tokens":1},"stream":true}`).body); strings.Contains(ev[0], `"index"`) {
		t.Errorf("one prompt: %s", ev[0])
	}
	recs := truthOf(t, url)
	if len(recs) != 3 || recs[0].Batch == "" || recs[1].Batch == "" || recs[2].Batch != "" || recs[2].Index != nil {
		t.Errorf("records %+v", recs)
	}
}

// TestBatchWhole is the cache warmup of bench_one_batch_server: a batch,
// not streamed, answered with a list.
func TestBatchWhole(t *testing.T) {
	_, url := newTestServer(t, nil)
	got := post(t, url+"/generate", `{"input_ids":[[1,2,3],[4,5,6,7,8]],"sampling_params":{"temperature":0.0,"max_new_tokens":1,"ignore_eos":true},"stream":false}`)
	if got.status != 200 || got.header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", got.status, got.body)
	}
	objs := decode[[]nativeChunk](t, got.body)
	if len(objs) != 2 || shape(t, string(got.body)) != "[{text:s,output_ids:[n],meta_info:{id:s,finish_reason:{type:s,length:n},"+
		"prompt_tokens:n,weight_version:s,total_retractions:n,completion_tokens:n,cached_tokens:n,e2e_latency:n}}]" {
		t.Fatalf("reply %s", got.body)
	}
	for i, o := range objs {
		if o.Meta.PromptTokens != []int{3, 5}[i] || o.Meta.CompletionTokens != 1 || o.Meta.ID != fmt.Sprintf("%s-%d", got.header.Get("X-Request-Id"), i) {
			t.Errorf("prompt %d: %+v", i, o.Meta)
		}
	}
	recs := truthOf(t, url)
	if len(recs) != 2 || recs[0].End == nil || recs[1].End == nil || *recs[0].End != *recs[1].End || len(recs[0].Chunks) != 1 {
		t.Errorf("records %+v", recs)
	}
}

func TestBatchStreamInterval(t *testing.T) {
	_, url := newTestServer(t, nil) // lockstep: one token per prompt per write
	got := post(t, url+"/generate", `{"input_ids":[[1],[2]],"sampling_params":[{"max_new_tokens":10,"ignore_eos":true,"stream_interval":4},`+
		`{"max_new_tokens":3,"ignore_eos":true,"stream_interval":4}],"stream":true}`)
	counts := map[int][]int{}
	for _, ev := range events(t, got.body) {
		if ev != "[DONE]" {
			ch := decode[batchChunk](t, []byte(ev))
			counts[*ch.Index] = append(counts[*ch.Index], ch.Meta.CompletionTokens)
		}
	}
	// SGLang streams at the 1st, 5th, 9th... token and at the end.
	if !slices.Equal(counts[0], []int{1, 5, 9, 10}) || !slices.Equal(counts[1], []int{1, 3}) {
		t.Errorf("completion_tokens per chunk %v", counts)
	}
}

func TestBatchCompletions(t *testing.T) {
	_, url := newTestServer(t, nil)
	got := post(t, url+"/v1/completions", `{"model":"benchserve-sim","prompt":[[1,2],[3,4,5],[6]],"max_tokens":4,"temperature":0.0,`+
		`"stream":true,"ignore_eos":true,"stream_options":{"include_usage":true}}`)
	evs := events(t, got.body)
	if evs[len(evs)-1] != "[DONE]" {
		t.Fatalf("events %v", evs)
	}
	id := got.header.Get("X-Request-Id")
	text := map[int]int{}
	finished := map[int]string{}
	for _, ev := range evs[:len(evs)-2] {
		c := decode[struct {
			ID      string
			Choices []struct {
				Index        int
				Text         string
				FinishReason *string `json:"finish_reason"`
			}
		}](t, []byte(ev))
		if c.ID != id || len(c.Choices) != 1 {
			t.Fatalf("chunk %s", ev)
		}
		ch := c.Choices[0]
		if _, done := finished[ch.Index]; done {
			t.Errorf("prompt %d: a chunk after its finish: %s", ch.Index, ev)
		}
		if ch.FinishReason != nil {
			finished[ch.Index] = *ch.FinishReason
		} else {
			text[ch.Index]++
		}
	}
	if len(finished) != 3 || text[0] != 4 || text[1] != 4 || text[2] != 4 || finished[2] != "length" {
		t.Errorf("content chunks %v, finishes %v", text, finished)
	}
	usage := decode[struct {
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}](t, []byte(evs[len(evs)-2]))
	if usage.Usage.PromptTokens != 6 || usage.Usage.CompletionTokens != 12 {
		t.Errorf("usage %s", evs[len(evs)-2])
	}
	whole := post(t, url+"/v1/completions", `{"prompt":["a b","c"],"max_tokens":2,"ignore_eos":true}`)
	if s := shape(t, string(whole.body)); s != "{id:s,model:s,object:s,created:n,usage:{prompt_tokens:n,completion_tokens:n,total_tokens:n,"+
		"prompt_tokens_details:{cached_tokens:n}},choices:[{index:n,finish_reason:s,text:s}]}" || !strings.Contains(string(whole.body), `"index":1`) {
		t.Errorf("whole reply %s", whole.body)
	}
	if recs := truthOf(t, url); len(recs) != 5 || recs[0].ID != id+"-0" || recs[2].Batch != id {
		t.Errorf("records %+v", recs)
	}
}

func TestBatchFaults(t *testing.T) {
	_, url := newTestServer(t, nil)
	body := `{"input_ids":[[1],[2]],"sampling_params":{"max_new_tokens":2},"stream":true}`
	if got := do(t, http.MethodPost, url+"/generate", body, FaultHeader, "500"); got.status != 500 {
		t.Errorf("500 fault: %d %s", got.status, got.body)
	}
	if got := do(t, http.MethodPost, url+"/generate", body, FaultHeader, "stall"); got.status != 400 {
		t.Errorf("stall on a batch: %d %s", got.status, got.body)
	}
	recs := truthOf(t, url)
	if len(recs) != 2 || recs[1].Error != "fault: 500 Internal Server Error" || *recs[1].Index != 1 {
		t.Errorf("records %+v", recs)
	}
}

func TestServerInfoForOneBatch(t *testing.T) {
	_, url := newTestServer(t, func(c *Config) { c.DecodeBase, c.MaxRunningRequests, c.KVTokens = 1e6, 64, 50000 })
	type info struct {
		TokenizerPath  string           `json:"tokenizer_path"`
		InternalStates []map[string]any `json:"internal_states"`
	}
	si := decode[info](t, do(t, http.MethodGet, url+"/server_info", "").body)
	st := si.InternalStates[0]
	if si.TokenizerPath != DefaultTokenizer || st["dp_size"] != 1.0 || st["effective_max_running_requests_per_dp"] != 64.0 ||
		st["memory_usage"].(map[string]any)["token_capacity"] != 50000.0 || st["last_gen_throughput"] != 0.0 {
		t.Errorf("server info %+v", si)
	}
	// 100 decode steps of 1 ms for two prompts: logs at steps 40 and 80,
	// the second over 40 steps of 2 tokens.
	post(t, url+"/generate", `{"input_ids":[[1],[2]],"sampling_params":{"max_new_tokens":101,"ignore_eos":true},"stream":true}`)
	si = decode[info](t, do(t, http.MethodGet, url+"/server_info", "").body)
	if got := si.InternalStates[0]["last_gen_throughput"].(float64); math.Abs(got-2000) > 1e-6 {
		t.Errorf("last_gen_throughput %v, want 2000", got)
	}
}

func TestServerInfoPDRouter(t *testing.T) {
	_, url := newTestServer(t, func(c *Config) { c.PDRouter = true })
	si := decode[map[string]any](t, do(t, http.MethodGet, url+"/server_info", "").body)
	prefill, _ := si["prefill"].([]any)
	decodeW, _ := si["decode"].([]any)
	if si["router_manager"] != true || len(prefill) != 1 || len(decodeW) != 1 || si["internal_states"] != nil || si["tokenizer_path"] != nil ||
		prefill[0].(map[string]any)["tokenizer_path"] != DefaultTokenizer || prefill[0].(map[string]any)["disaggregation_mode"] != "prefill" {
		t.Errorf("server info %v", si)
	}
}

func TestMetricsCountBatches(t *testing.T) {
	_, url := newTestServer(t, nil)
	long := strings.Repeat("7,", 39) + "7" // 40 tokens: 32 cached the second time (pages of 16)
	post(t, url+"/generate", `{"input_ids":[[`+long+`],[4,5]],"sampling_params":{"max_new_tokens":1},"stream":false}`)
	post(t, url+"/generate", `{"input_ids":[[`+long+`],[4,5]],"sampling_params":{"max_new_tokens":1},"stream":true}`)
	body := string(do(t, http.MethodGet, url+"/metrics", "").body)
	for _, line := range []string{`sglang:prompt_tokens_total{model_name="benchserve-sim"} 84`, `sglang:cached_tokens_total{model_name="benchserve-sim"} 32`} {
		if !strings.Contains(body, "\n"+line+"\n") {
			t.Errorf("no line %q", line)
		}
	}
}

func TestLastGenThroughputInLockstep(t *testing.T) {
	_, url := newTestServer(t, nil)
	post(t, url+"/generate", `{"input_ids":[[1],[2]],"sampling_params":{"max_new_tokens":60,"ignore_eos":true},"stream":true}`)
	si := decode[struct {
		InternalStates []struct {
			LastGen float64 `json:"last_gen_throughput"`
		} `json:"internal_states"`
	}](t, do(t, http.MethodGet, url+"/server_info", "").body)
	if si.InternalStates[0].LastGen <= 0 {
		t.Errorf("last_gen_throughput %v after 118 self-driven steps", si.InternalStates[0].LastGen)
	}
}

// TestBatchClientGone: a client that leaves mid-stream aborts every prompt
// of the batch, and the engine is idle again.
func TestBatchClientGone(t *testing.T) {
	_, url := newTestServer(t, func(c *Config) { c.DecodeBase = 2e6 })
	resp, err := http.Post(url+"/generate", "application/json",
		strings.NewReader(`{"input_ids":[[1],[2]],"sampling_params":{"max_new_tokens":1000,"ignore_eos":true},"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var recs []batchTruth
	for deadline := time.Now().Add(5 * time.Second); len(recs) < 2 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		recs = truthOf(t, url)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	for _, r := range recs {
		if r.FinishReason != "abort" || r.Error == "" || r.End != nil || r.CompletionTokens >= 1000 {
			t.Errorf("record %+v", r)
		}
	}
	if got := post(t, url+"/flush_cache?timeout=5", ""); got.status != 200 {
		t.Errorf("flush: %d %s", got.status, got.body)
	}
}
