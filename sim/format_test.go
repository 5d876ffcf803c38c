package sim

import (
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"benchserve/tokenizer"
)

// TestOpenAIRepliesMatchFixtures sends each fixture's own request body and
// compares the reply with the recorded one: status, Content-Type, and the
// shape of every JSON document (keys in order, value types) in the order
// the chunks came, [DONE] included.
func TestOpenAIRepliesMatchFixtures(t *testing.T) {
	_, url := newTestServer(t, func(c *Config) {
		c.Model = "fake-model" // the fixtures' model
		c.ContextLength = 4096
	})
	for _, c := range []struct{ name, path string }{
		{"completions-stream", "/v1/completions"},
		{"completions-stream-usage", "/v1/completions"},
		{"completions-stream-length", "/v1/completions"},
		{"completions-nostream", "/v1/completions"},
		{"chat-stream", "/v1/chat/completions"},
		{"chat-stream-usage", "/v1/chat/completions"},
		{"chat-nostream", "/v1/chat/completions"},
		{"embeddings", "/v1/embeddings"},
		{"error-unknown-model", "/v1/completions"},
		{"error-malformed-json", "/v1/completions"},
		{"error-max-tokens-over-context", "/v1/completions"},
		{"models", "/v1/models"},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := loadFixture(t, c.name)
			var got reply
			if body, err := os.ReadFile(filepath.Join("testdata", "wire", c.name, "request.json")); err == nil {
				got = post(t, url+c.path, string(body))
			} else {
				got = do(t, http.MethodGet, url+c.path, "")
			}
			compareReply(t, got, want)
		})
	}
}

func compareReply(t *testing.T, got reply, want fixture) {
	t.Helper()
	if got.status != want.status {
		t.Errorf("status %d, want %d: %s", got.status, want.status, got.body)
	}
	ct := want.header.Get("Content-Type")
	if g := got.header.Get("Content-Type"); g != ct {
		t.Errorf("Content-Type %q, want %q", g, ct)
	}
	if ct == "text/event-stream" {
		g, w := streamShape(t, events(t, got.body)), streamShape(t, events(t, want.body))
		if !slices.Equal(g, w) {
			t.Errorf("stream shape:\n got %s\nwant %s", strings.Join(g, "\n     "), strings.Join(w, "\n     "))
		}
		return
	}
	if g, w := shape(t, string(got.body)), shape(t, string(want.body)); g != w {
		t.Errorf("shape:\n got %s\nwant %s", g, w)
	}
	if got.status != http.StatusOK && string(got.body) != string(want.body) {
		t.Errorf("error body:\n got %s\nwant %s", got.body, want.body)
	}
}

func TestAPIKey(t *testing.T) {
	_, url := newTestServer(t, func(c *Config) { c.APIKey = "s3cret" })
	want := loadFixture(t, "failure-invalid-api-key-chat-stream")
	body := `{"messages":[{"role":"user","content":"hi"}],"max_tokens":2,"stream":true}`
	for _, auth := range []string{"", "s3cret", "Bearer wrong"} {
		got := do(t, http.MethodPost, url+"/v1/chat/completions", body, "Authorization", auth)
		if got.status != http.StatusUnauthorized || shape(t, string(got.body)) != shape(t, string(want.body)) {
			t.Errorf("Authorization %q: %d %s", auth, got.status, got.body)
		}
	}
	for _, p := range []string{"/v1/chat/completions", "/generate", "/metrics", "/sim/truth", "/v1/models"} {
		method, b := http.MethodGet, ""
		if p == "/v1/chat/completions" || p == "/generate" {
			method, b = http.MethodPost, `{"text":"hi","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`
		}
		if got := do(t, method, url+p, b, "Authorization", "Bearer s3cret"); got.status != http.StatusOK {
			t.Errorf("%s with the key: %d %s", p, got.status, got.body)
		}
		if got := do(t, method, url+p, b); got.status != http.StatusUnauthorized {
			t.Errorf("%s without the key: %d", p, got.status)
		}
	}
	if got := do(t, http.MethodGet, url+"/health", ""); got.status != http.StatusOK {
		t.Errorf("/health without the key: %d", got.status)
	}
}

