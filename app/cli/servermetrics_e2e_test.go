package cli

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"benchserve/internal/testenv"
	"benchserve/sim"
)

// Against the simulator: the server's generated-token delta equals the
// client's total exactly, the running-requests gauge peaks at the
// concurrency cap, the server's TTFT sits beside the client's, and the
// provenance names the server and the client.
func TestServerViewAgainstSim(t *testing.T) {
	testenv.Slow(t) // the server's TTFT mean within milliseconds of the client's
	_, base := newSim(t, steadySim(10*time.Millisecond, 5*time.Millisecond))
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, stdout, stderr := run(t, nil, "--backend", "vllm", "--base-url", base, "--dataset-name", "random-ids",
		"--random-input-len", "32", "--random-output-len", "40", "--random-range-ratio", "1", "--num-prompts", "60", "--max-concurrency", "6",
		"--server-metrics-interval", "0.1", "--output-file", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	m := readLine(t, out)
	if g, c := num(t, m, "server_generated_tokens"), num(t, m, "total_output_tokens"); g != c || c != 60*40 {
		t.Errorf("server generated %v tokens, client %v, want both %d", g, c, 60*40)
	}
	sm := m["server_metrics"].(map[string]any)
	running := sm["vllm:num_requests_running"].(map[string]any)
	if num(t, running, "max") != 6 {
		t.Errorf("running requests max %v, want the cap 6", running["max"])
	}
	if h := sm["vllm:time_to_first_token_seconds"].(map[string]any); num(t, h, "count") != 60 {
		t.Errorf("server TTFT histogram counted %v requests, want 60", h["count"])
	}
	if d := num(t, m, "server_ttft_mean_ms") - num(t, m, "mean_ttft_ms"); d > 0.5 || d < -5 {
		t.Errorf("server TTFT mean %v, client %v", m["server_ttft_mean_ms"], m["mean_ttft_ms"])
	}
	prov := m["provenance"].(map[string]any)
	srv, cl := prov["server"].(map[string]any), prov["client"].(map[string]any)
	if srv["/v1/models"] == nil || srv["/server_info"] == nil || num(t, srv, "cache_flushes") != 0 || num(t, cl, "cores") < 1 || cl["version"] == "" || cl["receiver"] == nil {
		t.Errorf("provenance %v", prov)
	}
	if field(t, stdout, "Generated tokens (server):") != "2400 (client 2400)" || !strings.Contains(field(t, stdout, "Running requests (mean / max):"), "/ 6.00") {
		t.Errorf("server view:\n%s", stdout)
	}
}

// A /metrics read that fails during the run is one warning, and the run
// and its server view go on; a server without /metrics says so, and a
// run with --no-server-metrics reads nothing.
func TestServerMetricsFailures(t *testing.T) {
	t.Parallel()
	cfg := steadySim(5*time.Millisecond, 5*time.Millisecond)
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var reads atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			if n := reads.Add(1); n == 3 || n == 4 {
				http.Error(w, "metrics exporter down", http.StatusInternalServerError)
				return
			}
		}
		s.Handler().ServeHTTP(w, r)
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.jsonl")
	args := []string{"--backend", "vllm", "--base-url", srv.URL, "--dataset-name", "random-ids", "--random-input-len", "16",
		"--random-output-len", "40", "--num-prompts", "24", "--max-concurrency", "4", "--output-file", out}
	code, stdout, stderr := run(t, nil, append(args, "--server-metrics-interval", "0.05")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Count(stderr, "warning: GET") != 1 || !strings.Contains(stderr, "/metrics: status 500; the run goes on") {
		t.Errorf("stderr: %s", stderr)
	}
	m := readLine(t, out)
	if num(t, m, "server_metrics_failed_reads") != 2 || num(t, m, "server_generated_tokens") != num(t, m, "total_output_tokens") {
		t.Errorf("failed reads %v, tokens %v vs %v", m["server_metrics_failed_reads"], m["server_generated_tokens"], m["total_output_tokens"])
	}

	fake := newFakeServer(t, 5*time.Millisecond, time.Millisecond)
	code, stdout, stderr = run(t, nil, "--backend", "vllm", "--base-url", fake.srv.URL, "--tokenizer", "o200k_base", "--dataset-name", "random-ids",
		"--random-input-len", "8", "--random-output-len", "4", "--num-prompts", "4", "--output-file", out)
	if code != 0 || !strings.HasPrefix(field(t, stdout, "Server metrics:"), "not exposed: GET ") {
		t.Fatalf("no /metrics: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if m := readLine(t, out); m["server_metrics"] != nil {
		t.Errorf("server_metrics %v, want null", m["server_metrics"])
	}
	code, stdout, _ = run(t, nil, append(args, "--no-server-metrics")...)
	if code != 0 || field(t, stdout, "Server metrics:") != "not read (--no-server-metrics)" {
		t.Errorf("--no-server-metrics: exit %d\n%s", code, stdout)
	}
}
