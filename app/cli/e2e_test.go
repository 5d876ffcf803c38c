package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"benchserve/internal/exit"
	"benchserve/internal/testenv"
)

// run executes the whole command line in-process and returns its exit
// code, stdout and stderr.
func run(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	getenv := func(k string) string { return env[k] }
	code := Main(context.Background(), args, IO{Stdout: &out, Stderr: &errb, Getenv: getenv})
	return code, out.String(), errb.String()
}

// field returns the value printed after label in the result block.
func field(t *testing.T, out, label string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, label) {
			return strings.TrimSpace(line[len(label):])
		}
	}
	t.Fatalf("no %q line in output:\n%s", label, out)
	return ""
}

func readLine(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var m map[string]any
	// Python writes Infinity for an infinite rate; encoding/json does not
	// take it, so swap it for a number before decoding.
	last := strings.ReplaceAll(lines[len(lines)-1], "Infinity", "1e999999")
	dec := json.NewDecoder(strings.NewReader(last))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil && !strings.Contains(err.Error(), "1e999999") {
		t.Fatalf("result line is not JSON: %v\n%s", err, last)
	}
	return m
}

func num(t *testing.T, m map[string]any, key string) float64 {
	t.Helper()
	n, ok := m[key].(json.Number)
	if !ok {
		t.Fatalf("key %s = %v (%T), want a number", key, m[key], m[key])
	}
	f, _ := n.Float64()
	return f
}

// Each backend against a server with TTFT 40 ms and 10 ms between tokens:
// every request completes, the totals add up, and the measured TTFT and ITL
// are never below the server's delays and not far above them.
func TestEndToEndPerBackend(t *testing.T) {
	const (
		ttft    = 40 * time.Millisecond
		itl     = 10 * time.Millisecond
		prompts = 6
		outLen  = 8
	)
	// Upper bounds: ms above the server's delay tolerated on a shared,
	// noisy machine, checked in the slow tier.
	slack := 400.0
	parallel := !testenv.SlowOn(t) // bounds on times are checked alone
	if parallel {
		slack = math.Inf(1)
		t.Logf("upper bounds on the times not checked: slow tier (%s=1)", testenv.SlowVar)
		t.Parallel()
	}
	for _, be := range []string{"sglang", "sglang-oai", "sglang-oai-chat", "vllm", "vllm-chat", "lmdeploy", "lmdeploy-chat", "trt", "truss", "sglang-embedding", "vllm-embedding"} {
		t.Run(be, func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			srv := newFakeServer(t, ttft, itl)
			out := filepath.Join(t.TempDir(), "res.jsonl")
			code, stdout, stderr := run(t, nil, "--backend", be, "--base-url", srv.srv.URL, "--model", "fake-model",
				"--tokenizer", "o200k_base", "--dataset-name", "random-ids", "--random-input", "32", "--random-output", "8",
				"--random-range-ratio", "1", "--num-prompt", "6", "--output-file", out, "--warmup-requests", "1")
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if got := field(t, stdout, "Successful requests:"); got != "6" {
				t.Errorf("successful requests = %s", got)
			}
			m := readLine(t, out)
			if num(t, m, "completed") != prompts {
				t.Errorf("completed = %v", m["completed"])
			}
			if num(t, m, "total_input_tokens") != prompts*32 {
				t.Errorf("total_input_tokens = %v", m["total_input_tokens"])
			}
			if m["backend"] != be {
				t.Errorf("backend = %v", m["backend"])
			}
			embedding := strings.Contains(be, "embedding")
			if embedding {
				if strings.Contains(stdout, "Mean TTFT (ms)") || strings.Contains(stdout, "TTFT from schedule") {
					t.Error("embedding run printed TTFT")
				}
				if num(t, m, "total_output_tokens") != 0 {
					t.Errorf("embedding output tokens = %v", m["total_output_tokens"])
				}
				return
			}
			if num(t, m, "total_output_tokens") != prompts*outLen {
				t.Errorf("total_output_tokens = %v", m["total_output_tokens"])
			}
			if r := num(t, m, "total_output_tokens_retokenized"); r != prompts*outLen {
				t.Errorf("retokenized output tokens = %v, want %d", r, prompts*outLen)
			}
			// Lower bounds are strict: a response cannot be seen before
			// the server sent it. Upper bounds are loose because the
			// machine may be busy (and checked in the slow tier only); and on a busy machine several chunks
			// can arrive in one read, with gaps of 0 between them, so the
			// ITL has only an upper bound.
			ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
			for _, k := range []string{"mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms"} {
				if v := num(t, m, k); v < ms(ttft) || v > ms(ttft)+slack {
					t.Errorf("%s = %.2f, want within [%.0f, %.0f]", k, v, ms(ttft), ms(ttft)+slack)
				}
			}
			if v := num(t, m, "mean_itl_ms"); v < 0 || v > ms(itl)+slack {
				t.Errorf("mean_itl_ms = %.2f, want about %.0f", v, ms(itl))
			}
			if v := num(t, m, "mean_e2e_latency_ms"); v < ms(ttft+(outLen-1)*itl) || v > ms(ttft+(outLen-1)*itl)+slack {
				t.Errorf("mean E2E %.2f ms, want within %.0f ms above the server's %v", v, slack, ttft+(outLen-1)*itl)
			}
			if v := num(t, m, "mean_tpot_ms"); v < 0 || v > ms(itl)+slack {
				t.Errorf("mean_tpot_ms = %.2f", v)
			}
		})
	}
}