// nativeChunk is one /generate document.
type nativeChunk struct {
	Text      string `json:"text"`
	OutputIDs []int  `json:"output_ids"`
	Meta      struct {
		ID               string          `json:"id"`
		FinishReason     *map[string]any `json:"finish_reason"`
		PromptTokens     int             `json:"prompt_tokens"`
		CompletionTokens int             `json:"completion_tokens"`
		CachedTokens     int             `json:"cached_tokens"`
		SpecAcceptLength *float64        `json:"spec_accept_length"`
		SpecVerifyCt     *int            `json:"spec_verify_ct"`
		E2ELatency       *float64        `json:"e2e_latency"`
	} `json:"meta_info"`
}

func TestNativeGenerateStream(t *testing.T) {
	_, url := newTestServer(t, func(c *Config) { c.SpeculativeAcceptLength = 2.5 })
	got := post(t, url+"/generate", `{"text":"Say hello","sampling_params":{"temperature":0.0,"max_new_tokens":40,"ignore_eos":true},"stream":true}`)
	if got.status != 200 || got.header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("%d %q", got.status, got.header.Get("Content-Type"))
	}
	evs := events(t, got.body)
	if evs[len(evs)-1] != "[DONE]" {
		t.Fatalf("last event %q, want [DONE]", evs[len(evs)-1])
	}
	evs = evs[:len(evs)-1]
	progress, multi := "", false
	for i, ev := range evs {
		if s := shape(t, ev); s != nativeShape(i == len(evs)-1) {
			t.Errorf("chunk %d shape %s", i, s)
		}
		c := decode[nativeChunk](t, []byte(ev))
		if !strings.HasPrefix(c.Text, progress) || len(c.Text) <= len(progress) {
			t.Errorf("chunk %d text %q does not extend %q (text is cumulative)", i, c.Text, progress)
		}
		progress = c.Text
		if c.Meta.CompletionTokens != len(c.OutputIDs) || c.Meta.ID != got.header.Get("X-Request-Id") || c.Meta.PromptTokens != 2 {
			t.Errorf("chunk %d meta %+v, %d ids", i, c.Meta, len(c.OutputIDs))
		}
		if i > 0 && c.Meta.CompletionTokens-decode[nativeChunk](t, []byte(evs[i-1])).Meta.CompletionTokens > 1 {
			multi = true
		}
		last := i == len(evs)-1
		if last != (c.Meta.FinishReason != nil) {
			t.Errorf("chunk %d finish_reason %v", i, c.Meta.FinishReason)
		}
		if last {
			if fr := *c.Meta.FinishReason; fr["type"] != "length" || fr["length"] != 40.0 || c.Meta.CompletionTokens != 40 {
				t.Errorf("finish %v after %d tokens", fr, c.Meta.CompletionTokens)
			}
			if *c.Meta.SpecAcceptLength != 40/float64(*c.Meta.SpecVerifyCt) {
				t.Errorf("spec_accept_length %v with %d verify steps", *c.Meta.SpecAcceptLength, *c.Meta.SpecVerifyCt)
			}
		}
	}
	if !multi {
		t.Error("speculative decoding gave no chunk of several tokens")
	}
}

// nativeShape is SGLang's /generate document, from tokenizer_manager's
// _handle_batch_output: meta_info gains the spec figures and e2e_latency
// when the request finishes.
func nativeShape(last bool) string {
	head := "{text:s,output_ids:[n],meta_info:{id:s,finish_reason:"
	tailS := ",prompt_tokens:n,weight_version:s,total_retractions:n,completion_tokens:n,cached_tokens:n"
	if !last {
		return head + "null" + tailS + "}}"
	}
	return head + "{type:s,length:n}" + tailS + ",spec_accept_rate:n,spec_accept_length:n,spec_verify_ct:n,e2e_latency:n}}"
}

