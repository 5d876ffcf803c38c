package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"benchserve/internal/testenv"
	"benchserve/sim"
)

// batchRow is the part of a one-batch result row the tests read.
type batchRow struct {
	BatchSize   int      `json:"batch_size"`
	InputLen    int      `json:"input_len"`
	OutputLen   int      `json:"output_len"`
	Latency     float64  `json:"latency"`
	LastTTFT    float64  `json:"last_ttft"`
	Output      float64  `json:"output_throughput"`
	TotalOutput int      `json:"total_output_tokens"`
	LastGen     float64  `json:"last_gen_throughput"`
	CacheHit    *float64 `json:"cache_hit_rate"`
	KernelTimed bool     `json:"kernel_timed"`
}

func readRows(t *testing.T, path string) []batchRow {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []batchRow
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r batchRow
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		rows = append(rows, r)
	}
	return rows
}

// For batch sizes 1, 8 and 32, one-batch's last_ttft and latency are the
// simulator's own record of each batch within 2 ms: last_ttft from the
// batch's arrival to the write of the last prompt's first token, latency
// to the write that ended the stream.
func TestOneBatchAgainstSimTruth(t *testing.T) {
	testenv.Slow(t)         // times within 2 ms of the simulator's
	const tolerance = 0.002 // s
	testenv.KernelStamps(t)
	_, base := newSim(t, steadySim(30*time.Millisecond, 5*time.Millisecond))
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, stdout, stderr := run(t, nil, "one-batch", "--base-url", base, "--batch-size", "1", "8", "32",
		"--input-len", "256", "--output-len", "16", "--dataset-name", "random-ids", "--skip-warmup", "--result-filename", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	rows := readRows(t, out)
	type truthRec struct {
		Batch      string   `json:"batch"`
		Index      int      `json:"index"`
		Arrival    float64  `json:"arrival"`
		FirstChunk *float64 `json:"first_chunk"`
		End        *float64 `json:"end"`
		// [time, tokens, write]: the write began at time − write.
		Chunks [][3]float64 `json:"chunks"`
	}
	truth := getJSON[struct{ Requests []truthRec }](t, base+"/sim/truth")
	// Each batch's last first token and its end, as the interval from the
	// start of the write that carried them to its return: a busy
	// simulator stamps a write late, and no client can read before it.
	type span struct{ from, to float64 }
	type batch struct {
		n          int
		arrival    float64
		first, end span
	}
	later := func(a span, c [3]float64) span {
		if c[0] > a.to {
			return span{c[0] - c[2], c[0]}
		}
		return a
	}
	byID := map[string]*batch{}
	var order []string
	for _, r := range truth.Requests {
		if r.Batch == "" {
			continue
		}
		b := byID[r.Batch]
		if b == nil {
			b = &batch{arrival: r.Arrival}
			byID[r.Batch] = b
			order = append(order, r.Batch)
		}
		if r.FirstChunk == nil || r.End == nil || r.Arrival != b.arrival || len(r.Chunks) == 0 || r.Chunks[0][0] != *r.FirstChunk {
			t.Fatalf("batch %s prompt %d: first chunk %v, end %v, arrival %v (batch's %v), chunks %v", r.Batch, r.Index, r.FirstChunk, r.End, r.Arrival, b.arrival, r.Chunks)
		}
		b.n++
		b.first = later(b.first, r.Chunks[0])
		b.end = later(b.end, r.Chunks[len(r.Chunks)-1])
	}
	slices.SortFunc(order, func(a, b string) int { return int(math.Copysign(1, byID[a].arrival-byID[b].arrival)) })
	if len(rows) != 3 || len(order) != 3 {
		t.Fatalf("%d rows and %d batches in the truth, want 3 of each", len(rows), len(order))
	}
	for i, row := range rows {
		b := byID[order[i]]
		if b.n != row.BatchSize {
			t.Fatalf("row %d: batch size %d, the truth's batch has %d prompts", i, row.BatchSize, b.n)
		}
		// The error is how far outside the server's write the client put it.
		miss := func(got float64, s span) float64 {
			return got - math.Min(math.Max(got, s.from-b.arrival), s.to-b.arrival)
		}
		ttftErr, latErr := miss(row.LastTTFT, b.first), miss(row.Latency, b.end)
		t.Logf("bs=%d: last_ttft %.4f s (truth %.5f–%.5f, error %+.2f ms), latency %.4f s (truth %.5f–%.5f, error %+.2f ms), kernel-timed %v",
			row.BatchSize, row.LastTTFT, b.first.from-b.arrival, b.first.to-b.arrival, ttftErr*1e3,
			row.Latency, b.end.from-b.arrival, b.end.to-b.arrival, latErr*1e3, row.KernelTimed)
		// JSONL rounds both to 0.1 ms.
		if math.Abs(ttftErr) > tolerance+5e-5 || math.Abs(latErr) > tolerance+5e-5 {
			t.Errorf("bs=%d: last_ttft or latency more than %v s from the simulator's record", row.BatchSize, tolerance)
		}
		if row.TotalOutput != row.BatchSize*16 || !row.KernelTimed {
			t.Errorf("bs=%d: %d output tokens, kernel-timed %v", row.BatchSize, row.TotalOutput, row.KernelTimed)
		}
	}
}

// recorder is a proxy in front of the simulator that keeps every call and
// the bodies of /generate.
type recorder struct {
	mu     sync.Mutex
	calls  []string
	bodies [][]byte
}

func (rc *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.calls = append(rc.calls, r.Method+" "+r.URL.Path)
		if r.URL.Path == "/generate" {
			rc.bodies = append(rc.bodies, body)
		}
		rc.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
}

// The documented --fake-prefill command, against the simulator: the calls
// in the reference's order (§3.11) and the exact body, with the three
// sentinel keys, in the warmup and the measured batch.
func TestOneBatchFakePrefillBody(t *testing.T) {
	s := handlerSim(t)
	rec := &recorder{}
	srv := httptest.NewServer(rec.wrap(s.Handler()))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "result.jsonl")
	pyd := filepath.Join(t.TempDir(), "p.json")
	code, stdout, stderr := run(t, nil, "one-batch", "--base-url", srv.URL+"/", "--model-path", "meta-llama/Llama-3.1-8B-Instruct",
		"--batch-size", "4", "--input-len", "64", "--output-len", "8", "--fake-prefill", "--dataset-name", "random-ids",
		"--result-filename", out, "--pydantic-result-filename", pyd, "--show-report")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	rec.mu.Lock() // the handlers wrote them before answering
	defer rec.mu.Unlock()
	want := []string{"GET /server_info",
		"POST /flush_cache", "GET /metrics", "POST /generate", "GET /server_info", "GET /metrics", // warmup
		"POST /flush_cache", "GET /metrics", "POST /generate", "GET /server_info", "GET /metrics"}
	if !slices.Equal(rec.calls, want) {
		t.Errorf("calls:\n%s\nwant\n%s", strings.Join(rec.calls, "\n"), strings.Join(want, "\n"))
	}
	if len(rec.bodies) != 2 {
		t.Fatalf("%d /generate bodies", len(rec.bodies))
	}
	for i, newTokens := range []int{16, 8} {
		b := string(rec.bodies[i])
		head := fmt.Sprintf(`{"sampling_params": {"temperature": 0.0, "max_new_tokens": %d, "ignore_eos": true, "json_schema": null, "stream_interval": 1}, "return_logprob": false, "stream": true, "input_ids": [[`, newTokens)
		tail := `]], "bootstrap_host": "2.2.2.2", "bootstrap_room": 0, "skip_cache_insert": true}`
		if !strings.HasPrefix(b, head) || !strings.HasSuffix(b, tail) {
			t.Errorf("body %d:\n%.300s ... %s", i, b, b[max(0, len(b)-120):])
		}
		var v struct {
			InputIDs [][]int `json:"input_ids"`
		}
		if err := json.Unmarshal(rec.bodies[i], &v); err != nil || len(v.InputIDs) != 4 {
			t.Fatalf("body %d: %v, %d prompts", i, err, len(v.InputIDs))
		}
		inLen := []int{1024, 64}[i]
		for _, ids := range v.InputIDs {
			if len(ids) != inLen {
				t.Errorf("body %d: a prompt of %d ids, want %d", i, len(ids), inLen)
			}
		}
	}
	for _, line := range []string{"Warmup with batch_size=[4]", "batch size: 4", "input_len: 64", "output_len: 8",
		"Results are saved to " + out, "Input lens: [64]. Output lens: [8].", "|            4 |          64 |"} {
		if !strings.Contains(stdout, line) {
			t.Errorf("stdout has no %q:\n%s", line, stdout)
		}
	}
	rows := readRows(t, out)
	if len(rows) != 1 || rows[0].BatchSize != 4 || rows[0].InputLen != 64 || rows[0].OutputLen != 8 || rows[0].TotalOutput != 32 {
		t.Errorf("rows %+v", rows)
	}
	p, _ := os.ReadFile(pyd)
	if !strings.Contains(string(p), `"model_path": "meta-llama/Llama-3.1-8B-Instruct"`) || !strings.HasPrefix(string(p), "[\n  {\n") {
		t.Errorf("pydantic file:\n%s", p)
	}
}