func TestEndToEndNonStreaming(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, 20*time.Millisecond, 5*time.Millisecond)
	out := filepath.Join(t.TempDir(), "res.jsonl")
	code, stdout, stderr := run(t, nil, "--backend", "vllm-chat", "--base-url", srv.srv.URL, "--tokenizer", "o200k_base",
		"--dataset-name", "random-ids", "--random-input-len", "16", "--random-output-len", "4", "--random-range-ratio", "1",
		"--num-prompts", "3", "--disable-stream", "--output-file", out, "--output-details")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	m := readLine(t, out)
	if num(t, m, "mean_itl_ms") != 0 {
		t.Errorf("non-streaming ITL = %v, want 0", m["mean_itl_ms"])
	}
	if num(t, m, "mean_ttft_ms") != num(t, m, "mean_e2e_latency_ms") {
		t.Errorf("non-streaming TTFT %v != E2E %v", m["mean_ttft_ms"], m["mean_e2e_latency_ms"])
	}
	if texts, _ := m["generated_texts"].([]any); len(texts) != 3 {
		t.Errorf("details: %d generated texts", len(texts))
	}
	// The model was found through GET /v1/models.
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.bodies[0]["model"] != "fake-model" {
		t.Errorf("model sent = %v", srv.bodies[0]["model"])
	}
}

// A server that answers 500 to some requests: the run completes, counts the
// failures, prints the block and writes the line.
func TestEndToEndServerErrors(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, 5*time.Millisecond, time.Millisecond)
	srv.failEvery = 3 // the warmup is request 1; requests 3, 6, 9 fail
	out := filepath.Join(t.TempDir(), "res.jsonl")
	code, stdout, stderr := run(t, nil, "--backend", "vllm", "--base-url", srv.srv.URL, "--tokenizer", "o200k_base",
		"--dataset-name", "random-ids", "--random-input-len", "8", "--random-output-len", "4", "--num-prompts", "9",
		"--max-concurrency", "1", "--output-file", out, "--output-details")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if got := field(t, stdout, "Successful requests:"); got != "6" {
		t.Errorf("successful = %s", got)
	}
	if got := field(t, stdout, "Failed requests:"); got != "3" {
		t.Errorf("failed = %s", got)
	}
	m := readLine(t, out)
	errs, _ := m["errors"].([]any)
	n := 0
	for _, e := range errs {
		if s, _ := e.(string); strings.HasPrefix(s, "500 Internal Server Error: ") {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d errors recorded as 500s: %v", n, errs)
	}
}

