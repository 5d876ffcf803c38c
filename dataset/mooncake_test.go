package dataset

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"benchserve/backend"
	"benchserve/internal/py/pyjson"
)

// traceFile is a small trace, out of time order, whose last line is
// malformed (it is read only when --num-prompts reaches it).
const traceFile = `{"timestamp": 2500, "input_length": 9, "output_length": 3, "hash_ids": [7, 8]}
{"timestamp": 0, "input_length": 9, "output_length": 2, "hash_ids": [5]}

{"timestamp": 1000.5, "input_length": 9, "hash_ids": []}
{"timestamp": "soon"}
`

func his(n int) string { return strings.TrimSuffix(strings.Repeat("hi ", n), " ") }

func TestMooncakeQuery(t *testing.T) {
	want := "7" + his(128) + "8" + his(128) + "Tell me a story based on this context."
	if got := mooncakeQuery([]int64{7, 8}); got != want {
		t.Errorf("query %q", got)
	}
}

func TestLoadMooncakeNative(t *testing.T) {
	path := writeFile(t, "trace.jsonl", []byte(traceFile))
	var out bytes.Buffer
	p := Params{Name: "mooncake", Path: path, NumPrompts: 3, Backend: backendOf("sglang"), MooncakeWorkload: "conversation", MooncakeNumRounds: 2, MooncakeSlowdown: 1}
	rows, err := Load(context.Background(), p, testEnv(1, &out))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 3 sessions x 2 rounds", len(rows))
	}
	base := "7" + his(128) + "8" + his(128) + "Tell me a story based on this context."
	// wordTok has no chat template: "role: content" lines.
	r1 := "user: Round 1: " + base
	r2 := r1 + "\nassistant: story story story\nuser: Round 2: " + base
	for k, want := range []string{r1, r2} {
		r := rows[k]
		if r.Text != want || r.Messages != nil {
			t.Errorf("round %d text %q", k+1, r.Text)
		}
		if r.PromptLen != len(strings.Fields(want))+1 || r.OutputLen != 3 || !r.HasTimestamp || r.Timestamp != 2500 {
			t.Errorf("round %d: %+v", k+1, r)
		}
	}
	// Defaults: output_length 256, no hash ids.
	if r := rows[5]; r.OutputLen != 256 || r.Timestamp != 1000.5 || !strings.HasSuffix(r.Text, "user: Round 2: Tell me a story based on this context.") {
		t.Errorf("third session: %+v", r)
	}
	if !strings.Contains(out.String(), "#Sessions: 3, rounds per session: 2, trace span: 2.500 s") || !strings.Contains(out.String(), "#Output tokens: 522\n") {
		t.Errorf("printed:\n%s", out.String())
	}

	// The completions backend sends the text as its prompt.
	c, _ := backend.New("vllm", "http://x", backend.Options{Stream: true, IgnoreEOS: true}, nil, nil)
	body := string(c.Body(&backend.Input{Text: rows[1].Text, OutputLen: 3, Model: "m"}))
	if want := `{"model": "m", "prompt": ` + string(pyjson.String(r2)) + `, "best_of": 1, "max_tokens": 3,`; !strings.HasPrefix(body, want) {
		t.Errorf("body %.200s", body)
	}

	// Reading past the good lines finds the bad one.
	p.NumPrompts = 10
	_, err = Load(context.Background(), p, testEnv(1, &out))
	if want := "--dataset-path " + path + ": line 5: field timestamp: want a number of milliseconds"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err %v, want %q", err, want)
	}
}

