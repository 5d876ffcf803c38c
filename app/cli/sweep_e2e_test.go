package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"benchserve/internal/exit"
	"benchserve/internal/testenv"
	"benchserve/report/page"
)

// readLines decodes every JSON line of path (Infinity as a huge number).
func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		dec := json.NewDecoder(strings.NewReader(strings.ReplaceAll(l, "Infinity", "1e308")))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, l)
		}
		out = append(out, m)
	}
	return out
}

// intendedByRun reads a record file: each run's intended send times, in
// seq order, its runs told apart as report tells them apart.
func intendedByRun(t *testing.T, path string) [][]float64 {
	t.Helper()
	runs, err := page.ReadRecordRuns(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, len(runs))
	for i, r := range runs {
		recs := r.Recs
		sort.Slice(recs, func(a, b int) bool { return recs[a].Seq < recs[b].Seq })
		for _, rec := range recs {
			out[i] = append(out[i], rec.Intended)
		}
	}
	return out
}

// referenceKeys are the result line's keys up to the first of ours.
func referenceKeys(path string) []string {
	data, _ := os.ReadFile(path)
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(bytes.ReplaceAll(data, []byte("Infinity"), []byte("1e308"))))
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		if k == "mean_ttft_from_schedule_ms" {
			break
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	return keys
}

// A sweep of three rates writes three lines whose reference keys are
// those of three separate runs with the same seed: the same planned send
// times (from the record files), prompts and counts.
func TestSweepMatchesSeparateRuns(t *testing.T) {
	t.Parallel()
	_, base := newSim(t, steadySim(5*time.Millisecond, time.Millisecond))
	dir := t.TempDir()
	common := []string{"--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids",
		"--random-input-len", "32", "--random-output-len", "6", "--num-prompts", "15", "--warmup-requests", "0"}
	sw, swRec := filepath.Join(dir, "sweep.jsonl"), filepath.Join(dir, "sweep.rec")
	code, stdout, stderr := run(t, nil, append([]string{"sweep", "--request-rate", "10", "20,40", "--sweep-pause", "0",
		"--output-file", sw, "--record-file", swRec}, common...)...)
	if code != 0 {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, stdout, stderr)
	}
	lines := readLines(t, sw)
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3", len(lines))
	}
	sweepTimes := intendedByRun(t, swRec)
	if len(sweepTimes) != 3 {
		t.Fatalf("%d runs in the sweep's record file", len(sweepTimes))
	}
	for i, rate := range []string{"10", "20", "40"} {
		one, oneRec := filepath.Join(dir, rate+".jsonl"), filepath.Join(dir, rate+".rec")
		code, stdout, stderr := run(t, nil, append([]string{"--request-rate", rate, "--output-file", one, "--record-file", oneRec}, common...)...)
		if code != 0 {
			t.Fatalf("rate %s: exit %d\n%s\n%s", rate, code, stdout, stderr)
		}
		m := readLine(t, one)
		for _, k := range []string{"request_rate", "completed", "total_input_tokens", "total_output_tokens", "random_input_len", "random_output_len", "planned_request_rate"} {
			if a, b := lines[i][k], m[k]; a != b {
				t.Errorf("rate %s: %s = %v in the sweep, %v alone", rate, k, a, b)
			}
		}
		if got := intendedByRun(t, oneRec)[0]; !reflect.DeepEqual(got, sweepTimes[i]) {
			t.Errorf("rate %s: planned send times differ:\n sweep %v\n alone %v", rate, sweepTimes[i], got)
		}
		sp := lines[i]["sweep_point"].(map[string]any)
		if sp["phase"] != "grid" || num(t, sp, "index") != float64(i+1) || sp["request_rate"].(json.Number).String() != rate+".0" {
			t.Errorf("sweep_point %v", sp)
		}
	}
	if got, want := referenceKeys(sw), referenceKeys(filepath.Join(dir, "10.jsonl")); !reflect.DeepEqual(got, want) || len(got) < 30 {
		t.Errorf("reference keys differ:\n sweep %v\n alone %v", got, want)
	}
	if strings.Count(stdout, "  grid  ") != 3 || !strings.Contains(stdout, "TTFT p99") {
		t.Errorf("table:\n%s", stdout)
	}
	// The sweep's record file holds three runs: report gives each its
	// section, named by its rate; compare wants one run a file.
	htmlPath := filepath.Join(dir, "r.html")
	if code, stdout, stderr := run(t, nil, "report", sw, "--records", swRec, "-o", htmlPath); code != 0 || !strings.Contains(stdout, "3 runs' records") {
		t.Fatalf("report: exit %d\n%s\n%s", code, stdout, stderr)
	}
	html, _ := os.ReadFile(htmlPath)
	for i, rate := range []string{"10", "20", "40"} {
		if want := fmt.Sprintf("Requests of sweep.rec, run %d of 3 (request rate %s)", i+1, rate); !strings.Contains(string(html), want) {
			t.Errorf("report: no section %q", want)
		}
	}
	code, _, stderr = run(t, nil, "compare", sw, filepath.Join(dir, "10.jsonl"), "--records", swRec, filepath.Join(dir, "10.rec"))
	if code != 1 || !strings.Contains(stderr, "sweep.rec holds 3 runs") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("compare of a sweep's record file: exit %d, %q", code, stderr)
	}
}