// Every request failing: the block is printed with zeros, the line is
// written, and the exit code says so.
func TestEndToEndAllFail(t *testing.T) {
	srv := newFakeServer(t, 0, 0)
	srv.failEvery = 1
	out := filepath.Join(t.TempDir(), "res.jsonl")
	code, stdout, stderr := run(t, nil, "--backend", "sglang", "--base-url", srv.srv.URL, "--tokenizer", "o200k_base",
		"--dataset-name", "random-ids", "--num-prompts", "4", "--random-input-len", "8", "--random-output-len", "4",
		"--warmup-requests", "0", "--output-file", out)
	if code != exit.AllFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exit.AllFailed, stdout, stderr)
	}
	if got := field(t, stdout, "Successful requests:"); got != "0" {
		t.Errorf("successful = %s", got)
	}
	if !strings.Contains(stderr, "all 4 requests failed") || !strings.Contains(stderr, "500 Internal Server Error") {
		t.Errorf("stderr = %q", stderr)
	}
	if m := readLine(t, out); num(t, m, "completed") != 0 {
		t.Errorf("completed = %v", m["completed"])
	}

	// With the default warmup, the run stops before measuring.
	code, _, stderr = run(t, nil, "--backend", "sglang", "--base-url", srv.srv.URL, "--tokenizer", "o200k_base",
		"--dataset-name", "random-ids", "--num-prompts", "4", "--random-input-len", "8", "--random-output-len", "4",
		"--output-file", out)
	if code != exit.Failure || !strings.Contains(stderr, "benchserve: error: Warmup failed - Please make sure benchmark arguments are correctly specified. Error: 500 Internal Server Error") {
		t.Errorf("warmup failure: exit %d\n%s", code, stderr)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, 0, 0)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("[\n {\"conversations\": [\n  {\"value\": \"hi\"},\n  {\"value\": oops}\n ]}\n]"), 0o644)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown flag", []string{"--no-such-flag"}, 2, "benchserve: error: unrecognized arguments: --no-such-flag"},
		{"ambiguous prefix", []string{"--random", "3"}, 2, "ambiguous option: --random could match --random-input-len"},
		{"bad value", []string{"--num-prompts", "ten"}, 2, "argument --num-prompts: invalid int value: 'ten'"},
		{"bad choice", []string{"--backend", "nope"}, 2, "argument --backend: invalid choice: 'nope'"},
		{"malformed extra body", []string{"--base-url", srv.srv.URL, "--tokenizer", "o200k_base", "--extra-request-body", `{"top_k": 5,}`}, 2, "--extra-request-body: invalid JSON"},
		{"extra body cut short", []string{"--base-url", srv.srv.URL, "--tokenizer", "o200k_base", "--extra-request-body", `{"a":`}, 2,
			"benchserve: error: --extra-request-body: invalid JSON: it ends early, before the value is complete\n"},
		{"extra body not an object", []string{"--base-url", srv.srv.URL, "--tokenizer", "o200k_base", "--extra-request-body", `[1]`}, 2, "--extra-request-body: not a JSON object"},
		{"missing dataset", []string{"--base-url", srv.srv.URL, "--tokenizer", "o200k_base", "--dataset-path", filepath.Join(dir, "nope.json")}, 1, "nope.json: no such file"},
		{"invalid dataset", []string{"--base-url", srv.srv.URL, "--tokenizer", "o200k_base", "--dataset-path", bad}, 1, "bad.json: invalid JSON at line 4 column"},
		{"unreachable server", []string{"--port", "1", "--host", "127.0.0.1", "--ready-check-timeout-sec", "1", "--tokenizer", "o200k_base"}, 1, "server at http://127.0.0.1:1/v1/models is not ready after 1s"},
		{"unreachable hub", []string{"--base-url", srv.srv.URL, "--tokenizer", "meta-llama/Llama-3.1-8B-Instruct"}, 1, `--tokenizer: tokenizer meta-llama/Llama-3.1-8B-Instruct: hub: model meta-llama/Llama-3.1-8B-Instruct, file tokenizer.json: cannot reach http://127.0.0.1:1/`},
		{"offline hub", []string{"--base-url", srv.srv.URL, "--tokenizer", "meta-llama/Llama-3.1-8B-Instruct", "--model", "offline"}, 1, `not in the local cache and HF_HUB_OFFLINE is set`},
		{"dataset download offline", []string{"--base-url", srv.srv.URL, "--tokenizer", "o200k_base", "--dataset-name", "mmmu"}, 1,
			"downloading Math/test-00000-of-00001.parquet from MMMU/MMMU failed (or pass --dataset-path with a local parquet or JSONL copy): hub: dataset MMMU/MMMU, file Math/test-00000-of-00001.parquet: cannot reach http://127.0.0.1:1/datasets/MMMU/MMMU/resolve/main/Math/test-00000-of-00001.parquet"},
		{"gserver", []string{"--backend", "gserver"}, 2, "--backend gserver: not implemented"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append(c.args, "--output-file", filepath.Join(dir, "out.jsonl"), "--num-prompts", "2")
			if c.name == "bad value" {
				args = c.args
			}
			env := map[string]string{"HF_ENDPOINT": "http://127.0.0.1:1", "HF_HOME": dir}
			if c.name == "offline hub" {
				env["HF_HUB_OFFLINE"] = "1"
			}
			code, stdout, stderr := run(t, env, args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout, stderr)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q does not contain %q", stderr, c.want)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 0 {
				t.Errorf("error is %d lines, want one:\n%s", n+1, stderr)
			}
		})
	}
}

