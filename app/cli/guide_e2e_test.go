package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"benchserve/sim"
)

// guideCommands are the benchmark commands of SGLang's Bench Serving Guide
// (both editions; launch_server lines left out), in the guide's order, as
// printed, with "python3 -m sglang.bench_serving" written "benchserve" and
// "python3 -m sglang.bench_one_batch_server" written "benchserve
// one-batch". End-to-end 9 has the guide's typos fixed as its notes say:
// one --mooncake-workload, and --use-trace-timestamps without "true".
var guideCommands = []struct {
	name, cmd string
	// stderr: the lines the command prints there, in order, as
	// wildMatch patterns; one starting with "?" may be absent. Any other
	// line fails the test.
	stderr []string
	// calls: control-plane paths the server must have seen.
	calls []string
}{
	{name: "Quick start: native /generate", cmd: `benchserve
		--backend sglang
		--host 127.0.0.1 --port 30000
		--num-prompts 1000
		--model meta-llama/Llama-3.1-8B-Instruct`},
	{name: "Quick start: OpenAI completions", cmd: `benchserve
		--backend vllm
		--base-url http://127.0.0.1:8000
		--num-prompts 1000
		--model meta-llama/Llama-3.1-8B-Instruct`},
	{name: "Fair embedding comparison: SGLang", cmd: `benchserve
		--backend sglang-embedding
		--model google/embeddinggemma-300m
		--dataset-name random
		--random-input-len 2048
		--num-prompts 300
		--max-concurrency 64
		--warmup-requests 3
		--flush-cache`, calls: []string{"/flush_cache"}},
	{name: "Fair embedding comparison: vLLM", cmd: `benchserve
		--backend vllm-embedding
		--model google/embeddinggemma-300m
		--dataset-name random
		--random-input-len 2048
		--num-prompts 300
		--max-concurrency 64
		--warmup-requests 3
		--flush-cache`, calls: []string{"/reset_prefix_cache"}},
	{name: "Example 1: image dataset, 3 images a request", cmd: `benchserve
		--backend sglang-oai-chat
		--dataset-name image
		--num-prompts 500
		--image-count 3
		--image-resolution 720p
		--random-input-len 512
		--random-output-len 512`},
	{name: "Example 2: random dataset, 3000 prompts", cmd: `benchserve
		--backend sglang
		--dataset-name random
		--num-prompts 3000
		--random-input 1024
		--random-output 1024
		--random-range-ratio 0.5`},
	{name: "Example 3: SPEED-Bench, mixed category", cmd: `benchserve
		--backend sglang
		--dataset-name speed-bench
		--dataset-path /path/to/throughput_1k.jsonl
		--speed-bench-category mixed
		--speed-bench-output-len 512
		--num-prompts 512`},
	{name: "End-to-end 1: native /generate, streaming, rate 100, cap 512, details", cmd: `benchserve
		--backend sglang
		--host 127.0.0.1 --port 30000
		--model meta-llama/Llama-3.1-8B-Instruct
		--dataset-name random
		--random-input-len 1024 --random-output-len 1024 --random-range-ratio 0.5
		--num-prompts 2000
		--request-rate 100
		--max-concurrency 512
		--output-file sglang_random.jsonl --output-details`},
	{name: "End-to-end 2: OpenAI completions (vLLM), ShareGPT", cmd: `benchserve
		--backend vllm
		--base-url http://127.0.0.1:8000
		--model meta-llama/Llama-3.1-8B-Instruct
		--dataset-name sharegpt
		--num-prompts 1000
		--sharegpt-output-len 256`},
	{name: "End-to-end 3: OpenAI chat completions, streaming, chat template", cmd: `benchserve
		--backend vllm-chat
		--base-url http://127.0.0.1:8000
		--model meta-llama/Llama-3.1-8B-Instruct
		--dataset-name random
		--num-prompts 500
		--apply-chat-template`,
		stderr: []string{"benchserve: note: --apply-chat-template: --dataset-name random ignores it (its prompts are random token text, sent as is)"}},
	{name: "End-to-end 4: images with a chat template (VLM)", cmd: `benchserve
		--backend sglang
		--host 127.0.0.1 --port 30000
		--model your-vlm-model
		--dataset-name image
		--image-count 2
		--image-resolution 720p
		--random-input-len 128 --random-output-len 256
		--num-prompts 200
		--apply-chat-template`},
	{name: "End-to-end 4a: custom resolution", cmd: `benchserve
		--backend sglang
		--host 127.0.0.1 --port 30000
		--model your-vlm-model
		--dataset-name image
		--image-count 1
		--image-resolution 512x768
		--random-input-len 64 --random-output-len 128
		--num-prompts 100
		--apply-chat-template`},
	{name: "End-to-end 4b: PNG, blank content, 1080p", cmd: `benchserve
		--backend sglang
		--host 127.0.0.1 --port 30000
		--model your-vlm-model
		--dataset-name image
		--image-count 1
		--image-resolution 1080p
		--image-format png
		--image-content blank
		--random-input-len 64 --random-output-len 128
		--num-prompts 100
		--apply-chat-template`},
	{name: "End-to-end 5: generated shared prefix", cmd: `benchserve
		--backend sglang
		--host 127.0.0.1 --port 30000
		--model meta-llama/Llama-3.1-8B-Instruct
		--dataset-name generated-shared-prefix
		--gsp-num-groups 64 --gsp-prompts-per-group 16
		--gsp-system-prompt-len 2048 --gsp-question-len 128 --gsp-output-len 256
		--num-prompts 1024`,
		stderr: []string{"benchserve: note: --num-prompts: not used by --dataset-name generated-shared-prefix, which sends --gsp-num-groups × --gsp-prompts-per-group = 4 requests"}},
	{name: "End-to-end 5 (zipf): prefix popularity", cmd: `benchserve
		--backend sglang
		--host 127.0.0.1 --port 30000
		--model meta-llama/Llama-3.1-8B-Instruct
		--dataset-name generated-shared-prefix
		--gsp-num-groups 64 --gsp-prompts-per-group 16
		--gsp-system-prompt-len 2048 --gsp-question-len 128 --gsp-output-len 256
		--gsp-group-distribution zipf --gsp-zipf-alpha 1.2
		--seed 42`},
	{name: "End-to-end 6: tokenized prompts (ids), native backend only", cmd: `benchserve
		--backend sglang
		--host 127.0.0.1 --port 30000
		--model meta-llama/Llama-3.1-8B-Instruct
		--dataset-name random
		--tokenize-prompt
		--random-input-len 2048 --random-output-len 256 --random-range-ratio 0.2`},
	// The simulator serves SGLang's /start_profile and /stop_profile (it
	// records no trace) and /flush_cache, so the run is the guide's.
	{name: "End-to-end 7: profiling and cache flush", cmd: `benchserve
		--backend sglang
		--host 127.0.0.1 --port 30000
		--model meta-llama/Llama-3.1-8B-Instruct
		--profile
		--flush-cache`, calls: []string{"/flush_cache", "/start_profile", "/stop_profile"}},
	// TensorRT-LLM's stream carries no token counts, so trt reports the
	// requested lengths (as the reference does); with --disable-ignore-eos
	// a request may stop early, and then the server's own count says so.
	{name: "End-to-end 8: TensorRT-LLM streaming endpoint", cmd: `benchserve
		--backend trt
		--base-url http://127.0.0.1:8000
		--model your-trt-llm-model
		--dataset-name random
		--num-prompts 100
		--disable-ignore-eos`,
		stderr: []string{"?benchserve: warning: the server counted * generated tokens during the run, the client *: they differ by more than 1% (other clients on the server, or token counts that do not match)"}},
	{name: "End-to-end 9: mooncake trace", cmd: `benchserve
		--backend sglang
		--host 127.0.0.1 --port 30000
		--model model-name
		--dataset-name mooncake
		--mooncake-slowdown-factor 1.0
		--mooncake-num-rounds 1000
		--mooncake-workload conversation
		--use-trace-timestamps
		--random-output-len 256`,
		stderr: []string{
			"benchserve: note: --random-output-len: --dataset-name mooncake ignores it (output lengths come from the trace)",
			"benchserve: note: --mooncake-workload: not used with --dataset-path, which names the trace to read",
		}},
	{name: "End-to-end 10: bench_serving with --fake-prefill", cmd: `benchserve
		--backend sglang
		--host 127.0.0.1 --port 30001
		--model meta-llama/Llama-3.1-8B-Instruct
		--dataset-name random
		--num-prompts 500
		--random-input-len 1024 --random-output-len 256
		--fake-prefill`},
	{name: "End-to-end 10: bench_one_batch_server with --fake-prefill", cmd: `benchserve one-batch
		--base-url http://127.0.0.1:30001
		--model-path meta-llama/Llama-3.1-8B-Instruct
		--batch-size 32 --input-len 1024 --output-len 256
		--fake-prefill`},
}

