package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"benchserve/internal/exit"
	"benchserve/internal/testenv"
	"benchserve/sim"
)

// newFaultSim starts an in-process simulator (instant preset) that injects
// faults at the given rates.
func newFaultSim(t *testing.T, faults ...sim.FaultRate) (*sim.Server, string) {
	t.Helper()
	cfg, _ := sim.Preset(sim.PresetInstant)
	cfg.Faults = faults
	return newSim(t, cfg)
}

// newSim starts an in-process simulator on a free loopback port, closed when
// the test ends, and returns it with its base URL.
func newSim(t *testing.T, cfg sim.Config) (*sim.Server, string) {
	t.Helper()
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ln); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, s.URL()
}

// simTruth is the part of GET /sim/truth the tests read.
type simTruth struct {
	Requests []struct {
		ID               string       `json:"id"`
		Fault            string       `json:"fault"`
		TTFT             *float64     `json:"ttft"`
		CompletionTokens int          `json:"completion_tokens"`
		Chunks           [][3]float64 `json:"chunks"`
	} `json:"requests"`
}

func getJSON[T any](t *testing.T, url string) T {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v T
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// injected is the simulator's count of faults of kind, from /metrics.
func injected(t *testing.T, base, kind string) int {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^sim:faults_injected_total\{kind="` + regexp.QuoteMeta(kind) + `",[^}]*\} (\d+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("/metrics has no count of %s faults", kind)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func floatsOf(v any) []float64 {
	var out []float64
	for _, x := range v.([]any) {
		f, _ := x.(json.Number).Float64()
		out = append(out, f)
	}
	return out
}

// Tolerances of the comparison of successful requests with the
// simulator's truth. Lower bounds are exact: a client cannot see a chunk
// before the server handed it to the kernel. The upper bounds are on the
// mean over the run's successful requests and only catch gross errors:
// the client's overhead on loopback is a few ms (+2 to +10 ms of TTFT
// measured, -race included), but on a shared machine under -race a burst
// of 128 replies at once queues in the client for tens of ms.
const (
	meanTTFTSlack = 0.250 // seconds: mean client TTFT − server TTFT
	meanSpanSlack = 0.250 // seconds: mean |client − server| first-to-last content chunk
)

// The fault matrix (issue 7): each fault at a 20% rate over 500 requests.
// The run completes with exit code 0; the failures equal the faults the
// simulator injected, by kind; each error is one line; the successful
// requests measure what the simulator did for them.
func TestFaultMatrix(t *testing.T) {
	testenv.Slow(t) // the fault matrix takes a few seconds (about 20 under -race), with timing bounds
	const n, rate = 500, 0.2
	cases := []struct {
		fault string
		kind  string // the client's error kind; "" when the fault is no failure
		msg   string // in every error of the kind
		args  []string
	}{
		{"429", "http_429", "429 Too Many Requests: {\"error\":{\"message\":\"Rate limit reached", nil},
		{"500", "http_5xx", "500 Internal Server Error: {\"error\":", nil},
		{"503", "http_5xx", "503 Service Unavailable: {\"error\":", nil},
		{"reset", "reset", "the connection broke before the response headers came: ", nil},
		{"disconnect:2", "reset", "the connection closed mid-response, after line 4 (unexpected EOF)", nil},
		// Stalls hold their slot: more of them keeps the run short.
		{"stall:0.5", "", "", []string{"--max-concurrency", "128"}},
		{"stall:2", "timeout", "the request exceeded its 1s limit", []string{"--request-timeout", "1", "--max-concurrency", "128"}},
		{"malformed", "invalid_response", "line 3 of the response: invalid JSON", nil},
		{"error-chunk", "stream_error", "simulated fault: the engine failed mid-generation", nil},
		{"no-done", "incomplete", "the stream ended without data: [DONE]", nil},
		{"empty", "empty_output", "the server answered 200 with no output", nil},
		// 2 MiB lines (10 MiB by default: TestSimulatorFaults in package
		// backend reads those) keep the matrix fast under -race.
		{"huge-line:2", "", "", []string{"--max-concurrency", "2"}},
		{"slow-headers:0.5", "", "", []string{"--max-concurrency", "128"}},
	}
	for _, c := range cases {
		t.Run(c.fault, func(t *testing.T) {
			f, err := sim.ParseFault(c.fault)
			if err != nil {
				t.Fatal(err)
			}
			_, base := newFaultSim(t, sim.FaultRate{Fault: f, Rate: rate})
			out := filepath.Join(t.TempDir(), "res.jsonl")
			args := []string{"--backend", "vllm", "--base-url", base, "--dataset-name", "random-ids",
				"--random-input-len", "16", "--random-output-len", "8", "--random-range-ratio", "1", "--num-prompts", strconv.Itoa(n),
				"--warmup-requests", "0", "--max-concurrency", "32", "--output-file", out, "--output-details"}
			code, stdout, stderr := run(t, nil, append(args, c.args...)...)
			if code != exit.OK {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if strings.Contains(stdout+stderr, "goroutine ") || strings.Contains(stdout+stderr, "panic") {
				t.Errorf("a stack trace in the output:\n%s\n%s", stdout, stderr)
			}
			got := injected(t, base, f.Kind.String())
			if got == 0 {
				t.Fatal("the simulator injected no fault")
			}
			failures := 0
			if c.kind != "" {
				failures = got
			}
			m := readLine(t, out)
			if num(t, m, "completed") != float64(n-failures) || num(t, m, "failed") != float64(failures) {
				t.Errorf("completed %v, failed %v; the simulator injected %d faults", m["completed"], m["failed"], got)
			}
			// The console has the line only when some request failed.
			if failures > 0 {
				if got := field(t, stdout, "Failed requests:"); got != strconv.Itoa(failures) {
					t.Errorf("console: %s failed requests, want %d", got, failures)
				}
			} else if strings.Contains(stdout, "Failed requests:") {
				t.Errorf("console has a Failed requests: line with no failure:\n%s", stdout)
			}
			byKind, _ := m["errors_by_kind"].(map[string]any)
			want := map[string]any{}
			if c.kind != "" {
				want[c.kind] = json.Number(strconv.Itoa(failures))
			}
			if fmt.Sprint(byKind) != fmt.Sprint(want) {
				t.Errorf("errors_by_kind %v, want %v", byKind, want)
			}
			errs := strs(m["errors"])
			for _, e := range errs {
				if e != "" && (!strings.Contains(e, c.msg) || strings.ContainsAny(e, "\r\n")) {
					t.Errorf("error %q, want one line with %q", e, c.msg)
					break
				}
			}
			checkAgainstTruth(t, m, base, f)
		})
	}
}

// checkAgainstTruth compares each successful request of the result line m
// with what the simulator did for it (matched by request id): the same
// number of ITL gaps as content chunks after the first, the same output
// tokens, a TTFT no earlier than the server's first write, and means
// within the slack.
func checkAgainstTruth(t *testing.T, m map[string]any, base string, f sim.Fault) {
	t.Helper()
	truth := getJSON[simTruth](t, base+"/sim/truth")
	byID := map[string]int{}
	for i, r := range truth.Requests {
		byID[r.ID] = i
	}
	ids, errs, ttfts := strs(m["request_ids"]), strs(m["errors"]), floatsOf(m["ttfts"])
	outLens := floatsOf(m["output_lens"])
	itls := m["itls"].([]any)
	var ok, spans int
	var ttftDiff, spanDiff, faulted float64
	for i, id := range ids {
		if errs[i] != "" {
			continue
		}
		k, found := byID[id]
		if !found {
			t.Fatalf("successful request %q is not in the truth", id)
		}
		tr := truth.Requests[k]
		gaps := floatsOf(itls[i])
		if len(gaps) != len(tr.Chunks)-1 || int(outLens[i]) != tr.CompletionTokens {
			t.Fatalf("request %s: %d gaps and %v tokens, the server sent %d chunks and %d tokens", id, len(gaps), outLens[i], len(tr.Chunks), tr.CompletionTokens)
		}
		if firstWrite := tr.Chunks[0][2]; ttfts[i] < *tr.TTFT-firstWrite-1e-6 {
			t.Errorf("request %s: TTFT %.6f before the server wrote its first chunk (%.6f)", id, ttfts[i], *tr.TTFT-firstWrite)
		}
		span := 0.0
		for _, g := range gaps {
			span += g
		}
		server := tr.Chunks[len(tr.Chunks)-1][0] - tr.Chunks[0][0]
		if tr.Fault == sim.FaultStall.String() {
			faulted++
			if server < f.Arg {
				t.Errorf("request %s: stalled %v s, but the server's chunks span %.3f s", id, f.Arg, server)
			}
		}
		ok++
		ttftDiff += ttfts[i] - *tr.TTFT
		// A huge line between two chunks makes their gap the time to move
		// it, which the client and the server see at different moments.
		if tr.Fault != sim.FaultHugeLine.String() {
			spans++
			spanDiff += math.Abs(span - server)
		}
	}
	if ok == 0 {
		t.Fatal("no successful request")
	}
	ttftDiff /= float64(ok)
	spanDiff /= float64(max(spans, 1))
	t.Logf("%d successful requests (%v stalled): mean TTFT %+.3f ms from the server's, mean |first-to-last chunk| difference %.3f ms",
		ok, faulted, ttftDiff*1e3, spanDiff*1e3)
	if ttftDiff > meanTTFTSlack || spanDiff > meanSpanSlack {
		t.Errorf("mean TTFT %+.4f s, mean span difference %.4f s: more than %v s from the server's", ttftDiff, spanDiff, meanTTFTSlack)
	}
}

// Every request failing: the run still completes and writes its line,
// and the exit code says all failed, with the first error on one line.
func TestFaultAllFail(t *testing.T) {
	_, base := newFaultSim(t, sim.FaultRate{Fault: sim.Fault{Kind: sim.Fault503}, Rate: 1})
	out := filepath.Join(t.TempDir(), "res.jsonl")
	code, stdout, stderr := run(t, nil, "--backend", "sglang-oai-chat", "--base-url", base, "--dataset-name", "random-ids",
		"--random-input-len", "16", "--random-output-len", "8", "--num-prompts", "50", "--warmup-requests", "0", "--output-file", out)
	if code != exit.AllFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exit.AllFailed, stdout, stderr)
	}
	want := "benchserve: error: all 50 requests failed; first error: 503 Service Unavailable: {\"error\":{\"message\":\"The server is overloaded or not ready yet (simulated fault 503).\""
	if !strings.HasPrefix(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("stderr %q, want one line starting %q", stderr, want)
	}
	m := readLine(t, out)
	if num(t, m, "completed") != 0 || num(t, m, "failed") != 50 || fmt.Sprint(m["errors_by_kind"]) != "map[http_5xx:50]" {
		t.Errorf("completed %v, failed %v, by kind %v", m["completed"], m["failed"], m["errors_by_kind"])
	}
}
