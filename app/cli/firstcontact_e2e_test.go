package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"benchserve/internal/testenv"
	"benchserve/internal/version"
)

// oneLine fails unless stderr is a single line holding want, with no Go
// panic or stack trace in either stream.
func oneLine(t *testing.T, stdout, stderr, want string) {
	t.Helper()
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr %q does not contain %q", stderr, want)
	}
	if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 0 {
		t.Errorf("error is %d lines, want one:\n%s", n+1, stderr)
	}
	for _, s := range []string{stdout, stderr} {
		if strings.Contains(s, "panic") || strings.Contains(s, "goroutine ") {
			t.Errorf("output has a panic:\n%s", s)
		}
	}
}

// Addresses a new user mistypes: one line each, never a panic. Names that
// do not resolve are retried like any unreachable server; ports out of
// range are usage errors before any connection.
func TestFirstContactAddresses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--base-url", "http://no-such-host.invalid:8000"}, 1, "server at http://no-such-host.invalid:8000/v1/models is not ready after 1s"},
		{[]string{"--host", "localhos.invalid"}, 1, "server at http://localhos.invalid:30000/v1/models is not ready after 1s"},
		{[]string{"--port", "99999"}, 2, "benchserve: error: --port 99999: must be between 1 and 65535"},
		{[]string{"--port", "0"}, 2, "--port 0: must be between 1 and 65535"},
		{[]string{"--base-url", "http://127.0.0.1:65536"}, 2, "benchserve: error: --base-url http://127.0.0.1:65536: port 65536 is out of range (1-65535)"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			args := append(c.args, "--ready-check-timeout-sec", "1", "--tokenizer", "o200k_base",
				"--output-file", filepath.Join(t.TempDir(), "r.jsonl"))
			code, stdout, stderr := run(t, nil, args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout, stderr)
			}
			oneLine(t, stdout, stderr, c.want)
			if c.code == 2 && stdout != "" {
				t.Errorf("a usage error printed to stdout:\n%s", stdout)
			}
		})
	}
}

// A panic on the command's goroutine is one line and exit 1, unless
// BENCHSERVE_TRACEBACK asks for Go's own report.
func TestFirstContactInternalError(t *testing.T) {
	args := []string{"--base-url", "http://127.0.0.1:1", "--tokenizer", "o200k_base", "--dataset-name", "random-ids",
		"--ready-check-timeout-sec", "0", "--output-file", filepath.Join(t.TempDir(), "r.jsonl")}
	env := map[string]string{}
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			panic("boom")
		}
		return env[k]
	}
	var out, errb strings.Builder
	code := Main(t.Context(), args, IO{Stdout: &out, Stderr: &errb, Getenv: getenv})
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if got, want := errb.String(), "benchserve: internal error: boom; set BENCHSERVE_TRACEBACK=1 for the stack\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}

	env[tracebackEnv] = "1"
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("with %s set, recovered %v, want the panic itself", tracebackEnv, r)
		}
	}()
	Main(t.Context(), args, IO{Stdout: &out, Stderr: &errb, Getenv: getenv})
	t.Error("Main returned; the panic should have gone through")
}