// smaller are the sizes the test runs the guide's commands at, so that
// all of them take seconds: every flag stays, with a smaller value.
var smaller = map[string]string{
	"--num-prompts": "3", "--random-input-len": "32", "--random-input": "32", "--random-output-len": "8", "--random-output": "8",
	"--sharegpt-output-len": "8", "--speed-bench-output-len": "8", "--mooncake-num-rounds": "2",
	"--gsp-num-groups": "2", "--gsp-prompts-per-group": "2", "--gsp-system-prompt-len": "32", "--gsp-question-len": "8", "--gsp-output-len": "8",
	"--batch-size": "4", "--input-len": "32", "--output-len": "8",
	"--image-count": "1", // random HD images take most of the time
}

// Every benchmark command of the guide runs against the simulator as
// written: the server's address pointed at a simulator serving the
// command's model, a local file where the reference would download one
// (ShareGPT for sharegpt and random, the mooncake trace) or where the
// guide names the user's own (SPEED-Bench), the sizes made small, the
// result file in a directory of the test's (a relative name would land
// in the source tree). All run at once, each with its own simulator. Each
// exits 0, writes its result, calls what its flags ask of the server, and
// prints nothing on stderr but the notes on flags it ignores (and, for
// trt, the warning that its counts are not the server's).
func TestGuideCommands(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	files := guideData(t, data)
	env := map[string]string{"XDG_CACHE_HOME": data, "HF_HOME": data, "HF_ENDPOINT": "http://127.0.0.1:1"}
	// All at once: each waits the reference's 1 s after its warmup, and
	// -parallel would allow only GOMAXPROCS subtests at a time.
	type outcome struct {
		args           []string
		srv            *pathSim
		dir            string
		code           int
		stdout, stderr string
	}
	outs := make([]outcome, len(guideCommands))
	var wg sync.WaitGroup
	for i, g := range guideCommands {
		args := strings.Fields(g.cmd)[1:]
		model := "benchserve-sim"
		if j := slices.IndexFunc(args, func(a string) bool { return a == "--model" || a == "--model-path" }); j >= 0 {
			model = args[j+1]
		}
		o := &outs[i]
		o.srv, o.dir = guideSim(t, model), t.TempDir()
		o.args = asRun(args, o.srv.url, files, o.dir)
		wg.Go(func() { o.code, o.stdout, o.stderr = run(t, env, o.args...) })
	}
	wg.Wait()
	for i, g := range guideCommands {
		o := outs[i]
		t.Run(g.name, func(t *testing.T) {
			if o.code != 0 {
				t.Fatalf("exit %d\nargs: %q\nstdout:\n%s\nstderr:\n%s", o.code, o.args, o.stdout, o.stderr)
			}
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(o.stderr), "\n") {
				if l != "" && !progressLine.MatchString(l) {
					lines = append(lines, l)
				}
			}
			if !matchLines(lines, g.stderr) {
				t.Errorf("stderr:\n%s\nwant:\n%s", o.stderr, strings.Join(g.stderr, "\n"))
			}
			for _, p := range g.calls {
				if !o.srv.called(p) {
					t.Errorf("the server saw no %s", p)
				}
			}
			checkResult(t, o.dir, o.args[0] == "one-batch")
		})
	}
}