func TestNativeGenerateWhole(t *testing.T) {
	_, url := newTestServer(t, nil)
	got := post(t, url+"/generate", `{"input_ids":[1,2,3,4,5],"sampling_params":{"max_new_tokens":7,"ignore_eos":true}}`)
	if got.status != 200 || got.header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %q %s", got.status, got.header.Get("Content-Type"), got.body)
	}
	c := decode[nativeChunk](t, got.body)
	if c.Meta.PromptTokens != 5 || c.Meta.CompletionTokens != 7 || len(c.OutputIDs) != 7 || c.Meta.E2ELatency == nil {
		t.Errorf("reply %s", got.body)
	}
	// Errors use SGLang's {"error":{"message"}}.
	for _, body := range []string{`{"sampling_params":{}}`, `{"text":["a",""]}`, `{"text":"x","sampling_params":{"max_new_tokens":-1}}`, `{"text":`,
		`{"text":"x","sampling_params":[{}]}`, `{"text":["a","b"],"sampling_params":[{}]}`} {
		got := post(t, url+"/generate", body)
		if got.status != 400 || shape(t, string(got.body)) != "{error:{message:s}}" {
			t.Errorf("%s: %d %s", body, got.status, got.body)
		}
	}
}

func TestNativeEarlyEOS(t *testing.T) {
	_, url := newTestServer(t, func(c *Config) { c.EOSProbability = 0.2 })
	stops := 0
	for range 20 {
		c := decode[nativeChunk](t, post(t, url+"/generate", `{"text":"x","sampling_params":{"max_new_tokens":100}}`).body)
		fr := *c.Meta.FinishReason
		if fr["type"] == "stop" {
			stops++
			if fr["matched"] != 199999.0 || c.Meta.CompletionTokens >= 100 {
				t.Errorf("stop: %v after %d tokens", fr, c.Meta.CompletionTokens)
			}
		}
	}
	if stops == 0 {
		t.Error("no request stopped early with eos probability 0.2 over 100 tokens")
	}
}

func TestTRTStream(t *testing.T) {
	_, url := newTestServer(t, nil)
	body := `{"accumulate_tokens":true,"text_input":"Say hello","temperature":0.000001,"top_p":1.0,"max_tokens":12,"stream":true,"min_length":12,"end_id":1048576}`
	got := post(t, url+"/v2/models/ensemble/generate_stream", body)
	if got.status != 200 || got.header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("%d %q", got.status, got.header.Get("Content-Type"))
	}
	text := ""
	evs := events(t, got.body)
	for _, ev := range evs {
		want := "{context_logits:n,cum_log_probs:n,generation_logits:n,model_name:s,model_version:s,output_log_probs:[n]," +
			"sequence_end:b,sequence_id:n,sequence_start:b,text_output:s}"
		if s := shape(t, ev); s != want {
			t.Fatalf("chunk shape %s (Triton sends no [DONE])", s)
		}
		c := decode[struct {
			Model string `json:"model_name"`
			Text  string `json:"text_output"`
		}](t, []byte(ev))
		if c.Model != "ensemble" || c.Text == "" {
			t.Errorf("chunk %s", ev)
		}
		text += c.Text
	}
	tok, _ := tokenizer.Load(DefaultTokenizer)
	if len(evs) != 12 || tok.Count(text) != 12 {
		t.Errorf("%d chunks, text of %d tokens, want 12", len(evs), tok.Count(text))
	}
	bad := post(t, url+"/v2/models/ensemble/generate_stream", `{"max_tokens":3}`)
	if bad.status != 400 || string(bad.body) != `{"error":"text_input is required"}` {
		t.Errorf("error %d %s", bad.status, bad.body)
	}
}

func TestTrussStreamIsCompletions(t *testing.T) {
	_, url := newTestServer(t, nil)
	got := post(t, url+"/v1/models/model:predict", `{"model":"any-name","prompt":"Say hello","temperature":0.0,"best_of":1,"max_tokens":8,"stream":true,"ignore_eos":true}`)
	want := loadFixture(t, "completions-stream")
	compareReply(t, got, want)
}