// Bad values and combinations are usage errors before any call to the
// server, with the reference's message where it prints one.
func TestFirstContactBadValues(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--dataset-name", "image", "--image-format", "gif"}, "--image-format gif: choose jpeg or png"},
		{[]string{"--dataset-name", "image", "--image-resolution", "8k"}, "--image-resolution 8k: unsupported resolution"},
		{[]string{"--dataset-name", "image", "--backend", "vllm"}, "--backend vllm: the image dataset sends images only to sglang, sglang-native, sglang-oai-chat, vllm-chat"},
		{[]string{"--dataset-name", "mmmu", "--backend", "lmdeploy-chat"}, "--backend lmdeploy-chat: the mmmu dataset sends images only to"},
		{[]string{"--dataset-name", "random-ids", "--random-range-ratio", "2"}, "--random-range-ratio 2: the shortest length 2048 exceeds --random-input-len 1024"},
		{[]string{"--dataset-name", "random-ids", "--random-input-len", "10", "--random-output-len", "10", "--random-range-ratio", "1.1"}, "--random-range-ratio 1.1: the shortest length 11 exceeds --random-input-len 10"},
		{[]string{"--dataset-name", "random-ids", "--num-prompts", "0"}, "--num-prompts 0: --dataset-name random-ids would send no requests; give at least 1"},
		{[]string{"--dataset-name", "sharegpt", "--sharegpt-output-len", "3"}, "--sharegpt-output-len 3: too small, must be at least 4"},
		{[]string{"--dataset-name", "generated-shared-prefix", "--gsp-num-turns", "2"}, "--gsp-num-turns 2: multi-turn conversations need a chat backend"},
		{[]string{"--dataset-name", "mooncake", "--mooncake-num-rounds", "0"}, "--mooncake-num-rounds 0: must be at least 1"},
		{[]string{"--dataset-name", "speed-bench"}, "--dataset-path must point to the SPEED-Bench JSONL file"},
		{[]string{"--backend", "trt", "--dataset-name", "random-ids"}, "benchserve: error: Please provide a model using `--model` when using `trt` backend."},
		{[]string{"--backend", "truss", "--dataset-name", "random-ids"}, "benchserve: error: Please provide a model with `--model` when using truss backend. e.g. --model meta-llama/Llama-3.1-8B-Instruct"},
		{[]string{"--backend", "vllm-embedding", "--dataset-name", "mooncake"}, "benchserve: error: mooncake dataset is unsupported for embeddings benchmark"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			srv := newFakeServer(t, 0, 0)
			args := append([]string{"--base-url", srv.srv.URL, "--tokenizer", "o200k_base",
				"--output-file", filepath.Join(t.TempDir(), "r.jsonl")}, c.args...)
			code, stdout, stderr := run(t, nil, args...)
			if code != 2 {
				t.Errorf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			oneLine(t, stdout, stderr, c.want)
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if len(srv.calls) > 0 {
				t.Errorf("the server was called before the usage error: %v", srv.calls)
			}
		})
	}
}