// progressLine is a dataset build's progress ("Generating images: 9/18
// (2 s)"), printed when a build takes seconds, as on a loaded machine.
var progressLine = regexp.MustCompile(`^[A-Za-z ]+: \d+(/\d+)? \(\d+ s\)$`)

// asRun is args pointed at the simulator at base, with the local files,
// the smaller sizes, and the result file in dir (under the name given,
// else result.jsonl).
func asRun(args []string, base string, files map[string]string, dir string) []string {
	port := base[strings.LastIndex(base, ":")+1:]
	dataset, hasPath, addressed, hasOut := "sharegpt", false, false, false
	resultFlag := "--output-file"
	if args[0] == "one-batch" {
		dataset, resultFlag = "random", "--result-filename"
	}
	out := make([]string, 0, len(args)+4)
	for i := 0; i < len(args); i++ {
		a := args[i]
		out = append(out, a)
		if i+1 == len(args) || strings.HasPrefix(args[i+1], "--") {
			continue
		}
		v := args[i+1]
		switch a {
		case "--port":
			v, addressed = port, true
		case "--base-url":
			v, addressed = base, true
		case "--dataset-name":
			dataset = v
		case "--dataset-path":
			v, hasPath = files[dataset], true
		case resultFlag:
			v, hasOut = filepath.Join(dir, v), true
		}
		if s, ok := smaller[a]; ok {
			v = s
		}
		out = append(out, v)
		i++
	}
	if !addressed {
		out = append(out, "--host", "127.0.0.1", "--port", port)
	}
	if f := files[dataset]; f != "" && !hasPath {
		out = append(out, "--dataset-path", f)
	}
	if !hasOut {
		out = append(out, resultFlag, filepath.Join(dir, "result.jsonl"))
	}
	return out
}

