package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"benchserve/internal/testenv"
	"benchserve/sim"
)

func instantSim(t *testing.T, edit func(*sim.Config)) string {
	t.Helper()
	cfg, _ := sim.Preset(sim.PresetInstant)
	if edit != nil {
		edit(&cfg)
	}
	_, base := newSim(t, cfg)
	return base
}

// The flags that change what a case does, each against the simulator.
func TestOneBatchFeatures(t *testing.T) {
	base := instantSim(t, nil)
	common := []string{"one-batch", "--base-url", base, "--dataset-name", "random-ids", "--skip-warmup", "--input-len", "64"}
	t.Run("cache hit rate", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "r.jsonl")
		code, stdout, stderr := run(t, nil, append(common, "--batch-size", "4", "--output-len", "4", "--cache-hit-rate", "0.5", "--result-filename", out)...)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		if !strings.Contains(stdout, "Warming up cache with 50.0% hit rate (32 tokens per request)\nCache warmup completed\n") {
			t.Errorf("no cache warmup lines:\n%s", stdout)
		}
		rows := readRows(t, out)
		if len(rows) != 1 || rows[0].CacheHit == nil || *rows[0].CacheHit != 0.5 {
			t.Errorf("rows %+v", rows)
		}
	})
	t.Run("vllm", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "r.jsonl")
		code, stdout, stderr := run(t, nil, append(common, "--backend", "vllm", "--local-tokenizer-path", "o200k_base",
			"--batch-size", "3", "--output-len", "5", "--result-filename", out)...)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		for _, l := range []string{"Connecting to vLLM server at " + base + "...\nFound model: " + "benchserve-sim", "Tokenizer loaded.", "last generation throughput: -1.00 tok/s"} {
			if !strings.Contains(stdout, l) {
				t.Errorf("no %q in\n%s", l, stdout)
			}
		}
		data, _ := os.ReadFile(out)
		if rows := readRows(t, out); len(rows) != 1 || rows[0].TotalOutput != 15 || rows[0].LastGen != -1 ||
			!strings.Contains(string(data), `"num_early_stopped": null, "steady_state_output_throughput": null`) {
			t.Errorf("row %s", data)
		}
	})
	t.Run("disable ignore eos, profile, report, CI summary", func(t *testing.T) {
		dir := t.TempDir()
		out, summary, pyd := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "summary.md"), filepath.Join(dir, "p.json")
		env := map[string]string{"SGLANG_IS_IN_CI": "true", "GITHUB_STEP_SUMMARY": summary}
		code, stdout, stderr := run(t, env, append(common, "--batch-size", "2", "--output-len", "32", "--disable-ignore-eos",
			"--profile", "--profile-output-dir", filepath.Join(dir, "prof"), "--profile-prefix", "x-", "--show-report",
			"--result-filename", out, "--pydantic-result-filename", pyd)...)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		for _, l := range []string{"total output tokens: ", "early-stopped requests: ", "Dump profiling traces to " + filepath.Join(dir, "prof"),
			"Waiting for 5 steps and the trace to be flushed.... (profile_by_stage=False)", "steady ITL (ms)", "| [Profile](" + filepath.Join(dir, "prof")} {
			if !strings.Contains(stdout, l) {
				t.Errorf("no %q in\n%s", l, stdout)
			}
		}
		// The profile pass appends a second row, as the reference does.
		if rows := readRows(t, out); len(rows) != 2 {
			t.Errorf("%d rows, want 2", len(rows))
		}
		s, err := os.ReadFile(summary)
		if err != nil || !strings.Contains(stdout, string(s)) || !strings.Contains(string(s), "   batch size |") {
			t.Errorf("step summary %v:\n%s", err, s)
		}
		ents, _ := filepath.Glob(filepath.Join(dir, "prof", "*", "server_args.json"))
		if len(ents) != 1 {
			t.Errorf("server_args.json files: %v", ents)
		}
	})
	t.Run("no CI summary with the flag", func(t *testing.T) {
		dir := t.TempDir()
		summary := filepath.Join(dir, "summary.md")
		env := map[string]string{"SGLANG_IS_IN_CI": "1", "GITHUB_STEP_SUMMARY": summary}
		code, _, stderr := run(t, env, append(common, "--batch-size", "1", "--output-len", "2", "--show-report",
			"--no-append-to-github-summary", "--result-filename", "")...)
		if _, err := os.Stat(summary); code != 0 || err == nil {
			t.Errorf("exit %d (%s); summary written: %v", code, stderr, err == nil)
		}
	})
}