// TestTextRetokenizes checks that the generated text is exactly
// completion_tokens tokens in the tokenizer it was made for, so that the
// client's retokenized count agrees with the server's.
func TestTextRetokenizes(t *testing.T) {
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		tok, err := tokenizer.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		v, err := newVocab(tok)
		if err != nil {
			t.Fatal(err)
		}
		if len(v.text) != len(candidates) {
			t.Errorf("%s: %d of %d words are single tokens", name, len(v.text), len(candidates))
		}
		for n := range uint64(20) {
			seed := textSeed{seed: n, alt: n + 1, at: int(n)*40 - 1}
			text := string(v.appendText(nil, seed, 0, 500))
			if n := tok.Count(text); n != 500 {
				t.Errorf("%s seed %d: 500 words are %d tokens", name, seed, n)
			}
			if ids := tok.Encode(text, false); !slices.Equal(ids, v.appendIDs(nil, seed, 0, 500)) {
				t.Errorf("%s seed %d: the text does not encode to the ids reported", name, seed)
			}
		}
		_, url := newTestServer(t, func(c *Config) { c.Tokenizer = name })
		for _, body := range []string{
			`{"prompt":"Once upon a time, in a land far away,","max_tokens":300,"stream":true,"stream_options":{"include_usage":true}}`,
			`{"prompt":[1,2,3],"max_tokens":50,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true}`,
		} {
			text, usage := "", map[string]any{}
			for _, ev := range events(t, post(t, url+"/v1/completions", body).body) {
				if ev == "[DONE]" {
					continue
				}
				c := decode[struct {
					Choices []struct{ Text string } `json:"choices"`
					Usage   map[string]any          `json:"usage"`
				}](t, []byte(ev))
				if len(c.Choices) > 0 {
					text += c.Choices[0].Text
				}
				if c.Usage != nil {
					usage = c.Usage
				}
			}
			if n := tok.Count(text); float64(n) != usage["completion_tokens"] {
				t.Errorf("%s: text of %d tokens, completion_tokens %v", name, n, usage["completion_tokens"])
			}
		}
	}
}

func TestPromptTokensAsTheClientCounts(t *testing.T) {
	tok, _ := tokenizer.Load("o200k_base")
	_, url := newTestServer(t, nil)
	prompt := "The quick brown fox jumps over the lazy dog. Ünïcödé, emoji 🙂, tabs\tand\nnewlines."
	got := decode[struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}](t, post(t, url+"/v1/completions", fmt.Sprintf(`{"prompt":%s,"max_tokens":1}`, quoted(prompt))).body)
	if want := len(tok.Encode(prompt, true)); got.Usage.PromptTokens != want {
		t.Errorf("prompt_tokens %d, the client counts %d", got.Usage.PromptTokens, want)
	}
	chat := decode[struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}](t, post(t, url+"/v1/chat/completions", fmt.Sprintf(`{"messages":[{"role":"user","content":%s}],"max_tokens":1}`, quoted(prompt))).body)
	if chat.Usage.PromptTokens != got.Usage.PromptTokens {
		t.Errorf("chat prompt_tokens %d, completions %d: no template is applied", chat.Usage.PromptTokens, got.Usage.PromptTokens)
	}
}