func TestLoadMooncakeChat(t *testing.T) {
	path := writeFile(t, "trace.jsonl", []byte(traceFile))
	p := Params{Name: "mooncake", Path: path, NumPrompts: 2, Backend: backendOf("sglang-oai-chat"), MooncakeWorkload: "conversation", MooncakeNumRounds: 2}
	_, tok := tinyVLM(t, "")
	var out bytes.Buffer
	env := testEnv(1, &out)
	env.Tok = tok
	rows, err := Load(context.Background(), p, env)
	if err != nil {
		t.Fatal(err)
	}
	base := "5" + his(128) + "Tell me a story based on this context."
	want := `[{"role": "user", "content": "Round 1: ` + base + `"}, {"role": "assistant", "content": "story story"}, {"role": "user", "content": "Round 2: ` + base + `"}]`
	r := rows[3]
	if string(r.Messages) != want || r.Text != "" {
		t.Fatalf("messages %s\ntext %q", r.Messages, r.Text)
	}
	// The count is the chat template's: <|im_start|> user <unk> ... per
	// message; the words are unknown to the tiny vocabulary but counted.
	templ := "<|im_start|>user\nRound 1: " + base + "<|im_end|>\n<|im_start|>assistant\nstory story<|im_end|>\n<|im_start|>user\nRound 2: " + base + "<|im_end|>\n<|im_start|>assistant\n"
	if r.PromptLen != len(tok.Encode(templ, true)) {
		t.Errorf("prompt len %d, want %d", r.PromptLen, len(tok.Encode(templ, true)))
	}
	c, _ := backend.New("sglang-oai-chat", "http://x", backend.Options{Stream: true, IgnoreEOS: true}, nil, nil)
	body := string(c.Body(&backend.Input{Messages: r.Messages, OutputLen: r.OutputLen, Model: "m"}))
	if !strings.HasPrefix(body, `{"model": "m", "messages": `+want+`, "max_completion_tokens": 2,`) {
		t.Errorf("body %.300s", body)
	}
}