// Against a simulator of known capacity, the search finds the highest
// rate meeting a p99 TTFT SLO. The simulator: 4 requests at a time, 10
// output tokens (the first from the prefill step, 9 decode steps of
// 5 ms), prefill steps of 0.5 ms. Its capacity C = 4/(9 × 5 ms) less the
// prefill steps' share: C = 88.9 / (1 + 4 × 0.5/45) = 85.1 req/s. With
// constant arrivals below C no request waits; above it the backlog grows
// by (R − C) a second, so a request sent at t waits (R − C)/C × t. In a
// 1.33 s run the p99 TTFT (a request sent at 0.99 × 1.33 s) reaches the
// SLO of 100 ms (less ~5 ms of step) at R = C × (1 + 0.095/1.317) =
// 91.2 req/s. (The run's length puts it mid-way between the rates the
// bisection from 40 tries, 90 and 92.5, so that an error of 1% in this
// model does not decide the test.)
func TestSweepSearchFindsCapacity(t *testing.T) {
	testenv.Slow(t) // tens of timed runs against the simulator (the search itself: sweep/search_test.go)
	cfg := steadySim(500*time.Microsecond, 5*time.Millisecond)
	cfg.MaxRunningRequests = 4
	_, base := newSim(t, cfg)
	c := 4 / (9 * 0.005) / (1 + 4*0.0005/0.045)
	want := c * (1 + 0.095/(0.99*1.33))
	out := filepath.Join(t.TempDir(), "s.jsonl")
	code, stdout, stderr := run(t, nil, "sweep", "--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids",
		"--random-input-len", "16", "--random-output-len", "10", "--random-range-ratio", "1", "--num-prompts", "50",
		"--duration", "1.33", "--arrival", "constant", "--warmup-requests", "0", "--sweep-pause", "0",
		"--search", "request-rate", "--request-rate", "40", "--slo", "p99_ttft_ms<100", "--output-file", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	lines := readLines(t, out)
	last := lines[len(lines)-1]
	res, lo, hi := num(t, last, "search_result"), num(t, last, "search_low"), num(t, last, "search_high")
	t.Logf("expected %.1f req/s; found %.1f in [%.1f, %.1f]\n%s", want, res, lo, hi, stdout)
	// The simulator's steps are real time: on a loaded machine they run
	// late and its capacity falls, never rises, so the bound above is
	// tight and the one below loose. Whether the answer was confirmed
	// depends on that noise too; the search's rules (brackets, budget,
	// confirmation) are proven with a fake runner in sweep/search_test.go.
	if res > want*1.15 || res < want*0.5 {
		t.Errorf("search_result %.1f, want within [0.5, 1.15] of %.1f", res, want)
	}
	if !(lo <= res && (math.IsNaN(hi) || res <= hi)) {
		t.Errorf("result %.1f outside its interval [%.1f, %.1f]", res, lo, hi)
	}
	runLines := 0
	for _, m := range lines {
		if _, ok := m["completed"]; ok {
			runLines++
		}
	}
	if runs := last["search_runs"].([]any); len(runs) != runLines {
		t.Errorf("%d search_runs for %d run lines", len(runs), runLines)
	}
	if !strings.Contains(stdout, "Highest request rate meeting p99_ttft_ms<100: ") {
		t.Errorf("no answer line:\n%s", stdout)
	}
}

// --sweep-profile auto: a floor at concurrency 1, a ceiling with every
// request at once, then the rates evenly between; --repeats writes each
// run and then the point's spread.
func TestSweepProfileAndRepeats(t *testing.T) {
	t.Parallel()
	_, base := newSim(t, steadySim(5*time.Millisecond, time.Millisecond))
	out := filepath.Join(t.TempDir(), "p.jsonl")
	common := []string{"--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids",
		"--random-input-len", "16", "--random-output-len", "4", "--num-prompts", "12", "--warmup-requests", "0", "--sweep-pause", "0", "--output-file", out}
	code, stdout, stderr := run(t, nil, append([]string{"sweep", "--sweep-profile", "auto", "--sweep-points", "2"}, common...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	lines := readLines(t, out)
	if len(lines) != 4 {
		t.Fatalf("%d lines, want floor, ceiling and 2", len(lines))
	}
	phase := func(m map[string]any) string { return m["sweep_point"].(map[string]any)["phase"].(string) }
	floor, ceil := num(t, lines[0], "request_throughput"), num(t, lines[1], "request_throughput")
	if phase(lines[0]) != "floor" || phase(lines[1]) != "ceiling" || num(t, lines[0], "max_concurrency") != 1 {
		t.Errorf("phases %s %s", phase(lines[0]), phase(lines[1]))
	}
	for k, m := range lines[2:] {
		want := floor + (ceil-floor)*float64(k+1)/3
		if r := num(t, m, "request_rate"); phase(m) != "profile" || math.Abs(r-want) > 1e-9 {
			t.Errorf("point %d: rate %v, want %v", k, r, want)
		}
	}

	os.Remove(out)
	code, stdout, stderr = run(t, nil, append([]string{"sweep", "--request-rate", "20", "--repeats", "3"}, common...)...)
	if code != 0 {
		t.Fatalf("repeats: exit %d\n%s\n%s", code, stdout, stderr)
	}
	lines = readLines(t, out)
	if len(lines) != 4 || lines[3]["repeats"].(json.Number).String() != "3" {
		t.Fatalf("%d lines, want 3 runs and their spread", len(lines))
	}
	var tput []float64
	for _, m := range lines[:3] {
		tput = append(tput, num(t, m, "output_throughput"))
	}
	mean := (tput[0] + tput[1] + tput[2]) / 3
	st := lines[3]["repeat_stats"].(map[string]any)["output_throughput"].(map[string]any)
	if m := num(t, st, "mean"); math.Abs(m-mean) > 1e-6*mean {
		t.Errorf("spread mean %v, want %v", m, mean)
	}
	if lo, hi := num(t, st, "ci95_low"), num(t, st, "ci95_high"); !(lo <= mean && mean <= hi) {
		t.Errorf("interval [%v, %v] around %v", lo, hi, mean)
	}
	if !strings.Contains(stdout, "3 runs: req/s") {
		t.Errorf("table:\n%s", stdout)
	}

	// A loose --repeat-until-cv stops at the first 3 of 6 repeats; an
	// impossible one runs all 6. The sample CV of 3 values ≥ 0 is at most
	// √3, so 2 is met whatever the machine's load does to the runs (0.9
	// was not, on a loaded machine: a run whose TTFT queued).
	for _, c := range []struct {
		cv   string
		runs int
	}{{"2", 3}, {"0.0000001", 6}} {
		os.Remove(out)
		code, stdout, stderr = run(t, nil, append([]string{"sweep", "--request-rate", "40", "--repeats", "6", "--repeat-until-cv", c.cv}, common...)...)
		if code != 0 {
			t.Fatalf("cv %s: exit %d\n%s\n%s", c.cv, code, stdout, stderr)
		}
		lines = readLines(t, out)
		if len(lines) != c.runs+1 || num(t, lines[c.runs], "repeats") != float64(c.runs) {
			t.Errorf("cv %s: %d lines, want %d runs and their spread", c.cv, len(lines), c.runs)
		}
	}
}

// A point whose every request fails is recorded and the sweep goes on;
// two in a row stop it (exit 1), keeping what ran.
func TestSweepStopsOnBrokenServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Write([]byte(`{"data": [{"id": "m"}]}`))
			return
		}
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "b.jsonl")
	code, stdout, stderr := run(t, nil, "sweep", "--backend", "vllm", "--base-url", srv.URL, "--tokenizer", "o200k_base",
		"--dataset-name", "random-ids", "--random-input-len", "8", "--random-output-len", "4", "--num-prompts", "3",
		"--warmup-requests", "0", "--sweep-pause", "0", "--request-rate", "5,10,20", "--output-file", out)
	if code != 1 || !strings.Contains(stderr, "2 points in a row failed (the server may be down): the sweep stops") {
		t.Fatalf("exit %d, want 1 and the rule\n%s\n%s", code, stdout, stderr)
	}
	if lines := readLines(t, out); len(lines) != 2 || num(t, lines[0], "completed") != 0 {
		t.Errorf("%d lines, want the 2 that ran", len(lines))
	}
}