// A flag the run would not use is accepted, as by the reference: one note
// on stderr names it and says why it has no effect, and the run goes on.
func TestFirstContactUnusedFlags(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, 0, 0)
	dir := t.TempDir()
	out, trace := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "trace.jsonl")
	if err := os.WriteFile(trace, []byte(`{"timestamp": 0, "input_length": 8, "output_length": 3, "hash_ids": [1]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, nil, "--base-url", srv.srv.URL, "--tokenizer", "o200k_base", "--dataset-name", "mooncake",
		"--dataset-path", trace, "--random-output-len", "64", "--output-file", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if want := "benchserve: note: --random-output-len: --dataset-name mooncake ignores it (output lengths come from the trace)\n"; stderr != want {
		t.Errorf("stderr = %q, want %q", stderr, want)
	}
	if got := field(t, stdout, "Total generated tokens:"); got != "3" {
		t.Errorf("generated tokens = %s, want the trace's 3", got)
	}

	code, stdout, stderr = run(t, nil, "--base-url", srv.srv.URL, "--tokenizer", "o200k_base", "--dataset-name", "random-ids",
		"--num-prompts", "2", "--random-input-len", "4", "--random-output-len", "2", "--max-concurrency", "0", "--output-file", out,
		"--extra-request-body", "") // empty is none, as the reference's "if args.extra_request_body"
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if want := "benchserve: note: --max-concurrency: 0 sets no limit on requests in flight, as in the reference\n"; stderr != want {
		t.Errorf("stderr = %q, want %q", stderr, want)
	}
	if got := field(t, stdout, "Max request concurrency:"); got != "not set" {
		t.Errorf("Max request concurrency: %q", got)
	}
}

// Readiness errors that waiting cannot fix end at once: a URL without a
// scheme or with a wrong one is a usage error, a 401 is a failure that
// says how to send a key.
func TestFirstContactHopelessReadiness(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.jsonl")
	for _, c := range []struct{ url, want string }{
		{"htp://x", "benchserve: error: --base-url htp://x: unsupported scheme htp:// (use http:// or https://)"},
		{"localhost:3000", "benchserve: error: --base-url localhost:3000: no scheme; did you mean --base-url http://localhost:3000?"},
	} {
		code, stdout, stderr := run(t, nil, "--base-url", c.url, "--tokenizer", "o200k_base", "--output-file", out)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2", c.url, code)
		}
		oneLine(t, stdout, stderr, c.want)
	}

	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.Error(w, "missing key", http.StatusUnauthorized)
	}))
	defer srv.Close()
	code, stdout, stderr := run(t, nil, "--base-url", srv.URL, "--tokenizer", "o200k_base", "--output-file", out)
	if code != 1 || asked.Load() != 1 {
		t.Errorf("exit %d after %d requests, want 1 at the first (no retry)", code, asked.Load())
	}
	oneLine(t, stdout, stderr, "benchserve: error: the server at "+srv.URL+"/v1/models answered 401 Unauthorized to the readiness check: no key was sent: set OPENAI_API_KEY")
	if !strings.Contains(stdout, "Server at "+srv.URL+"/v1/models is not ready. Exiting.\n") {
		t.Errorf("stdout lacks the reference's last line:\n%s", stdout)
	}
}

// A tokenizer the user did not name fails with where its name came from.
func TestFirstContactTokenizerSource(t *testing.T) {
	for _, c := range []struct {
		modelInfo string // the body of /model_info; "" answers 404
		args      []string
		want      string
	}{
		{"", nil, "benchserve: error: tokenizer of the model the server lists at /v1/models (--model was not given): tokenizer org/detected-model: "},
		{`{"tokenizer_path": "org/served-tokenizer"}`, nil, "benchserve: error: tokenizer named by the server's /model_info: tokenizer org/served-tokenizer: "},
		{"", []string{"--model", "org/given-model"}, "benchserve: error: --model: tokenizer org/given-model: "},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.URL.Path == "/v1/models":
				w.Write([]byte(`{"data": [{"id": "org/detected-model"}]}`))
			case r.URL.Path == "/model_info" && c.modelInfo != "":
				w.Write([]byte(c.modelInfo))
			default:
				http.NotFound(w, r)
			}
		}))
		dir := t.TempDir()
		args := append([]string{"--base-url", srv.URL, "--dataset-name", "random-ids", "--output-file", filepath.Join(dir, "r.jsonl")}, c.args...)
		code, stdout, stderr := run(t, map[string]string{"HF_HUB_OFFLINE": "1", "HF_HOME": dir}, args...)
		srv.Close()
		if code != 1 {
			t.Errorf("%s: exit %d, want 1", c.want, code)
		}
		oneLine(t, stdout, stderr, c.want)
		if !strings.Contains(stderr, "; pass --tokenizer with a Hub id, a local directory or tokenizer.json, or a built-in encoding such as o200k_base") {
			t.Errorf("no --tokenizer hint in %q", stderr)
		}
	}
}

// The second Namespace line shows what the run filled in, as the
// reference's print(args) does: the detected model and the default port.
func TestFirstContactNamespaceShowsDetectedModel(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, 0, 0)
	code, stdout, stderr := run(t, nil, "--base-url", srv.srv.URL, "--tokenizer", "o200k_base", "--dataset-name", "random-ids",
		"--num-prompts", "1", "--random-input-len", "4", "--random-output-len", "2", "--output-file", filepath.Join(t.TempDir(), "r.jsonl"))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var first, second string
	for _, line := range strings.Split(stdout, "\n") {
		switch {
		case strings.HasPrefix(line, "benchmark_args=Namespace("):
			first = line
		case strings.HasPrefix(line, "Namespace("):
			second = line
		}
	}
	for _, want := range []string{"port=None,", "model=None,"} {
		if !strings.Contains(first, want) {
			t.Errorf("benchmark_args line lacks %q:\n%s", want, first)
		}
	}
	for _, want := range []string{"port=30000,", "model='fake-model',"} {
		if !strings.Contains(second, want) {
			t.Errorf("second Namespace line lacks %q:\n%s", want, second)
		}
	}
}

// A refused connection reads the same in the readiness wait and in the
// warmup failure, which names the URL it posted to.
func TestFirstContactErrorsReadTheSame(t *testing.T) {
	t.Parallel()
	addr := testenv.RefusedAddr(t)
	refused := "cannot connect to " + addr + ": connection refused"
	base := []string{"--backend", "vllm", "--base-url", "http://" + addr, "--tokenizer", "o200k_base", "--dataset-name", "random-ids",
		"--num-prompts", "1", "--random-input-len", "4", "--random-output-len", "2", "--output-file", filepath.Join(t.TempDir(), "r.jsonl")}

	code, stdout, stderr := run(t, nil, append(base, "--ready-check-timeout-sec", "1")...)
	if code != 1 {
		t.Errorf("ready check: exit %d", code)
	}
	oneLine(t, stdout, stderr, "(last attempt: "+refused+")")

	code, stdout, stderr = run(t, nil, append(base, "--ready-check-timeout-sec", "0", "--model", "m")...)
	if code != 1 {
		t.Errorf("warmup: exit %d", code)
	}
	where := refused + " (POST http://" + addr + "/v1/completions)"
	oneLine(t, stdout, stderr, "benchserve: error: Warmup failed - Please make sure benchmark arguments are correctly specified. Error: "+where+"\n")
	if strings.Contains(stdout, "Warmup failed") {
		t.Errorf("the warmup failure is printed twice, on stdout too:\n%s", stdout)
	}
}

// --version prints the client's version and exits 0, whatever else is on
// the command line; the result line records it after the reference keys.
func TestFirstContactVersion(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--version"}, {"--vers"}, {"--backend", "vllm", "--version", "--gsp-group-distribution", "zipf"}} {
		code, stdout, stderr := run(t, nil, args...)
		if code != 0 || stdout != "benchserve "+version.String()+"\n" || stderr != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	if version.String() != "devel" { // a test binary has no module version or VCS stamp
		t.Errorf("version.String() = %q in a test", version.String())
	}

	srv := newFakeServer(t, 0, 0)
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, stdout, stderr := run(t, nil, "--base-url", srv.srv.URL, "--tokenizer", "o200k_base", "--dataset-name", "random-ids",
		"--num-prompts", "1", "--random-input-len", "4", "--random-output-len", "2", "--output-file", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if m := readLine(t, out); m["client_version"] != version.String() {
		t.Errorf("client_version = %v, want %q", m["client_version"], version.String())
	}
	data, _ := os.ReadFile(out)
	if line := string(data); strings.Index(line, `"client_version": `) < strings.Index(line, `"max_concurrent_requests": `) {
		t.Errorf("client_version is not after the reference keys:\n%s", line)
	}
}

// A first word that is not a flag or a command is named as a command.
func TestFirstContactUnknownCommand(t *testing.T) {
	for _, args := range [][]string{{"simm"}, {"bench", "--backend", "vllm"}} {
		code, stdout, stderr := run(t, nil, args...)
		want := `benchserve: error: unknown command "` + args[0] + `" (commands: sweep, ab, report, compare, merge, k8s-job, one-batch, sim, tokenize, calibrate; no command runs a benchmark)` + "\n"
		if code != 2 || stdout != "" || stderr != want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", args, code, stdout, stderr, want)
		}
	}
}