// guideData writes the local datasets: a small ShareGPT file, a
// SPEED-Bench file and a mooncake trace.
func guideData(t *testing.T, dir string) map[string]string {
	t.Helper()
	var sg []map[string]any
	for i := range 20 {
		sg = append(sg, map[string]any{"id": fmt.Sprint(i), "conversations": []map[string]string{
			{"from": "human", "value": fmt.Sprintf("Tell me about topic %d in a few sentences, with some detail.", i)},
			{"from": "gpt", "value": fmt.Sprintf("Topic %d is interesting because it has many facets worth knowing about.", i)},
		}})
	}
	b, _ := json.Marshal(sg)
	var speed, trace strings.Builder
	for i := range 6 {
		fmt.Fprintf(&speed, `{"category": %q, "turns": ["Question %d: explain it step by step."]}`+"\n", []string{"low_entropy", "mixed", "high_entropy"}[i%3], i)
	}
	for i := range 4 {
		fmt.Fprintf(&trace, `{"timestamp": %d, "input_length": 64, "output_length": 8, "hash_ids": [%d, %d]}`+"\n", 20*i, i, i+1)
	}
	files := map[string]string{
		"sharegpt":    filepath.Join(dir, "sharegpt.json"),
		"random":      filepath.Join(dir, "sharegpt.json"),
		"speed-bench": filepath.Join(dir, "throughput_1k.jsonl"),
		"mooncake":    filepath.Join(dir, "conversation_trace.jsonl"),
	}
	for f, text := range map[string]string{files["sharegpt"]: string(b), files["speed-bench"]: speed.String(), files["mooncake"]: trace.String()} {
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// pathSim is the simulator serving one model, remembering the paths it
// was asked for.
type pathSim struct {
	url   string
	mu    sync.Mutex
	paths map[string]bool
}

func guideSim(t *testing.T, model string) *pathSim {
	t.Helper()
	cfg, err := sim.Preset(sim.PresetInstant)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Model = model
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ps := &pathSim{paths: map[string]bool{}}
	h := s.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps.mu.Lock()
		ps.paths[r.URL.Path] = true
		ps.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); s.Close() })
	ps.url = srv.URL
	return ps
}

func (ps *pathSim) called(path string) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.paths[path]
}

// checkResult finds the one result file the command wrote in dir and
// checks that it holds a run with completed requests.
func checkResult(t *testing.T, dir string, oneBatch bool) {
	t.Helper()
	found, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(found) != 1 {
		t.Fatalf("result files in the working directory: %q, want one", found)
	}
	m := readLine(t, found[0])
	key := "completed"
	if oneBatch {
		key = "total_output_tokens"
	}
	if num(t, m, key) <= 0 {
		b, _ := os.ReadFile(found[0])
		t.Errorf("%s: %s = %v\n%s", found[0], key, m[key], b)
	}
}

// matchLines reports whether lines are patterns, in order, where a
// pattern starting with "?" may match no line.
func matchLines(lines, patterns []string) bool {
	for _, p := range patterns {
		opt := strings.HasPrefix(p, "?")
		p = strings.TrimPrefix(p, "?")
		if len(lines) > 0 && wildMatch(p, lines[0]) {
			lines = lines[1:]
		} else if !opt {
			return false
		}
	}
	return len(lines) == 0
}

// wildMatch reports whether s is pattern, where each * in pattern stands
// for any text.
func wildMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return s == pattern
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}