func TestCachedTokensReported(t *testing.T) {
	_, url := newTestServer(t, nil)
	prompt := strings.Repeat("lorem ipsum dolor sit amet ", 40) // 200 tokens
	body := fmt.Sprintf(`{"prompt":%s,"max_tokens":2,"return_cached_tokens_details":true}`, quoted(prompt))
	type usage struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
			Details      struct {
				Cached int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
		Sglext struct {
			Details struct {
				Device int `json:"device"`
			} `json:"cached_tokens_details"`
		} `json:"sglext"`
	}
	first := decode[usage](t, post(t, url+"/v1/completions", body).body)
	second := decode[usage](t, post(t, url+"/v1/completions", body).body)
	n := first.Usage.PromptTokens
	if first.Usage.Details.Cached != 0 || second.Usage.Details.Cached != (n-1)/16*16 || second.Sglext.Details.Device != second.Usage.Details.Cached {
		t.Errorf("cached %d then %d (sglext %d) of %d prompt tokens", first.Usage.Details.Cached, second.Usage.Details.Cached, second.Sglext.Details.Device, n)
	}
	native := decode[nativeChunk](t, post(t, url+"/generate", fmt.Sprintf(`{"text":%s,"sampling_params":{"max_new_tokens":1}}`, quoted(prompt))).body)
	if native.Meta.CachedTokens != second.Usage.Details.Cached {
		t.Errorf("native cached_tokens %d", native.Meta.CachedTokens)
	}
	if got := post(t, url+"/flush_cache?timeout=5", ""); got.status != 200 {
		t.Fatalf("flush: %d %s", got.status, got.body)
	}
	if after := decode[usage](t, post(t, url+"/v1/completions", body).body); after.Usage.Details.Cached != 0 {
		t.Errorf("cached %d after /flush_cache", after.Usage.Details.Cached)
	}
	if got := post(t, url+"/reset_prefix_cache", ""); got.status != 200 {
		t.Fatalf("reset_prefix_cache: %d", got.status)
	}
	if after := decode[usage](t, post(t, url+"/v1/completions", body).body); after.Usage.Details.Cached != 0 {
		t.Errorf("cached %d after /reset_prefix_cache", after.Usage.Details.Cached)
	}
}

func TestChatReasoningContent(t *testing.T) {
	_, url := newTestServer(t, func(c *Config) { c.ReasoningTokens = 3 })
	evs := events(t, post(t, url+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":6,"ignore_eos":true,"stream":true}`).body)
	var kinds []string
	for _, ev := range evs[1 : len(evs)-2] { // between the role chunk and the finish chunk, [DONE]
		kinds = append(kinds, shape(t, ev)[strings.Index(shape(t, ev), "delta:"):])
	}
	want := slices.Repeat([]string{"delta:{reasoning_content:s}}]}"}, 3)
	want = append(want, slices.Repeat([]string{"delta:{content:s}}]}"}, 3)...)
	if !slices.Equal(kinds, want) {
		t.Errorf("deltas %v", kinds)
	}
	whole := post(t, url+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":6,"ignore_eos":true}`)
	if s := shape(t, string(whole.body)); !strings.Contains(s, "message:{role:s,reasoning_content:s,content:s}") {
		t.Errorf("message shape %s", s)
	}
}

func TestControlEndpoints(t *testing.T) {
	_, url := newTestServer(t, func(c *Config) { c.SpeculativeAcceptLength = 3; c.Tokenizer = "cl100k_base" })
	post(t, url+"/generate", `{"text":"x","sampling_params":{"max_new_tokens":200,"ignore_eos":true}}`)
	info := decode[struct {
		TokenizerPath string `json:"tokenizer_path"`
		ModelPath     string `json:"model_path"`
		IsGeneration  bool   `json:"is_generation"`
	}](t, do(t, http.MethodGet, url+"/model_info", "").body)
	if info.TokenizerPath != "cl100k_base" || info.ModelPath != DefaultModel || !info.IsGeneration {
		t.Errorf("/model_info %+v", info)
	}
	for _, p := range []string{"/server_info", "/get_server_info"} {
		si := decode[struct {
			InternalStates []map[string]any `json:"internal_states"`
			Version        string           `json:"version"`
		}](t, do(t, http.MethodGet, url+p, "").body)
		acc, _ := si.InternalStates[0]["avg_spec_accept_length"].(float64)
		if acc < 2.5 || acc > 3.5 || si.Version == "" {
			t.Errorf("%s: accept length %v, version %q", p, acc, si.Version)
		}
	}
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"POST", "/flush_cache", 200}, {"GET", "/flush_cache", 200}, {"POST", "/flush_cache?timeout=0.5", 200},
		{"POST", "/flush_cache?timeout=-1", 400}, {"PUT", "/flush_cache", 405},
		{"POST", "/start_profile", 200}, {"POST", "/stop_profile", 200}, {"GET", "/health", 200},
		{"GET", "/health_generate", 200}, {"GET", "/", 200}, {"GET", "/nope", 404}, {"GET", "/generate", 405},
	} {
		if got := do(t, c.method, url+c.path, ""); got.status != c.status {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, got.status, c.status)
		}
	}
}

