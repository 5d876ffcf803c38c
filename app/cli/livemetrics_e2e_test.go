package cli

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"benchserve/record"
	"benchserve/sim"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrapeURL reads url as Prometheus does, parsed with expfmt.
func scrapeURL(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

// liveSample is the value of name's series whose labels include the pairs
// in want (a histogram's sample count), and the series' labels; 0 when
// none.
func liveSample(fams map[string]*dto.MetricFamily, name string, want ...string) (float64, map[string]string) {
	f := fams[name]
	if f == nil {
		return 0, nil
	}
next:
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for i := 0; i < len(want); i += 2 {
			if labels[want[i]] != want[i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), labels
		case m.Gauge != nil:
			return m.Gauge.GetValue(), labels
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), labels
		}
	}
	return 0, nil
}

// addrWatch is stderr that hands on the metrics URL once printed.
type addrWatch struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	url  chan string
	sent bool
}

func (w *addrWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if _, rest, ok := strings.Cut(w.buf.String(), "serving client metrics at "); ok && !w.sent {
		w.sent = true
		w.url <- strings.Fields(rest)[0]
	}
	return len(p), nil
}

func (w *addrWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// liveRun runs args with --metrics-addr 127.0.0.1:0 in-process: during
// is called with the URL while the run goes on, and the endpoint is read
// once more after the result is printed, before it shuts down.
func liveRun(t *testing.T, args []string, during func(url string)) (code int, stdout, stderr string, final map[string]*dto.MetricFamily) {
	t.Helper()
	var out bytes.Buffer
	errw := &addrWatch{url: make(chan string, 1)}
	done := make(chan int)
	go func() {
		done <- Main(context.Background(), append(args, "--metrics-addr", "127.0.0.1:0"), IO{Stdout: &out, Stderr: errw,
			Getenv: func(string) string { return "" }, beforeMetricsClose: func(url string) { final = scrapeURL(t, url) }})
	}()
	select {
	case url := <-errw.url:
		during(url)
		code = <-done
		// Once the command is over, nothing serves there.
		if _, err := http.Get(url); err == nil {
			t.Errorf("%s still served after the command ended", url)
		}
	case code = <-done:
		t.Fatalf("exit %d without serving metrics\n%s\n%s", code, out.String(), errw)
	}
	return code, out.String(), errw.String(), final
}

// A scrape during a run against the simulator sees it under way, and one
// after its last request matches the result line: completed, failed by
// kind, tokens in and out, goodput, one TTFT and E2E sample per completed
// request; the warmup request is not counted; every series carries the
// run's labels.
func TestLiveMetricsMatchTheResult(t *testing.T) {
	t.Parallel()
	cfg := steadySim(20*time.Millisecond, 4*time.Millisecond)
	cfg.Seed = 1
	cfg.Faults = []sim.FaultRate{{Fault: sim.Fault{Kind: sim.Fault500}, Rate: 0.15}}
	_, base := newSim(t, cfg)
	dir := t.TempDir()
	out, recPath := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "r.rec")
	args := []string{"--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids",
		"--random-input-len", "16", "--random-output-len", "8", "--random-range-ratio", "1",
		"--request-rate", "25", "--duration", "2", "--warmup-requests", "1", "--goodput", "ttft:250",
		"--output-file", out, "--record-file", recPath}
	var mid map[string]*dto.MetricFamily
	code, stdout, stderr, final := liveRun(t, args, func(url string) {
		// Read until the first request has ended (the run lasts 2 s).
		for {
			mid = scrapeURL(t, url)
			if n, _ := liveSample(mid, "benchserve_requests_total", "outcome", "completed"); n > 0 {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	m := readLine(t, out)
	completed, failed := num(t, m, "completed"), num(t, m, "failed")
	if completed < 20 || failed < 1 {
		t.Fatalf("completed %v, failed %v: want a run with both", completed, failed)
	}
	// The ITL histogram holds every gap the records hold.
	f, err := record.ReadFile(recPath)
	if err != nil {
		t.Fatal(err)
	}
	gaps := 0
	for _, r := range f.Records {
		if r.Success {
			gaps += r.Gaps.Len()
		}
	}
	midDone, _ := liveSample(mid, "benchserve_requests_total", "outcome", "completed")
	if midDone < 1 || midDone > completed {
		t.Errorf("during the run: %v completed, the result %v", midDone, completed)
	}
	for _, c := range []struct {
		name  string
		want  float64
		label []string
	}{
		{"benchserve_requests_total", completed, []string{"outcome", "completed"}},
		{"benchserve_requests_total", failed, []string{"outcome", "failed"}},
		{"benchserve_requests_total", 0, []string{"outcome", "cancelled"}},
		{"benchserve_request_errors_total", failed, []string{"kind", "http_5xx"}},
		{"benchserve_output_tokens_total", num(t, m, "total_output_tokens"), nil},
		{"benchserve_input_tokens_total", num(t, m, "total_input_tokens"), nil},
		{"benchserve_good_requests_total", num(t, m, "good_requests"), nil},
		{"benchserve_ttft_seconds", completed, nil},
		{"benchserve_e2e_seconds", completed, nil},
		{"benchserve_tpot_seconds", completed, nil},
		{"benchserve_itl_seconds", float64(gaps), nil},
		{"benchserve_requests_in_flight", 0, nil},
	} {
		got, labels := liveSample(final, c.name, c.label...)
		if labels == nil || got != c.want {
			t.Errorf("%s%q = %v, want %v", c.name, c.label, got, c.want)
		}
		if labels["backend"] != "sglang" || labels["model"] == "" || len(labels["run_id"]) != 8 {
			t.Errorf("%s: labels %v", c.name, labels)
		}
	}
	if !strings.Contains(stderr, "benchserve: note: serving client metrics at http://127.0.0.1:") {
		t.Errorf("stderr: %s", stderr)
	}
}

// A sweep serves one set of series for all its points: the counts are
// the sum of its result lines'.
func TestLiveMetricsOfASweep(t *testing.T) {
	t.Parallel()
	_, base := newSim(t, steadySim(5*time.Millisecond, time.Millisecond))
	out := filepath.Join(t.TempDir(), "s.jsonl")
	args := []string{"sweep", "--max-concurrency", "2,4", "--sweep-pause", "0", "--backend", "sglang", "--base-url", base,
		"--dataset-name", "random-ids", "--random-input-len", "16", "--random-output-len", "4", "--num-prompts", "12",
		"--warmup-requests", "0", "--output-file", out}
	code, stdout, stderr, final := liveRun(t, args, func(string) {})
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	lines := readLines(t, out)
	var completed, tokens float64
	for _, l := range lines {
		completed += num(t, l, "completed")
		tokens += num(t, l, "total_output_tokens")
	}
	if len(lines) != 2 || completed != 24 {
		t.Fatalf("%d lines, %v completed", len(lines), completed)
	}
	if got, _ := liveSample(final, "benchserve_requests_total", "outcome", "completed"); got != completed {
		t.Errorf("completed %v, the lines %v", got, completed)
	}
	if got, _ := liveSample(final, "benchserve_output_tokens_total"); got != tokens {
		t.Errorf("output tokens %v, the lines %v", got, tokens)
	}
	if !strings.Contains(stderr, "benchserve sweep: note: serving client metrics at http://127.0.0.1:") {
		t.Errorf("stderr: %s", stderr)
	}
}

// An address that cannot be served (taken, without a port, a port out of
// range) is a usage error, one line, before any request: the base URL is
// never asked.
func TestMetricsAddrErrors(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	var asked atomic.Bool
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asked.Store(true) })}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	for _, addr := range []string{taken.Addr().String(), "9400", "127.0.0.1:99999"} {
		for _, cmd := range [][]string{nil, {"sweep"}} {
			args := append(cmd, "--backend", "vllm", "--base-url", "http://"+ln.Addr().String(), "--model", "m", "--num-prompts", "1", "--metrics-addr", addr)
			code, stdout, stderr := run(t, nil, args...)
			if code != 2 || stdout != "" || !strings.Contains(stderr, "error: --metrics-addr "+addr+": cannot serve there: ") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
			}
		}
	}
	if asked.Load() {
		t.Error("a request went out")
	}
}