// Bad command lines and a missing server end with one line and exit 2,
// before any request.
func TestOneBatchUsage(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	port := deadURL[strings.LastIndex(deadURL, ":")+1:]
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--batch-size"}, "argument --batch-size: expected at least one argument"},
		{[]string{"--batch-size", "0"}, "argument --batch-size: every value must be at least 1, got 0"},
		{[]string{"--backend", "tgi"}, "argument --backend: invalid choice: 'tgi'"},
		{[]string{"--disable-ignore-eos", "--backend", "vllm"}, "--disable-ignore-eos requires the sglang backend"},
		{[]string{"--disable-ignore-eos", "--fake-prefill"}, "--disable-ignore-eos is incompatible with --fake-prefill"},
		{[]string{"--lora-request-distribution", "skewed", "--lora-name", "a"}, "requires more than one adapter"},
		{[]string{"--lora-zipf-alpha", "1"}, "--lora-zipf-alpha must be > 1, got 1"},
		{[]string{"--apply-chat-template"}, "--apply-chat-template requires --fixed-prompt-file"},
		{[]string{"--dataset-name", "sharegpt", "--input-len", "1", "2"}, "Replay datasets take prompt lengths from the recorded data"},
		{[]string{"--dataset-name", "custom"}, "--dataset-name custom requires --dataset-path"},
		{[]string{"--cache-hit-rate", "1.5"}, "argument --cache-hit-rate: must be between 0 and 1, got 1.5"},
		{[]string{"--enable-lora"}, "unrecognized arguments: --enable-lora (benchserve never launches a server"},
		{[]string{"--speculative-algorithm", "EAGLE"}, "unrecognized arguments: --speculative-algorithm EAGLE (benchserve never launches a server: " +
			"start it with python -m sglang.launch_server and its flags, then point --base-url or --host/--port at it)"},
		{[]string{"--mod", "x"}, "ambiguous option: --mod could match --model-path, --model"},
		{[]string{"--port", port}, "nothing answers at http://127.0.0.1:" + port + ", and benchserve cannot launch a server"},
	}
	for _, tc := range tests {
		code, stdout, stderr := run(t, nil, append([]string{"one-batch"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q (want one line with %q); stdout %q", tc.args, code, stderr, tc.want, stdout)
		}
	}
}

// A server that stops mid-way: the case that fails is named in one line,
// exit 1, and the rows of the cases before it stay in the file.
func TestOneBatchKeepsRowsOnFailure(t *testing.T) {
	s := handlerSim(t)
	var mu sync.Mutex
	generates := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/generate" {
			mu.Lock()
			generates++
			n := generates
			mu.Unlock()
			if n == 2 {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, "data: {\"index\": 0, \"meta_info\": {\"completion_tokens\": 1, \"finish_reason\": {\"type\": \"abort\", \"message\": \"oom\"}}}\n\n")
				return
			}
		}
		s.Handler().ServeHTTP(w, r)
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, stdout, stderr := run(t, nil, "one-batch", "--base-url", srv.URL, "--batch-size", "2", "3", "--input-len", "16",
		"--output-len", "4", "--dataset-name", "random-ids", "--skip-warmup", "--result-filename", out)
	if code != 1 || !strings.Contains(stderr, "bs=3 in=16 out=4: the batch request to "+srv.URL+"/generate: line 1 of the response: request 0 ended with an unexpected finish reason") ||
		strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	if rows := readRows(t, out); len(rows) != 1 || rows[0].BatchSize != 2 {
		t.Errorf("rows %+v", rows)
	}
}

// handlerSim is an instant simulator whose handler a test puts behind its
// own server.
func handlerSim(t *testing.T) *sim.Server {
	t.Helper()
	cfg, _ := sim.Preset(sim.PresetInstant)
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