// The skip guards and their lines, from the server's own figures, and the
// PD router's shape that turns them off.
func TestOneBatchGuards(t *testing.T) {
	base := instantSim(t, func(c *sim.Config) { c.MaxRunningRequests = 4 })
	code, stdout, stderr := run(t, nil, "one-batch", "--base-url", base, "--dataset-name", "random-ids", "--skip-warmup",
		"--batch-size", "2", "8", "--input-len", "16", "--output-len", "2", "--result-filename", "")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, l := range []string{"max_running_requests_per_dp=4\ndp_size=1\nskip_max_running_requests_threshold=4\nskip_token_capacity_threshold=",
		"========Skip benchmark batch_size=8 > skip_max_running_requests_threshold=4 due to max running requests limit.========"} {
		if !strings.Contains(stdout, l) {
			t.Errorf("no %q in\n%s", l, stdout)
		}
	}
	if strings.Count(stdout, "batch size: ") != 1 {
		t.Errorf("want one case run:\n%s", stdout)
	}

	code, stdout, _ = run(t, nil, "one-batch", "--base-url", base, "--dataset-name", "random-ids", "--skip-warmup",
		"--batch-size", "2", "8", "--input-len", "16", "--output-len", "2", "--result-filename", "", "--enable-multi-batch")
	if code != 0 || !strings.Contains(stdout, "WARNING: --enable-multi-batch is set but batch size(s) [2] are <= running cap (4);") ||
		strings.Count(stdout, "batch size: ") != 2 {
		t.Errorf("multi-batch: exit %d\n%s", code, stdout)
	}

	router := instantSim(t, func(c *sim.Config) { c.PDRouter = true })
	code, stdout, stderr = run(t, nil, "one-batch", "--base-url", router, "--dataset-name", "random-ids", "--skip-warmup",
		"--batch-size", "1", "--input-len", "16", "--output-len", "2", "--result-filename", "")
	if code != 0 || !strings.Contains(stdout, "WARNING: base_url points at a PD router;") ||
		!strings.Contains(stdout, "skip_max_running_requests_threshold=inf\nskip_token_capacity_threshold=inf") {
		t.Errorf("router: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// Without --base-url, a server already answering at --host:--port is
// measured, with the reference's warning.
func TestOneBatchReusesRunningServer(t *testing.T) {
	base := instantSim(t, nil)
	port := base[strings.LastIndex(base, ":")+1:]
	code, stdout, stderr := run(t, nil, "one-batch", "--port", port, "--dataset-name", "random-ids", "--skip-warmup",
		"--batch-size", "2", "--input-len", "8", "--output-len", "2", "--result-filename", "", "--trust-remote-code", "--dp", "2")
	if code != 0 || !strings.Contains(stdout, "WARNING: reusing the server already running at http://127.0.0.1:"+port+
		" (--model and server-launch args ignored). Pass --base-url to silence.\n") || !strings.Contains(stdout, "batch size: 2") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "note: --trust-remote-code, --dp-size: no effect here") {
		t.Errorf("no note about the launch flags: %q", stderr)
	}
}

// Ctrl-C while a case is in flight: no case starts after it, the case in
// flight finishes and its row is kept (graceful), or a second Ctrl-C
// cancels it (cut); exit 130, the finished cases' rows kept and reported.
func TestOneBatchInterrupt(t *testing.T) {
	testenv.Slow(t) // signals placed by sleeps around the burst window
	for _, cut := range []bool{false, true} {
		t.Run(fmt.Sprintf("cut=%v", cut), func(t *testing.T) {
			s := handlerSim(t)
			var mu sync.Mutex
			generates := 0
			inFlight, signalled := make(chan struct{}), make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/generate" {
					mu.Lock()
					generates++
					n := generates
					mu.Unlock()
					if n == 2 {
						// The second case waits for the signal; with the
						// cut, it then waits for the client to go.
						// With the body read, the server sees the client go.
						body, _ := io.ReadAll(r.Body)
						r.Body = io.NopCloser(bytes.NewReader(body))
						close(inFlight)
						<-signalled
						if cut {
							select {
							case <-r.Context().Done():
							case <-time.After(20 * time.Second):
							}
							return
						}
					}
				}
				s.Handler().ServeHTTP(w, r)
			}))
			defer srv.Close()
			sigs := make(chan os.Signal) // a send returns once the run has it
			go func() {
				<-inFlight
				sigs <- os.Interrupt
				time.Sleep(100 * time.Millisecond) // and has closed its stop channel
				close(signalled)
				if cut {
					time.Sleep(2 * time.Second) // past the burst window
					sigs <- os.Interrupt
				}
			}()
			out := filepath.Join(t.TempDir(), "r.jsonl")
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), []string{"one-batch", "--base-url", srv.URL, "--batch-size", "2", "2", "2", "--input-len", "8",
				"--output-len", "2", "--dataset-name", "random-ids", "--skip-warmup", "--show-report", "--result-filename", out},
				IO{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, Signals: sigs})
			want := 2
			if cut {
				want = 1
			}
			if code != 130 || !strings.Contains(stdout.String(), "Results are saved to "+out) || !strings.Contains(stdout.String(), "|            2 |") {
				t.Errorf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
			}
			if rows := readRows(t, out); len(rows) != want {
				t.Errorf("%d rows, want %d: %+v\n%s", len(rows), want, rows, stderr.String())
			}
			mu.Lock()
			defer mu.Unlock()
			if generates != 2 {
				t.Errorf("%d batches sent, want none after the interrupt", generates)
			}
		})
	}
}