func TestMooncakeDownload(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path != "/traces/toolagent_trace.jsonl" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"timestamp": 0, "output_length": 5, "hash_ids": [1]}` + "\n"))
	}))
	defer srv.Close()
	cache := t.TempDir()
	p := Params{Name: "mooncake", NumPrompts: 5, Backend: backendOf("sglang"), MooncakeWorkload: "toolagent", MooncakeNumRounds: 1}
	var out bytes.Buffer
	env := testEnv(1, &out)
	env.CacheDir, env.TraceBaseURL = cache, srv.URL
	for range 2 {
		rows, err := Load(context.Background(), p, env)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].OutputLen != 5 {
			t.Fatalf("rows %+v", rows)
		}
	}
	if hits.Load() != 1 {
		t.Errorf("%d downloads, want 1 (the second run reads the cache)", hits.Load())
	}
	if _, err := os.Stat(filepath.Join(cache, "mooncake", "toolagent_trace.jsonl")); err != nil {
		t.Error(err)
	}

	// Not published, and no network: the error names the URL and the flag.
	p.MooncakeWorkload = "synthetic"
	_, err := Load(context.Background(), p, env)
	url := srv.URL + "/traces/synthetic_trace.jsonl"
	if err == nil || !strings.Contains(err.Error(), "downloading "+url+" failed: HTTP 404 Not Found") || !strings.Contains(err.Error(), "pass --dataset-path") {
		t.Errorf("404: %v", err)
	}
	srv.Close()
	p.MooncakeWorkload = "mooncake"
	_, err = Load(context.Background(), p, env)
	url = srv.URL + "/arxiv-trace/mooncake_trace.jsonl"
	if err == nil || !strings.Contains(err.Error(), "downloading "+url+" failed") || !strings.Contains(err.Error(), "pass --dataset-path with a local copy") {
		t.Errorf("no server: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(cache, "mooncake")); len(entries) != 1 {
		t.Errorf("cache holds %d files, want only the good trace", len(entries))
	}
}

// A download that breaks off leaves neither the trace nor a partial file,
// so the next run downloads it again.
func TestMooncakeBrokenDownload(t *testing.T) {
	line := `{"timestamp": 0, "output_length": 5, "hash_ids": [1]}` + "\n"
	var broken atomic.Bool
	broken.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !broken.Load() {
			w.Write([]byte(line))
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(line)))
		w.Write([]byte(line[:20]))
		w.(http.Flusher).Flush()
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	}))
	defer srv.Close()
	cache := t.TempDir()
	p := Params{Name: "mooncake", NumPrompts: 1, Backend: backendOf("sglang"), MooncakeWorkload: "toolagent", MooncakeNumRounds: 1}
	var out bytes.Buffer
	env := testEnv(1, &out)
	env.CacheDir, env.TraceBaseURL = cache, srv.URL
	url := srv.URL + "/traces/toolagent_trace.jsonl"
	_, err := Load(context.Background(), p, env)
	if err == nil || !strings.Contains(err.Error(), "downloading "+url+" failed: unexpected EOF; pass --dataset-path") {
		t.Errorf("broken download: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(cache, "mooncake")); len(entries) != 0 {
		t.Errorf("cache holds %v after a broken download, want nothing", entries)
	}
	broken.Store(false)
	if rows, err := Load(context.Background(), p, env); err != nil || len(rows) != 1 {
		t.Fatalf("second run: %v, %d rows", err, len(rows))
	}
}

func TestMooncakeBadLines(t *testing.T) {
	for _, tt := range []struct{ line, want string }{
		{`not json`, "line 1: invalid JSON object"},
		{`{"input_length": 3}`, "line 1: field timestamp: missing"},
		{`{"timestamp": null}`, "line 1: field timestamp: want a number"},
		{`{"timestamp": 1, "output_length": 2.5}`, "line 1: field output_length: want a whole number"},
		{`{"timestamp": 1, "output_length": -1}`, "line 1: field output_length: want a whole number"},
		{`{"timestamp": 1, "hash_ids": [1, "x"]}`, "line 1: field hash_ids: want a list of integers"},
	} {
		path := writeFile(t, "t.jsonl", []byte(tt.line+"\n"))
		_, err := Load(context.Background(), Params{Name: "mooncake", Path: path, NumPrompts: 1, MooncakeWorkload: "conversation", MooncakeNumRounds: 1}, testEnv(1, &bytes.Buffer{}))
		if err == nil || !strings.HasPrefix(err.Error(), "--dataset-path "+path+": "+tt.want) {
			t.Errorf("%s: err %v, want %q", tt.line, err, tt.want)
		}
	}
}

func FuzzTraceLine(f *testing.F) {
	f.Add([]byte(`{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 48]}`))
	f.Add([]byte(`{"timestamp": 1e3, "hash_ids": null}`))
	f.Add([]byte(`{"timestamp": 0, "output_length": 1e30}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, err := parseTraceLine(line)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			return
		}
		if rec.outputLen < 0 {
			t.Errorf("output length %d", rec.outputLen)
		}
		_ = mooncakeQuery(rec.hashIDs)
	})
}

// BenchmarkMooncake1000 prepares 1000 sessions of 20 hash ids each (about
// 2,700 prompt words per request) for a native backend.
func BenchmarkMooncake1000(b *testing.B) {
	var trace strings.Builder
	for i := range 1000 {
		ids := make([]string, 20)
		for j := range ids {
			ids[j] = strconv.Itoa(i*20 + j)
		}
		fmt.Fprintf(&trace, `{"timestamp": %d, "output_length": 100, "hash_ids": [%s]}`+"\n", i*7, strings.Join(ids, ", "))
	}
	path := writeFile(b, "trace.jsonl", []byte(trace.String()))
	p := Params{Name: "mooncake", Path: path, NumPrompts: 1000, Backend: backendOf("sglang"), MooncakeWorkload: "conversation", MooncakeNumRounds: 1}
	for b.Loop() {
		if _, err := Load(context.Background(), p, testEnv(1, &bytes.Buffer{})); err != nil {
			b.Fatal(err)
		}
	}
}