// Ctrl-C during a sweep keeps every finished run and exits 130.
func TestSweepInterrupt(t *testing.T) {
	testenv.Slow(t) // an interrupt 1.5 s into 0.5 s runs
	srv := newFakeServer(t, 20*time.Millisecond, 5*time.Millisecond)
	out := filepath.Join(t.TempDir(), "i.jsonl")
	sigs := make(chan os.Signal, 2)
	var stdout, stderr bytes.Buffer
	go func() {
		time.Sleep(1500 * time.Millisecond)
		sigs <- os.Interrupt
	}()
	code := Main(context.Background(), []string{"sweep", "--backend", "vllm", "--base-url", srv.srv.URL, "--tokenizer", "o200k_base",
		"--dataset-name", "random-ids", "--random-input-len", "8", "--random-output-len", "4", "--num-prompts", "10",
		"--warmup-requests", "0", "--sweep-pause", "0", "--request-rate", "20", "20", "20", "20", "20", "20", "--output-file", out},
		IO{Stdout: &stdout, Stderr: &stderr, Signals: sigs, Exit: func(int) { t.Error("exited at once on one signal") }})
	if code != exit.Interrupted {
		t.Fatalf("exit %d, want 130\n%s\n%s", code, stdout.String(), stderr.String())
	}
	lines := readLines(t, out)
	if len(lines) < 2 || len(lines) > 5 {
		t.Fatalf("%d lines after ~1.5 s of 0.5 s runs", len(lines))
	}
	if !strings.Contains(stderr.String(), "interrupted; the lines of the ") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

func TestSweepUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--search", "request-rate"}, "give the SLO to meet with --slo"},
		{[]string{"--search", "request-rate", "--slo", "p99_ttft_ms<5", "--sweep-profile", "auto"}, "give one of them"},
		{[]string{"--sweep-profile", "auto", "--request-rate", "1,2"}, "finds its own rates"},
		{[]string{"--zip", "--request-rate", "1,2", "--max-concurrency", "1,2,3"}, "--zip: the lists have different lengths (2 and 3)"},
		{[]string{"--request-rate", "1,x"}, "argument --request-rate: invalid float value: 'x'"},
		{[]string{"--slo", "p99<"}, "--slo \"p99<\""},
		{[]string{"--search", "request-rate", "--slo", "p99_ttf_ms<5"}, `--slo "p99_ttf_ms<5": no numeric result key "p99_ttf_ms"; keys: request_rate,`},
		{[]string{"--search-tolerance", "2", "--search", "max-concurrency", "--slo", "a<1"}, "--search-tolerance: must be between 0 and 1"},
	} {
		code, _, stderr := run(t, nil, append([]string{"sweep", "--base-url", "http://127.0.0.1:9"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, code, stderr, c.want)
		}
	}
}