// The control-plane calls and request decorations reach the server: the
// cache flush and profiler around the run, auth and custom headers, LoRA
// names, the extra body and the fake-prefill fields.
func TestEndToEndControlPlane(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, time.Millisecond, time.Millisecond)
	srv.accept = 2.5
	dir := t.TempDir()
	out := filepath.Join(dir, "res.jsonl")
	code, stdout, stderr := run(t, map[string]string{"OPENAI_API_KEY": "sk-test"},
		"--backend", "sglang", "--base-url", srv.srv.URL, "--tokenizer", "o200k_base",
		"--dataset-name", "random-ids", "--num-prompts", "4", "--random-input-len", "8", "--random-output-len", "3",
		"--flush-cache", "--profile", "--profile-output-dir", dir, "--lora-name", "a", "b", "--lora-request-distribution", "distinct",
		"--header", "X-Team=perf", "--extra-request-body", `{"top_k": 5, "sampling_params": {"temperature": 0.5}}`,
		"--fake-prefill", "--cache-report", "--tag", "ci", "--max-concurrency", "1", "--output-file", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	calls := strings.Join(srv.calls, "\n")
	for _, want := range []string{"POST /flush_cache?timeout=60.0", "POST /start_profile", "POST /stop_profile", "GET /server_info"} {
		if !strings.Contains(calls, want) {
			t.Errorf("server saw no %q; calls:\n%s", want, calls)
		}
	}
	if strings.Index(calls, "/flush_cache") > strings.Index(calls, "/start_profile") {
		t.Error("the cache was flushed after the profiler started")
	}
	for _, want := range []string{"Starting profiler...", "Profiler started", "Stopping profiler...", "Profiler stopped", "async_request_profile api_url='" + srv.srv.URL + "/start_profile' body={'activities': ['CPU', 'GPU'], 'num_steps': None"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	if got := field(t, stdout, "Accept length:"); got != "2.50" {
		t.Errorf("accept length = %q", got)
	}
	// bodies[0] is the warmup; the four measured requests alternate adapters.
	var loras []string
	for i, b := range srv.bodies {
		if b["top_k"] != 5.0 || b["bootstrap_host"] != "2.2.2.2" || b["bootstrap_room"] != 0.0 {
			t.Errorf("body %d lacks the extra fields: %v", i, b)
		}
		if sp, _ := b["sampling_params"].(map[string]any); len(sp) != 1 || sp["temperature"] != 0.5 {
			t.Errorf("body %d: the extra body's sampling_params must replace the whole dict, got %v", i, b["sampling_params"])
		}
		loras = append(loras, b["lora_path"].(string))
		h := srv.headers[i]
		if h.Get("Authorization") != "Bearer sk-test" || h.Get("X-Team") != "perf" {
			t.Errorf("request %d headers: %v", i, h)
		}
	}
	if got := strings.Join(loras, ","); got != "a,a,b,a,b" {
		t.Errorf("lora_path per request = %s, want the warmup on the first adapter, then round-robin", got)
	}
	m := readLine(t, out)
	if m["tag"] != "ci" {
		t.Errorf("tag = %v", m["tag"])
	}
	if _, ok := m["cache_report"].(map[string]any); !ok {
		t.Errorf("no cache_report in %v", m)
	}
	if info, _ := m["server_info"].(map[string]any); info["version"] != "fake" {
		t.Errorf("server_info = %v", m["server_info"])
	}
}

// The same seed gives the same requests; another seed, others.
func TestEndToEndSeedIsDeterministic(t *testing.T) {
	prompts := func(seed string) []string {
		srv := newFakeServer(t, 0, 0)
		code, stdout, stderr := run(t, nil, "--backend", "vllm", "--base-url", srv.srv.URL, "--tokenizer", "o200k_base",
			"--dataset-name", "random-ids", "--num-prompts", "5", "--random-input-len", "16", "--random-output-len", "2",
			"--seed", seed, "--warmup-requests", "0", "--output-file", filepath.Join(t.TempDir(), "r.jsonl"))
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		srv.mu.Lock()
		defer srv.mu.Unlock()
		var ps []string
		for _, b := range srv.bodies {
			ps = append(ps, b["prompt"].(string))
		}
		sort.Strings(ps) // requests arrive concurrently
		return ps
	}
	a, b, c := prompts("7"), prompts("7"), prompts("8")
	if strings.Join(a, "|") != strings.Join(b, "|") {
		t.Error("seed 7 gave different prompts twice")
	}
	if strings.Join(a, "|") == strings.Join(c, "|") {
		t.Error("seeds 7 and 8 gave the same prompts")
	}
}

func TestEndToEndPrintRequests(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, 0, 0)
	recFile := filepath.Join(t.TempDir(), "records.jsonl")
	code, stdout, stderr := run(t, nil, "--backend", "sglang-oai-chat", "--base-url", srv.srv.URL, "--tokenizer", "o200k_base",
		"--dataset-name", "random-ids", "--num-prompts", "2", "--random-input-len", "4", "--random-output-len", "2",
		"--print-requests", "--record-file", recFile, "--output-file", filepath.Join(t.TempDir(), "r.jsonl"))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	starts := regexp.MustCompile(`(?m)^rid=([0-9a-f-]{36}) time=[0-9.]+ message="request start" request_func_input="RequestFuncInput\(prompt='...', api_url='`+regexp.QuoteMeta(srv.srv.URL)+`/v1/chat/completions', prompt_len=\d+, output_len=\d+, model='fake-model'`).FindAllStringSubmatch(stdout, -1)
	ends := regexp.MustCompile(`(?m)^rid=([0-9a-f-]{36}) time=[0-9.]+ time_delta=[0-9.e-]+ message="request end" output="RequestFuncOutput\(generated_text='...', success=True`).FindAllStringSubmatch(stdout, -1)
	if len(starts) != 2 || len(ends) != 2 {
		t.Fatalf("%d start and %d end lines in:\n%s", len(starts), len(ends), stdout)
	}
	ids := map[string]int{}
	for _, m := range append(starts, ends...) {
		ids[m[1]]++
	}
	for id, n := range ids {
		if n != 2 {
			t.Errorf("rid %s appears %d times", id, n)
		}
	}
	// The same ids in the record file, and on the wire as X-Request-Id.
	data, err := os.ReadFile(recFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r struct{ ID string }
		if json.Unmarshal([]byte(line), &r) != nil || ids[r.ID] != 2 {
			t.Errorf("record %s: id not among the printed rids %v", line, ids)
		}
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for _, h := range srv.headers {
		if ids[h.Get("X-Request-Id")] != 2 && h.Get("X-Request-Id") != "" {
			t.Errorf("sent X-Request-Id %q, not a printed rid", h.Get("X-Request-Id"))
		}
	}
	sent := 0
	for _, h := range srv.headers {
		if ids[h.Get("X-Request-Id")] == 2 {
			sent++
		}
	}
	if sent != 2 {
		t.Errorf("%d requests went out with their rid as X-Request-Id, want 2", sent)
	}
}

// An interrupt stops sending, lets requests in flight finish within the
// grace period, then writes the result for what completed and exits 130.
func TestEndToEndInterrupt(t *testing.T) {
	testenv.Slow(t) // a completed count 2.5 s into a run at 20 req/s
	srv := newFakeServer(t, 50*time.Millisecond, 5*time.Millisecond)
	out := filepath.Join(t.TempDir(), "res.jsonl")
	sigs := make(chan os.Signal, 2)
	var stdout, stderr bytes.Buffer
	go func() {
		time.Sleep(2500 * time.Millisecond) // warmup, the 1 s pause, then about 1.5 s of the run
		sigs <- os.Interrupt
	}()
	code := Main(context.Background(), []string{"--backend", "vllm", "--base-url", srv.srv.URL, "--tokenizer", "o200k_base",
		"--dataset-name", "random-ids", "--num-prompts", "10000", "--random-input-len", "8", "--random-output-len", "4",
		"--request-rate", "20", "--output-file", out}, IO{Stdout: &stdout, Stderr: &stderr, Signals: sigs, Exit: func(int) { t.Error("exited at once on one signal") }})
	if code != exit.Interrupted {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exit.Interrupted, stdout.String(), stderr.String())
	}
	m := readLine(t, out)
	if m["interrupted"] != true {
		t.Errorf("interrupted = %v", m["interrupted"])
	}
	done := num(t, m, "completed")
	if done < 5 || done > 60 {
		t.Errorf("completed = %v; about 1.5 s at 20 req/s should finish about 30", done)
	}
	if ns := num(t, m, "not_sent"); ns+done+num(t, m, "cancelled_in_flight") != 10000 {
		t.Errorf("not_sent %v + completed %v + cancelled %v != 10000", ns, done, m["cancelled_in_flight"])
	}
	if !strings.Contains(stdout.String(), "Interrupted: ") || !strings.Contains(stdout.String(), "Serving Benchmark Result") {
		t.Errorf("stdout lacks the interrupt note or the block:\n%s", stdout.String())
	}
}