func TestFlushCacheWaitsForIdle(t *testing.T) {
	_, url := newTestServer(t, func(c *Config) { c.DecodeBase = 2e6; c.EOSProbability = 0 }) // 2 ms steps
	done := make(chan reply)
	go func() {
		done <- post(t, url+"/v1/completions", `{"prompt":"x","max_tokens":100}`) // about 200 ms
	}()
	// Busy: without a timeout the flush is refused; with one it waits.
	var busy reply
	for range 100 {
		if busy = post(t, url+"/flush_cache", ""); busy.status == 400 {
			break
		}
	}
	if busy.status != 400 {
		t.Errorf("flush while busy: %d", busy.status)
	}
	if got := post(t, url+"/flush_cache?timeout=30", ""); got.status != 200 {
		t.Errorf("flush with a timeout: %d %s", got.status, got.body)
	}
	<-done
}

var metricLine = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_]+="[^"]*"(,[a-zA-Z_]+="[^"]*")*\})? [0-9.e+-]+$|^[a-zA-Z_:][a-zA-Z0-9_:]*\{[^}]*le="\+Inf"[^}]*\} [0-9]+$`)

func TestMetrics(t *testing.T) {
	_, url := newTestServer(t, nil)
	for range 3 {
		post(t, url+"/v1/completions", `{"prompt":"one two three","max_tokens":10,"ignore_eos":true,"stream":true}`)
	}
	got := do(t, http.MethodGet, url+"/metrics", "")
	want := loadFixture(t, "metrics")
	if ct := got.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}
	values := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(got.body), "\n"), "\n") {
		if strings.HasPrefix(line, "# ") {
			continue
		}
		if !metricLine.MatchString(line) {
			t.Errorf("not a Prometheus sample: %q", line)
		}
		sp := strings.LastIndexByte(line, ' ')
		values[line[:sp]] = line[sp+1:]
	}
	// vLLM's names, as the fixture has them.
	for _, name := range []string{"vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:num_requests_running",
		"vllm:num_requests_waiting", "vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds", "vllm:e2e_request_latency_seconds"} {
		if !strings.Contains(string(want.body), "# TYPE "+name+" ") || !strings.Contains(string(got.body), "# TYPE "+name+" ") {
			t.Errorf("%s missing", name)
		}
	}
	lbl := `{model_name="benchserve-sim"}`
	for k, v := range map[string]string{
		"vllm:prompt_tokens_total" + lbl:                                                 "9",
		"vllm:generation_tokens_total" + lbl:                                             "30",
		"vllm:time_to_first_token_seconds_count" + lbl:                                   "3",
		"vllm:inter_token_latency_seconds_count" + lbl:                                   "27",
		`vllm:request_success_total{finish_reason="length",model_name="benchserve-sim"}`: "3",
		`vllm:time_to_first_token_seconds_bucket{model_name="benchserve-sim",le="+Inf"}`: "3",
		"vllm:num_requests_running" + lbl:                                                "0",
		"sglang:prompt_tokens_total" + lbl:                                               "9",
	} {
		if values[k] != v {
			t.Errorf("%s = %q, want %s", k, values[k], v)
		}
	}
}

// truthDoc is the GET /sim/truth schema (docs/sim.md).
type truthDoc struct {
	StartedAt   string  `json:"started_at"`
	StartedUnix float64 `json:"started_unix"`
	Now         float64 `json:"now"`
	Capacity    int     `json:"capacity"`
	Dropped     int     `json:"dropped"`
	Requests    []struct {
		ID               string       `json:"id"`
		Endpoint         string       `json:"endpoint"`
		Stream           bool         `json:"stream"`
		Arrival          float64      `json:"arrival"`
		Enqueued         float64      `json:"enqueued"`
		PrefillStart     float64      `json:"prefill_start"`
		PrefillEnd       float64      `json:"prefill_end"`
		FirstChunk       *float64     `json:"first_chunk"`
		FirstContent     *float64     `json:"first_content"`
		End              float64      `json:"end"`
		CancelledAt      *float64     `json:"cancelled_at"`
		QueueTime        float64      `json:"queue_time"`
		TTFT             *float64     `json:"ttft"`
		TTFO             *float64     `json:"ttfo"`
		PromptTokens     int          `json:"prompt_tokens"`
		CachedTokens     int          `json:"cached_tokens"`
		CompletionTokens int          `json:"completion_tokens"`
		ReasoningTokens  int          `json:"reasoning_tokens"`
		SpecVerifyCt     int          `json:"spec_verify_ct"`
		FinishReason     string       `json:"finish_reason"`
		Error            string       `json:"error"`
		Chunks           [][3]float64 `json:"chunks"`
	} `json:"requests"`
}

func TestTruth(t *testing.T) {
	_, url := newTestServer(t, func(c *Config) {
		c.DecodeBase, c.PrefillOverhead, c.TruthCapacity = 1e6, 2e6, 4 // 1 ms steps, 2 ms prefill
	})
	var ids []string
	var chunks []int
	for i, body := range []string{
		`{"prompt":"a b c","max_tokens":5,"ignore_eos":true,"stream":true}`,
		`{"prompt":"a b c","max_tokens":5,"ignore_eos":true}`,
		`{"messages":[{"role":"user","content":"a b c"}],"max_tokens":4,"ignore_eos":true,"stream":true}`,
		`{"text":"a b c","sampling_params":{"max_new_tokens":3,"ignore_eos":true},"stream":true}`,
		`{"text_input":"a b c","max_tokens":6,"min_length":6}`,
	} {
		path := []string{"/v1/completions", "/v1/completions", "/v1/chat/completions", "/generate", "/v2/models/ensemble/generate_stream"}[i]
		got := post(t, url+path, body)
		ids = append(ids, got.header.Get("X-Request-Id"))
		n := 1 // a whole reply is one chunk
		if strings.HasPrefix(got.header.Get("Content-Type"), "text/event-stream") {
			n = 0
			for _, ev := range events(t, got.body) {
				if strings.Contains(ev, `"text":" `) || strings.Contains(ev, `"content":" `) || strings.Contains(ev, `"text_output":" `) {
					n++
				}
			}
		}
		chunks = append(chunks, n)
	}
	if !slices.Equal(ids, []string{"cmpl-1", "cmpl-2", "chatcmpl-3", "gen-4", "trt-5"}) {
		t.Errorf("request ids %v", ids)
	}
	doc := decode[truthDoc](t, do(t, http.MethodGet, url+"/sim/truth", "").body)
	if doc.Capacity != 4 || doc.Dropped != 1 || len(doc.Requests) != 4 || doc.StartedUnix <= 0 || doc.Now <= 0 {
		t.Fatalf("capacity %d dropped %d kept %d", doc.Capacity, doc.Dropped, len(doc.Requests))
	}
	wantTokens := []int{5, 4, 3, 6}
	for i, r := range doc.Requests {
		if r.ID != ids[i+1] {
			t.Errorf("request %d is %s, want %s (oldest dropped first)", i, r.ID, ids[i+1])
		}
		if len(r.Chunks) != chunks[i+1] {
			t.Errorf("%s: %d chunks in the truth, the client saw %d", r.ID, len(r.Chunks), chunks[i+1])
		}
		sum := 0
		prev := r.Arrival
		for _, c := range r.Chunks {
			sum += int(c[1])
			if c[0] < prev || c[2] < 0 || c[2] > c[0]-prev {
				t.Errorf("%s: chunk %v after %v", r.ID, c, prev)
			}
			prev = c[0]
		}
		if sum != wantTokens[i] || r.CompletionTokens != wantTokens[i] || r.FinishReason != "length" || r.Error != "" {
			t.Errorf("%s: %d tokens in chunks, completion_tokens %d, %s %q", r.ID, sum, r.CompletionTokens, r.FinishReason, r.Error)
		}
		order := []float64{r.Arrival, r.Enqueued, r.PrefillStart, r.PrefillEnd, *r.FirstChunk, r.End}
		if !slices.IsSorted(order) {
			t.Errorf("%s: times out of order %v", r.ID, order)
		}
		if d := r.PrefillEnd - r.PrefillStart; d < 0.002-1e-9 {
			t.Errorf("%s: prefill took %v, under the 2 ms overhead", r.ID, d)
		}
		// No reasoning tokens: the first chunk is the first content.
		if r.TTFO == nil || *r.TTFO != *r.TTFT || *r.FirstContent != *r.FirstChunk || r.ReasoningTokens != 0 {
			t.Errorf("%s: ttfo %v, ttft %v, reasoning_tokens %d", r.ID, r.TTFO, *r.TTFT, r.ReasoningTokens)
		}
		if math.Abs(*r.TTFT-(*r.FirstChunk-r.Arrival)) > 2e-9 || r.Chunks[0][0] != *r.FirstChunk || r.Chunks[len(r.Chunks)-1][0] > r.End {
			t.Errorf("%s: ttft %v first %v", r.ID, *r.TTFT, *r.FirstChunk)
		}
		if r.PromptTokens != 3 {
			t.Errorf("%s: prompt_tokens %d", r.ID, r.PromptTokens)
		}
	}
	if got := post(t, url+"/sim/truth/reset", ""); got.status != 200 {
		t.Fatal(got.status)
	}
	if doc := decode[truthDoc](t, do(t, http.MethodGet, url+"/sim/truth", "").body); len(doc.Requests) != 0 || doc.Dropped != 0 {
		t.Errorf("after reset: %d requests, %d dropped", len(doc.Requests), doc.Dropped)
	}
}

