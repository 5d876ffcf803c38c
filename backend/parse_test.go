package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchserve/record"
	"benchserve/wire/http1"
)

// splitReader returns 1..max bytes per Read, at random.
type splitReader struct {
	data []byte
	rng  *rand.Rand
	max  int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(1+r.rng.IntN(r.max), len(r.data), len(p))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

func fixture(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func client(t testing.TB, backend string, o Options) *Client {
	t.Helper()
	c, err := New(backend, "http://127.0.0.1:1", o, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// parse runs a 200 response body through c's reader as Do does, with the
// body arriving in random pieces.
func parse(c *Client, body []byte, seed, outputLen, promptLen int) *record.Record {
	rec := &record.Record{PromptLen: promptLen, OutputLen: outputLen}
	r := &splitReader{data: body, rng: rand.New(rand.NewPCG(uint64(seed), 3)), max: 1 + seed%97}
	c.readBody(context.Background(), r, rec, time.Now(), outputLen)
	return rec
}

// want are the facts a test checks; a negative count is not checked.
type want struct {
	ok        bool
	text      string
	outputLen int
	promptLen int
	itl       int
	errHas    string
}

func check(t *testing.T, name string, rec *record.Record, w want) {
	t.Helper()
	if rec.Success != w.ok {
		t.Fatalf("%s: success %v, error %q", name, rec.Success, rec.Error)
	}
	if w.ok && rec.Error != "" || !w.ok && !strings.Contains(rec.Error, w.errHas) {
		t.Errorf("%s: error %q, want one containing %q", name, rec.Error, w.errHas)
	}
	if strings.ContainsAny(rec.Error, "\r\n") {
		t.Errorf("%s: error has a line break: %q", name, rec.Error)
	}
	if (rec.ErrorKind == "") != rec.Success {
		t.Errorf("%s: success %v with error kind %q", name, rec.Success, rec.ErrorKind)
	}
	if rec.Text != w.text {
		t.Errorf("%s: text %q, want %q", name, rec.Text, w.text)
	}
	if rec.OutputLen != w.outputLen {
		t.Errorf("%s: output len %d, want %d", name, rec.OutputLen, w.outputLen)
	}
	if rec.PromptLen != w.promptLen {
		t.Errorf("%s: prompt len %d, want %d", name, rec.PromptLen, w.promptLen)
	}
	if w.itl >= 0 && rec.Gaps.Len() != w.itl {
		t.Errorf("%s: %d ITL entries, want %d", name, rec.Gaps.Len(), w.itl)
	}
	if rec.ChunkLens != nil && len(rec.ChunkLens) != rec.Gaps.Len() {
		t.Errorf("%s: %d chunk lengths for %d ITL entries", name, len(rec.ChunkLens), rec.Gaps.Len())
	}
	if w.ok && rec.Latency < rec.TTFT {
		t.Errorf("%s: latency %v < TTFT %v", name, rec.Latency, rec.TTFT)
	}
	for _, x := range rec.Gaps.Seconds() {
		if x < 0 || math.IsNaN(x) {
			t.Errorf("%s: bad ITL %v", name, x)
		}
	}
}

// streamTexts decodes an OpenAI stream with encoding/json, independently of
// the parser under test: the non-empty text pieces, in order.
func streamTexts(t *testing.T, body []byte) []string {
	var out []string
	for _, line := range strings.Split(string(body), "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "data: ")
		if line == "" || line == "[DONE]" {
			continue
		}
		var d struct {
			Choices []struct {
				Text  *string `json:"text"`
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("fixture line %q: %v", line, err)
		}
		if len(d.Choices) == 0 {
			continue
		}
		s := d.Choices[0].Delta.Content
		if d.Choices[0].Text != nil {
			s = *d.Choices[0].Text
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// sglangName is the sglang backend that reads the same wire format as an
// OpenAI backend and keeps chunk lengths.
var sglangName = map[string]string{"vllm": "sglang-oai", "vllm-chat": "sglang-oai-chat",
	"sglang-oai": "sglang-oai", "sglang-oai-chat": "sglang-oai-chat"}

func TestWireFixtures(t *testing.T) {
	stream := Options{Stream: true, IgnoreEOS: true}
	whole := Options{IgnoreEOS: true}
	const req, pl = 99, 1000 // requested output length, dataset prompt length
	cases := []struct {
		fixture, backend string
		opt              Options
		w                want
	}{
		// No usage at all: the requested length stands.
		{"llm-d-inference-sim/completions-stream", "sglang-oai", stream, want{true, "Testing, ", req, pl, 1, ""}},
		// usage comes in a last "choices": [] chunk, which the reference fails on.
		{"llm-d-inference-sim/completions-stream-usage", "vllm", stream, want{true, "I am ", 2, 2, 1, ""}},
		{"llm-d-inference-sim/completions-stream-length", "lmdeploy", stream, want{true, "The temperature here is twenty-five degrees ", 8, 2, 7, ""}},
		// n=2: choices[0] of each chunk, whatever its index.
		{"llm-d-inference-sim/completions-stream-n2", "vllm", stream, want{true, "I Alas, am poor Yorick! I knew him", 10, 2, 9, ""}},
		{"llm-d-inference-sim/chat-stream", "sglang-oai-chat", stream, want{true, "I am ", req, pl, 1, ""}},
		{"llm-d-inference-sim/chat-stream-usage", "vllm-chat", stream, want{true, "I am fine, ", 4, 7, 3, ""}},
		{"llm-d-inference-sim/error-missing-messages-stream", "vllm-chat", stream, want{true, "The temperature here is twenty-five degrees ", req, pl, 7, ""}},
		{"llm-d-inference-sim/chat-nostream", "lmdeploy-chat", whole, want{true, "Today is ", 2, 7, 0, ""}},
		{"llm-d-inference-sim/completions-nostream", "sglang-oai", whole, want{true, "The temperature here is twenty-", 6, 2, 0, ""}},
		{"llm-d-inference-sim/embeddings", "vllm-embedding", stream, want{true, "", 0, pl, 0, ""}},
		// An error object mid-stream fails the request with its message.
		{"llm-d-inference-sim/error-midstream-multiprompt-stream", "vllm", stream, want{false, "", 0, pl, 1,
			"This model's maximum context length is 4096 tokens. However, you requested 4108 tokens (4100 in the messages, 8 in the completion). Please reduce the length of the messages or completion"}},
		{"ollama/completions-stream", "vllm", stream, want{true, "", req, pl, 7, ""}},
		// Zero usage on every content chunk, the real figures at the end.
		{"ollama/completions-stream-usage", "vllm", stream, want{true, "", 8, 3, 7, ""}},
		{"ollama/chat-stream", "vllm-chat", stream, want{true, "", req, pl, 7, ""}},
		{"ollama/chat-stream-usage", "vllm-chat", stream, want{true, "", 8, 3, 7, ""}},
		{"ollama/chat-nostream", "vllm-chat", whole, want{true, "威میرConsumer 생산 evidentieu\u3000 \u3000 \u3000 \u3000/tasks", 8, 3, 0, ""}},
		{"ollama/completions-nostream", "vllm", whole, want{true, " apartTrial général п listaElect Opr ligne", 8, 3, 0, ""}},
		{"ollama/embeddings", "sglang-embedding", whole, want{true, "", 0, pl, 0, ""}},
		// Only an empty text chunk: no output, a failure (the reference counts it a success).
		{"ollama/error-missing-prompt-stream", "vllm", stream, want{false, "", 0, pl, 0, "the server answered 200 with no output: no chunk with content and no completion tokens in 2 data lines"}},
		// The runner died: the stream ends cleanly but without [DONE].
		{"ollama/error-midstream-runner-killed-completions-stream", "vllm", stream, want{false, "", 0, pl, -1, "without data: [DONE]"}},
		{"ollama/error-midstream-runner-killed-chat-stream", "vllm-chat", stream, want{false, "", 0, pl, -1, "without data: [DONE]"}},
	}
	for _, c := range cases {
		body := fixture(t, "wire/"+c.fixture+"/response.body")
		cl := client(t, c.backend, c.opt)
		w := c.w
		texts := streamTexts(t, body)
		if w.ok && w.text == "" && c.opt.Stream {
			w.text = strings.Join(texts, "")
		}
		for seed := range 40 {
			rec := parse(cl, body, seed, req, pl)
			check(t, c.fixture, rec, w)
			if w.ok && len(texts) > 0 && rec.TTFT <= 0 {
				t.Errorf("%s: no TTFT", c.fixture)
			}
			if w.ok && c.opt.Stream && len(texts) > 1 && sglangName[c.backend] != "" {
				// The same reply read as sglang-oai(-chat), whose records
				// keep the chunk lengths.
				rec := parse(client(t, sglangName[c.backend], c.opt), body, seed, req, pl)
				if len(rec.ChunkLens) != len(texts)-1 {
					t.Fatalf("%s: %d chunk lengths for %d chunks", c.fixture, len(rec.ChunkLens), len(texts))
				}
				for i, n := range rec.ChunkLens {
					if int(n) != len(texts[i+1]) {
						t.Fatalf("%s: chunk %d length %d, want %d", c.fixture, i+1, n, len(texts[i+1]))
					}
				}
			}
			if !c.opt.Stream && w.ok && rec.TTFT != rec.Latency && c.backend != "vllm-embedding" && c.backend != "sglang-embedding" {
				t.Errorf("%s: non-streamed TTFT %v != latency %v", c.fixture, rec.TTFT, rec.Latency)
			}
		}
	}
}

// feedTimed hands lines to the parser at set instants after the send, for
// exact timing checks, and completes the record as Do would.
func feedTimed(t *testing.T, c *Client, body string, ms []float64, outputLen, promptLen int) *record.Record {
	t.Helper()
	rec := &record.Record{PromptLen: promptLen, OutputLen: outputLen}
	var p parser
	st := time.Unix(1000, 0)
	p.reset(c, st, rec, outputLen)
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) != len(ms) {
		t.Fatalf("%d lines, %d times", len(lines), len(ms))
	}
	for i, l := range lines {
		at := st.Add(time.Duration(ms[i] * float64(time.Millisecond)))
		if err := p.line([]byte(l), at); err != nil {
			p.fail(kindOf(err), err.Error())
			return rec
		}
	}
	if p.empty() {
		p.fail(record.KindEmpty, p.emptyError())
		return rec
	}
	p.finish()
	return rec
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func checkTimes(t *testing.T, name string, rec *record.Record, ttft, latency float64, itl []float64) {
	t.Helper()
	if !near(rec.TTFT, ttft) || !near(rec.Latency, latency) {
		t.Errorf("%s: TTFT %v latency %v, want %v %v", name, rec.TTFT, rec.Latency, ttft, latency)
	}
	got := rec.Gaps.Seconds()
	if len(got) != len(itl) {
		t.Fatalf("%s: ITL %v, want %v", name, got, itl)
	}
	for i := range itl {
		if !near(got[i], itl[i]) {
			t.Fatalf("%s: ITL %v, want %v", name, got, itl)
		}
	}
}

func TestGenerateStream(t *testing.T) {
	body := string(fixture(t, "generate/stream"))
	o := Options{Stream: true, IgnoreEOS: true, CacheReport: true}
	rec := feedTimed(t, client(t, "sglang", o), body, []float64{10, 20, 40, 50, 55, 80, 81}, 64, 100)
	check(t, "generate/stream", rec, want{true, "Hello, world! é😀", 7, 12, 6, ""})
	// 1 token at 10 ms (TTFT, no ITL); +1 at 20; +2 at 40 (10 ms each); the
	// chunk at 50 brings none and is skipped, the one at 55 has no text; +3 at
	// 80 share the 40 ms since the last counted chunk. [DONE] ends the latency.
	third := 0.040 / 3
	checkTimes(t, "generate/stream", rec, 0.010, 0.081, []float64{0.010, 0.010, 0.010, third, third, third})
	if rec.ChunkLens != nil {
		t.Errorf("chunk lengths set for /generate: %v", rec.ChunkLens)
	}
	if rec.SpecAcceptLength != 2.5 {
		t.Errorf("spec accept length %v", rec.SpecAcceptLength)
	}
	d := rec.CacheDetails
	if rec.CachedTokens != 5 || d == nil || d.Device != 3 || d.Host != 2 || d.Storage != 0 || d.StorageBackend != "" ||
		string(d.Raw) != `{"device":3,"host":2,"storage":0,"storage_backend":null}` {
		t.Errorf("cache: %d %+v", rec.CachedTokens, d)
	}
	// Without --cache-report nothing is read.
	rec = feedTimed(t, client(t, "sglang", Options{Stream: true}), body, []float64{10, 20, 40, 50, 55, 80, 81}, 64, 100)
	if rec.CachedTokens != 0 || rec.CacheDetails != nil {
		t.Errorf("cache read without --cache-report: %d %+v", rec.CachedTokens, rec.CacheDetails)
	}
	for seed := range 30 {
		check(t, "generate/stream", parse(client(t, "sglang", o), []byte(body), seed, 64, 100), want{true, "Hello, world! é😀", 7, 12, 6, ""})
	}
}

func TestGenerateOther(t *testing.T) {
	whole := client(t, "sglang", Options{})
	for seed := range 10 {
		rec := parse(whole, fixture(t, "generate/nostream"), seed, 64, 100)
		check(t, "generate/nostream", rec, want{true, "Hello, world!", 4, 9, 0, ""})
		if rec.TTFT != rec.Latency || rec.TTFT <= 0 {
			t.Errorf("non-streamed TTFT %v, latency %v", rec.TTFT, rec.Latency)
		}
	}
	rec := parse(client(t, "sglang-native", Options{Stream: true}), fixture(t, "generate/error-midstream"), 5, 64, 100)
	check(t, "generate/error-midstream", rec, want{false, "", 0, 5, 1, "Internal server error: CUDA out of memory. Tried to allocate 2.00 GiB"})
	if rec.TTFT <= 0 {
		t.Error("the TTFT gathered before the error was dropped")
	}
	// No text at all: a failure of its own kind.
	rec = parse(client(t, "sglang", Options{Stream: true}), []byte("data: {\"text\":\"\",\"meta_info\":{}}\n\ndata: [DONE]\n\n"), 1, 64, 100)
	check(t, "generate/no-text", rec, want{false, "", 0, 100, 0, "no output"})
	if rec.ErrorKind != record.KindEmpty {
		t.Errorf("generate/no-text: kind %q", rec.ErrorKind)
	}
	// A chunk with text but no completion_tokens fails, as the reference's KeyError does.
	rec = parse(client(t, "sglang", Options{Stream: true}), []byte("data: {\"text\":\"x\",\"meta_info\":{}}\n\ndata: [DONE]\n\n"), 1, 64, 100)
	check(t, "generate/no-count", rec, want{false, "", 0, 100, 0, "line 1 of the response: a chunk with text has no integer meta_info.completion_tokens"})
}

func TestTRTStream(t *testing.T) {
	body := string(fixture(t, "trt/stream"))
	// No headers, no [DONE]: the first line is the first token even though
	// its text is empty; every later line is one ITL.
	rec := feedTimed(t, client(t, "trt", Options{IgnoreEOS: true}), body, []float64{30, 40, 55, 60}, 64, 100)
	check(t, "trt/stream", rec, want{true, " Hi there…", 64, 100, 3, ""})
	checkTimes(t, "trt/stream", rec, 0.030, 0.060, []float64{0.010, 0.015, 0.005})
	// trt streams even with --disable-stream, and skips a [DONE].
	for seed := range 20 {
		rec := parse(client(t, "trt", Options{}), append([]byte(body), "data: [DONE]\n"...), seed, 64, 100)
		check(t, "trt/stream", rec, want{true, " Hi there…", 64, 100, 3, ""})
	}
	rec = parse(client(t, "trt", Options{}), []byte("data:{\"model_name\":\"ensemble\"}\n"), 1, 64, 100)
	check(t, "trt/no-text-output", rec, want{false, "", 0, 100, 0, "no text_output"})
	rec = parse(client(t, "trt", Options{}), nil, 1, 64, 100)
	check(t, "trt/empty", rec, want{false, "", 0, 100, 0, "no data lines"})
}

func TestTrussStream(t *testing.T) {
	body := string(fixture(t, "truss/stream"))
	// Like completions, but the output length is always the requested one
	// and the server's prompt_tokens are not read.
	rec := feedTimed(t, client(t, "truss", Options{Stream: true}), body, []float64{20, 25, 35, 50, 51}, 64, 100)
	check(t, "truss/stream", rec, want{true, "One two three\n", 64, 100, 2, ""})
	checkTimes(t, "truss/stream", rec, 0.025, 0.051, []float64{0.010, 0.015})
	if len(rec.ChunkLens) != 0 {
		t.Errorf("chunk lengths set for truss: %v", rec.ChunkLens)
	}
}

func TestCompletionsTiming(t *testing.T) {
	body := string(fixture(t, "wire/llm-d-inference-sim/completions-stream-usage/response.body"))
	// Text at 20 and 26 ms, the empty finish chunk at 27, usage at 28,
	// [DONE] at 29: latency runs to [DONE].
	rec := feedTimed(t, client(t, "vllm", Options{Stream: true}), body, []float64{20, 26, 27, 28, 29}, 8, 100)
	checkTimes(t, "completions", rec, 0.020, 0.029, []float64{0.006})
	if rec.ChunkLens != nil {
		t.Errorf("chunk lengths set for vllm: %v", rec.ChunkLens)
	}
	// Only sglang-oai's records keep them (the metrics' retokenized ITL).
	rec = feedTimed(t, client(t, "sglang-oai", Options{Stream: true}), body, []float64{20, 26, 27, 28, 29}, 8, 100)
	if len(rec.ChunkLens) != 1 || rec.ChunkLens[0] != 3 {
		t.Errorf("chunk lengths %v, want [3]", rec.ChunkLens)
	}
}

func TestChatReasoning(t *testing.T) {
	body := `data: {"choices":[{"delta":{"role":"assistant","content":null}}]}
data: {"choices":[{"delta":{"reasoning_content":"Let me think."}}]}
data: {"choices":[{"delta":{"reasoning":" Hmm.","reasoning_content":""}}]}
data: {"choices":[{"delta":{"reasoning_content":"R","reasoning":"dup","content":"C"}}]}
data: {"choices":[{"delta":{"content":"Answer \u00e9."}}],"usage":null}
data: {"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":9},"sglext":{"cached_tokens_details":{"device":4,"host":1,"storage":2,"storage_backend":"file"}}}
data: [DONE]`
	o := Options{Stream: true, CacheReport: true}
	rec := feedTimed(t, client(t, "sglang-oai-chat", o), body, []float64{5, 10, 20, 30, 40, 45, 46}, 64, 100)
	check(t, "chat/reasoning", rec, want{true, "Let me think. Hmm.RCAnswer é.", 9, 11, 3, ""})
	checkTimes(t, "chat/reasoning", rec, 0.010, 0.046, []float64{0.010, 0.010, 0.010})
	// The first content ("C", after "R" in the same chunk) came at 30 ms.
	if !near(rec.TTFO, 0.030) || rec.ContentTokens != 9 {
		t.Errorf("TTFO %v content %d, want 0.030 and 9 (no tokenizer: no reasoning count)", rec.TTFO, rec.ContentTokens)
	}
	if got := rec.ChunkLens; len(got) != 3 || got[0] != 5 || got[1] != 2 || got[2] != 10 {
		t.Errorf("chunk lengths %v, want [5 2 10]", got)
	}
	if rec.CachedTokens != 7 || rec.CacheDetails == nil || rec.CacheDetails.StorageBackend != "file" {
		t.Errorf("cache %d %+v", rec.CachedTokens, rec.CacheDetails)
	}
}

func TestChatNoStreamMeta(t *testing.T) {
	body := `{"id":"x","choices":[{"index":0,"message":{"role":"assistant","reasoning_content":"think ","content":"done"},` +
		`"meta_info":{"spec_accept_length":3.25,"spec_cap_length":null,"spec_block_accept_length":1.5,"spec_cap_lens_histogram":[0,2,5]}}],` +
		`"usage":{"prompt_tokens":21,"completion_tokens":12}}`
	rec := parse(client(t, "sglang-oai-chat", Options{}), []byte(body), 3, 64, 100)
	check(t, "chat/nostream-meta", rec, want{true, "think done", 12, 21, 0, ""})
	if rec.SpecAcceptLength != 3.25 || rec.SpecCapLength != 0 || rec.SpecBlockAcceptLength != 1.5 ||
		len(rec.SpecCapLensHistogram) != 3 || rec.SpecCapLensHistogram[2] != 5 {
		t.Errorf("spec fields: %v %v %v %v", rec.SpecAcceptLength, rec.SpecCapLength, rec.SpecBlockAcceptLength, rec.SpecCapLensHistogram)
	}
	// Pretty-printed JSON is fine when read whole (the reference reads the
	// completions and /generate replies line by line and fails on it).
	pretty := "{\n  \"choices\": [\n    {\"text\": \"ok\"}\n  ],\n  \"usage\": {\"completion_tokens\": 1}\n}\n"
	rec = parse(client(t, "sglang-oai", Options{}), []byte(pretty), 3, 64, 100)
	check(t, "completions/pretty", rec, want{true, "ok", 1, 100, 0, ""})
}

func TestServerPromptLen(t *testing.T) {
	cases := []struct {
		chunk string
		want  int
	}{
		{`{"choices":[],"usage":{"prompt_tokens":7}}`, 7},
		{`{"choices":[],"usage":{"prompt_tokens":0},"meta_info":{"prompt_tokens":9}}`, 100},     // usage is truthy: meta_info unread
		{`{"choices":[],"usage":null,"meta_info":{"prompt_tokens":9}}`, 9},                      // falls back to meta_info
		{`{"choices":[],"usage":{},"meta_info":{"prompt_tokens":9}}`, 9},                        // {} is falsy
		{`{"choices":[],"usage":{"completion_tokens":3},"meta_info":{"prompt_tokens":9}}`, 100}, // truthy usage without the key
		{`{"choices":[],"usage":{"prompt_tokens":null}}`, 100},
	}
	for _, c := range cases {
		rec := parse(client(t, "vllm", Options{Stream: true}), []byte("data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: "+c.chunk+"\n\ndata: [DONE]\n"), 2, 64, 100)
		if !rec.Success || rec.PromptLen != c.want {
			t.Errorf("%s: prompt len %d (error %q), want %d", c.chunk, rec.PromptLen, rec.Error, c.want)
		}
	}
}

func TestBadStreams(t *testing.T) {
	cases := []struct {
		backend, body, errHas string
	}{
		{"vllm", "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[{\"text\":\"b\"}\n\ndata: [DONE]\n",
			`line 3 of the response: invalid JSON at byte 31: unexpected end in array; the line starts "data: {\"choices\":[{\"text\":\"b\"}"`},
		{"vllm-chat", "data: [1,2]\n", "line 1 of the response: expected a JSON object, got array"},
		{"vllm", "data: {\"choices\":[{\"text\":5}]}\n", "choices[0].text is a JSON number, not a string"},
		{"vllm-chat", "data: {\"choices\":[{\"delta\":{\"content\":[1]}}]}\n", "choices[0].delta.content is a JSON array, not a string"},
		{"sglang", "data: {\"text\":[\"a\"]}\n", "text is a JSON array, not a string"},
		{"vllm", "\n\n", "no data lines"},
		{"vllm", "data: {\"error\":\"overloaded\"}\n", "overloaded"},
		{"vllm", "data: {\"error\":{\"code\":500}}\n", `{"code":500}`},
		{"vllm", "data: {\"error\":{\"message\":\"\",\"code\":500}}\n", `{"message":"","code":500}`},
		{"vllm-chat", "data: {\"object\":\"error\",\"message\":\"bad\\nthing\",\"code\":400}\n", "bad thing"},
		{"vllm", "data: {\"usage\":{\"completion_tokens\":3}}\n", "the chunk has no choices array"},
		{"truss", "data: {\"choices\":null}\n", "the chunk has no choices array"},
		{"sglang", "data: {\"text\":\"a\",\"meta_info\":{\"completion_tokens\":1}}\ndata: {\"text\":\"ab\",\"meta_info\":{\"completion_tokens\":99999999999}}\n",
			"jumped by 99999999998"},
	}
	for _, c := range cases {
		rec := parse(client(t, c.backend, Options{Stream: true}), []byte(c.body), 1, 64, 100)
		if rec.Success || !strings.Contains(rec.Error, c.errHas) {
			t.Errorf("%s %q: success %v, error %q, want %q", c.backend, c.body, rec.Success, rec.Error, c.errHas)
		}
	}
	// A server that ignores "stream": true and answers with one JSON line
	// is read as the reference reads it.
	rec := parse(client(t, "vllm", Options{Stream: true}), fixture(t, "wire/ollama/completions-nostream/response.body"), 1, 64, 100)
	check(t, "plain JSON", rec, want{true, " apartTrial général п listaElect Opr ligne", 8, 3, 0, ""})
	// SSE comments are skipped; "data:" without a space is accepted.
	rec = parse(client(t, "vllm", Options{Stream: true}), []byte(": ping\n\ndata:{\"choices\":[{\"text\":\"a\"}]}\n\n: ping\ndata:[DONE]\n"), 1, 64, 100)
	check(t, "comments", rec, want{true, "a", 64, 100, 0, ""})
}

func TestLongLine(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	body := "data: {\"choices\":[{\"text\":\"" + long + "\"}]}\n\ndata: [DONE]\n"
	rec := parse(client(t, "vllm", Options{Stream: true}), []byte(body), 96, 64, 100)
	check(t, "long", rec, want{true, long, 64, 100, 0, ""})
}

// TestParserReuse runs a long request and then a short one through the same
// pooled buffers: nothing of the first may leak into the second.
func TestParserReuse(t *testing.T) {
	c := client(t, "sglang", Options{Stream: true})
	long := parse(c, fixture(t, "generate/stream"), 1, 64, 100)
	short := parse(c, []byte("data: {\"text\":\"z\",\"meta_info\":{\"completion_tokens\":1}}\ndata: [DONE]\n"), 1, 64, 100)
	if long.Text != "Hello, world! é😀" || short.Text != "z" || short.Gaps.Len() != 0 || short.PromptLen != 100 {
		t.Errorf("reuse: %q / %q %v %d", long.Text, short.Text, short.Gaps.Seconds(), short.PromptLen)
	}
	if !bytes.Equal([]byte(long.Text), []byte("Hello, world! é😀")) {
		t.Error("first record's text changed by the second request")
	}
}

// readBody reads a 200 reply's body as the state machine reads one, the
// request having been sent at st.
func (c *Client) readBody(ctx context.Context, body io.Reader, rec *record.Record, st time.Time, outputLen int) {
	cn := c.bareScratch(rec, outputLen)
	cn.x.Body(ctx, body, st, &cn.send)
}

// readResponse is readBody for a whole HTTP/1.1 response, head and
// framing, read as the poller receiver reads a connection.
func (c *Client) readResponse(ctx context.Context, r io.Reader, rec *record.Record, st time.Time, outputLen int) {
	cn := c.bareScratch(rec, outputLen)
	cn.x.Response(ctx, r, st, &cn.send)
}

func (c *Client) bareScratch(rec *record.Record, outputLen int) *scratch {
	cn := getScratch()
	cn.c, cn.outputLen, cn.then = c, outputLen, func() {}
	cn.send = http1.Send{Record: rec, Timeout: c.opt.Timeout, Stream: c.streams()}
	return cn
}