// A second signal (after the burst window) cancels what is in flight, and
// the result line for what finished is still written, marked interrupted.
func TestEndToEndSecondInterruptCuts(t *testing.T) {
	testenv.Slow(t)                                          // a second signal 2 s after the first, before 4 s replies end
	srv := newFakeServer(t, 4*time.Second, time.Millisecond) // requests outlive the second signal
	sigs := make(chan os.Signal, 2)
	go func() {
		for !srv.called("POST /v1/completions") {
			time.Sleep(10 * time.Millisecond)
		}
		sigs <- os.Interrupt
		time.Sleep(2 * time.Second)
		sigs <- os.Interrupt
	}()
	out := filepath.Join(t.TempDir(), "r.jsonl")
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"--backend", "vllm", "--base-url", srv.srv.URL, "--tokenizer", "o200k_base",
		"--dataset-name", "random-ids", "--num-prompts", "50", "--random-input-len", "8", "--random-output-len", "4",
		"--warmup-requests", "0", "--output-file", out},
		IO{Stdout: &stdout, Stderr: &stderr, Signals: sigs, Exit: func(int) { t.Error("exited at once on the second signal") }})
	if code != exit.Interrupted {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exit.Interrupted, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted again: cancelling what is in flight") {
		t.Errorf("stderr: %s", stderr.String())
	}
	if m := readLine(t, out); m["interrupted"] != true {
		t.Errorf("interrupted = %v", m["interrupted"])
	}
}