func TestBadRequests(t *testing.T) {
	_, url := newTestServer(t, func(c *Config) { c.KVTokens = 1000 })
	for _, c := range []struct{ path, body, msg string }{
		{"/v1/completions", `{"prompt":"x","n":2}`, "n = 2 is not supported by the simulator (only 1)"},
		{"/v1/completions", `{"prompt":["a",""]}`, "the prompt is empty"},
		{"/v1/completions", `{"prompt":[]}`, "prompt array must contain at least one prompt"},
		{"/v1/completions", `{"prompt":""}`, "the prompt is empty"},
		{"/v1/completions", `{"prompt":"x","max_tokens":0}`, "max_tokens must be at least 1, got 0."},
		{"/v1/completions", `{"prompt":"x","max_tokens":2000}`, "the request needs 2001 KV-cache tokens (1 prompt + 2000 new) but the simulator's pool (--max-total-tokens) holds 1000"},
		{"/v1/chat/completions", `{"model":"benchserve-sim"}`, "messages is required"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":5}]}`, "messages[0].content must be a string or a list of parts"},
		{"/v1/embeddings", `{"input":null}`, "input is required"},
	} {
		got := post(t, url+c.path, c.body)
		e := decode[struct {
			Error struct{ Message string } `json:"error"`
		}](t, got.body)
		if got.status != 400 || e.Error.Message != c.msg {
			t.Errorf("%s %s: %d %q, want %q", c.path, c.body, got.status, e.Error.Message, c.msg)
		}
	}
	// LoRA names are accepted with lora_path, as benchserve sends them.
	if got := post(t, url+"/v1/completions", `{"model":"my-adapter","lora_path":"my-adapter","prompt":"x","max_tokens":1}`); got.status != 200 {
		t.Errorf("LoRA request: %d %s", got.status, got.body)
	}
	if got := post(t, url+"/v1/embeddings", `{"input":["a","b c"]}`); got.status != 200 ||
		len(decode[struct{ Data []any }](t, got.body).Data) != 2 {
		t.Errorf("two embedding inputs: %d %s", got.status, got.body)
	}
}