// Secrets given on the command line or in the environment never appear in
// what benchserve prints or writes.
func TestSecretsStayOut(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, 0, 0)
	u := strings.Replace(srv.srv.URL, "http://", "http://user:pa55word@", 1)
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, stdout, stderr := run(t, map[string]string{"OPENAI_API_KEY": "sk-SECRET-1"},
		"--backend", "sglang-oai-chat", "--base-url", u, "--tokenizer", "o200k_base", "--header", "X-Api-Key=SECRET-2",
		"--dataset-name", "random-ids", "--num-prompts", "2", "--random-input-len", "4", "--random-output-len", "2",
		"--print-requests", "--output-details", "--output-file", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	data, _ := os.ReadFile(out)
	for _, secret := range []string{"sk-SECRET-1", "SECRET-2", "pa55word"} {
		for name, text := range map[string]string{"stdout": stdout, "stderr": stderr, "result": string(data)} {
			if strings.Contains(text, secret) {
				t.Errorf("%s contains %q", name, secret)
			}
		}
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if h := srv.headers[0]; h.Get("Authorization") != "Bearer sk-SECRET-1" || h.Get("X-Api-Key") != "SECRET-2" {
		t.Errorf("the secrets did not reach the server: %v", h)
	}
}

// TLS is verified by default; --cacert trusts a private CA and --insecure
// turns verification off.
func TestTLS(t *testing.T) {
	t.Parallel()
	f := &fakeServer{}
	f.srv = httptest.NewTLSServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.srv.Certificate().Raw}), 0o644)
	base := []string{"--backend", "vllm", "--base-url", f.srv.URL, "--tokenizer", "o200k_base", "--dataset-name", "random-ids",
		"--num-prompts", "2", "--random-input-len", "4", "--random-output-len", "2", "--ready-check-timeout-sec", "1",
		"--output-file", filepath.Join(dir, "r.jsonl")}
	code, _, stderr := run(t, nil, base...)
	if code != exit.Failure || !strings.Contains(stderr, "certificate") {
		t.Errorf("unverified server: exit %d, stderr %q", code, stderr)
	}
	for _, extra := range [][]string{{"--cacert", ca}, {"--insecure"}} {
		if code, stdout, stderr := run(t, nil, append(base, extra...)...); code != 0 {
			t.Errorf("%v: exit %d\n%s\n%s", extra, code, stdout, stderr)
		}
	}
	if code, _, stderr := run(t, nil, append(base, "--cacert", filepath.Join(dir, "r.jsonl"))...); code != exit.Usage || !strings.Contains(stderr, "--cacert") {
		t.Errorf("bad --cacert: exit %d, %q", code, stderr)
	}
}

func TestRequestTimeout(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, 2*time.Second, 0)
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, stdout, stderr := run(t, nil, "--backend", "vllm", "--base-url", srv.srv.URL, "--tokenizer", "o200k_base",
		"--dataset-name", "random-ids", "--num-prompts", "2", "--random-input-len", "4", "--random-output-len", "2",
		"--request-timeout", "0.3", "--warmup-requests", "0", "--output-file", out, "--output-details")
	if code != exit.AllFailed {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "exceeded its 300ms limit") {
		t.Errorf("stderr = %q", stderr)
	}
}

// --record-file gets one JSON line per measured request (not the warmup),
// with its gaps, agreeing with the result line's details.
func TestRecordFile(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, 2*time.Millisecond, time.Millisecond)
	dir := t.TempDir()
	out, recs := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "records.jsonl")
	code, stdout, stderr := run(t, nil, "--backend", "vllm", "--base-url", srv.srv.URL, "--tokenizer", "o200k_base",
		"--dataset-name", "random-ids", "--num-prompts", "5", "--random-input-len", "8", "--random-output-len", "4",
		"--random-range-ratio", "1", "--record-file", recs, "--output-file", out, "--output-details")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(recs)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d record lines, want 5:\n%s", len(lines), data)
	}
	m := readLine(t, out)
	itls, _ := m["itls"].([]any)
	for _, line := range lines {
		var r struct {
			Seq     int       `json:"seq"`
			Success bool      `json:"success"`
			ITL     []float64 `json:"itl"`
			Output  int       `json:"output_len"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("record line %q: %v", line, err)
		}
		want, _ := itls[r.Seq].([]any)
		if !r.Success || r.Output != 4 || len(r.ITL) != 3 || len(want) != 3 {
			t.Errorf("record %+v (details itls %v)", r, want)
		}
	}
}
