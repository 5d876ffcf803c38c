package calibrate

import (
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchserve/metrics"
)

func TestTruth(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"requests": [
			{"id": "cmpl-1", "ttft": 0.05, "error": "", "chunks": [[1.05, 1, 0.00001], [1.06, 1, 0.00001], [1.08, 2, 0.00001]]},
			{"id": "cmpl-2", "ttft": 0.07, "error": "", "chunks": [[2.07, 1, 0.00001]]},
			{"id": "cmpl-3", "ttft": null, "error": "the client closed the connection", "chunks": []}]}`)
	}))
	defer srv.Close()
	truth, err := (&simProc{url: srv.URL}).truth()
	if err != nil {
		t.Fatal(err)
	}
	if len(truth.ids) != 2 || truth.ids[0] != "cmpl-1" || len(truth.byID["cmpl-1"].chunks) != 3 {
		t.Errorf("truth = %+v, want the two finished requests by id", truth)
	}
	ttft, itl := truth.all()
	if len(ttft) != 2 || ttft[0] != 0.05 || ttft[1] != 0.07 {
		t.Errorf("ttft = %v, want the two finished requests'", ttft)
	}
	if len(itl) != 2 || itl[0] < 0.0099 || itl[0] > 0.0101 || itl[1] < 0.0199 || itl[1] > 0.0201 {
		t.Errorf("itl = %v, want the gaps between chunk writes", itl)
	}
	// The finished requests' writes: four, of 1, 1, 2 and 1 tokens.
	if want := (chunkCount{Writes: 4, Tokens: 5, Multi: 1}); truth.writes != want {
		t.Errorf("writes = %+v, want %+v", truth.writes, want)
	}
}

func TestMatch(t *testing.T) {
	truth := truthLog{ids: []string{"a", "b", "c"}, byID: map[string]trueRequest{
		"a": {ttft: 0.050, chunks: []float64{1.000, 1.010, 1.020}},
		"b": {ttft: 0.060, chunks: []float64{2.000, 2.010, 2.030}},
		"c": {ttft: 0.070, chunks: []float64{3.000, 3.010}},
	}}
	dir := t.TempDir()
	path := filepath.Join(dir, "records.jsonl")
	lines := `{"id": "a", "success": true, "ttft": 0.051, "itl": [0.0105, 0.0095]}
{"id": "b", "success": true, "ttft": 0.062, "itl": [0.010, 0.022]}
{"id": "c", "success": true, "ttft": 0.070, "itl": [0.004, 0.006]}
{"id": "x", "success": true, "ttft": 0.5, "itl": [0.5]}
{"id": "a", "success": false, "ttft": 0, "itl": []}
`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, err := readRecords(path)
	if err != nil {
		t.Fatal(err)
	}
	m := match(recs, truth)
	// "x" is unknown to the simulator and the failed "a" is skipped; "c"
	// counts for TTFT but its gaps do not line up (two against one).
	if m.Requests != 3 || m.Gaps != 4 {
		t.Fatalf("matched %d requests, %d gaps; want 3 and 4", m.Requests, m.Gaps)
	}
	// TTFT errors 1, 2, 0 ms; gap errors +0.5, -0.5, 0, +2 ms.
	if math.Abs(m.TTFT.Median-1) > 1e-9 || math.Abs(m.TTFT.Mean-1) > 1e-9 {
		t.Errorf("TTFT error median %v mean %v, want 1 ms", m.TTFT.Median, m.TTFT.Mean)
	}
	if math.Abs(m.ITL.Median-0.25) > 1e-9 || math.Abs(m.ITL.Mean-0.5) > 1e-9 {
		t.Errorf("ITL error median %v mean %v, want 0.25 and 0.5 ms", m.ITL.Median, m.ITL.Mean)
	}
	if m.ITLAbsP99 < 1.9 || m.ITLAbsP99 > 2 {
		t.Errorf("ITL |error| p99 = %v, want just under 2 ms", m.ITLAbsP99)
	}
	os.WriteFile(path, []byte("{\"id\": \"a\"}\nnot json\n"), 0o644)
	if _, err := readRecords(path); err == nil || !strings.Contains(err.Error(), "records.jsonl:2") {
		t.Errorf("a bad line: err = %v, want one naming the file and line 2", err)
	}
}

func TestWriteMatrix(t *testing.T) {
	var p Point
	p.Concurrency, p.Requests, p.PeakRSSMB, p.PeakAnonMB, p.CPUSeconds = 100, 200, 38.9, 21.25, 0.3
	p.OutputTokens = 20000
	p.MarginalCPU = marginal(p.CPUSeconds, 0.05, p.OutputTokens)
	p.Reported.TTFT = metrics.Stats{Mean: 100.5, Median: 101, P99: 105}
	p.True.TTFT = metrics.Stats{Mean: 100, Median: 101.25, P99: 104}
	var b strings.Builder
	writeMatrix(&b, []Point{p})
	if !strings.Contains(b.String(), "| 100 | 200 | 100.50 / 100.00 / +0.50 | 101.00 / 101.25 / -0.25 | 105.00 / 104.00 / +1.00 |") {
		t.Errorf("matrix:\n%s", b.String())
	}
	// (0.3 − 0.05) s over 20,000 tokens: 12.5 µs a token.
	if !strings.Contains(b.String(), "| 38.9 | 21.2 | 0.30 | 12.500 |\n") || !strings.Contains(b.String(), "| client peak RSS (MB) | client peak RssAnon (MB) | client CPU (s) | client CPU µs per output token, marginal |\n") {
		t.Errorf("matrix, the marginal CPU column:\n%s", b.String())
	}
}

func TestCalibrateMarginal(t *testing.T) {
	for _, c := range []struct {
		run, base float64
		tokens    int
		want      float64
	}{
		{run: 1.25, base: 0.05, tokens: 100_000, want: 12},
		{run: 0.05, base: 0.05, tokens: 10, want: 0},
		// A run cheaper than the start-up (noise) shows as it is.
		{run: 0.04, base: 0.05, tokens: 1000, want: -10},
	} {
		if got := marginal(c.run, c.base, c.tokens); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("marginal(%v, %v, %d) = %v, want %v µs", c.run, c.base, c.tokens, got, c.want)
		}
	}
	if got := marginal(1, 0.05, 0); !math.IsNaN(got) {
		t.Errorf("marginal of no tokens = %v, want NaN", got)
	}
	if fixed(math.NaN(), 3) != "n/a" || fixed(2.5, 3) != "2.500" {
		t.Errorf("fixed: %q, %q", fixed(math.NaN(), 3), fixed(2.5, 3))
	}
}

func TestCalibrateThroughputTable(t *testing.T) {
	tp := Throughput{Requests: 500, Concurrency: 256, OutputLen: 96, TokensPerSec: 150000, CPUMicrosPerToken: 4.25, PeakRSSMB: 40, PeakAnonMB: math.NaN()}
	tp.MarginalCPU = marginal(0.3, 0.06, 48000)
	var b strings.Builder
	writeThroughput(&b, tp)
	// RssAnon not measured (not Linux) shows as "-", not 0.
	want := "| output tokens/s | client CPU µs per output token, the client's own in-run figure | client CPU µs per output token, marginal | client peak RSS (MB) | client peak RssAnon (MB) |\n" +
		"|---:|---:|---:|---:|---:|\n" +
		"| 150000 | 4.250 | 5.000 | 40.0 | - |\n"
	if b.String() != want {
		t.Errorf("throughput table:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestCalibrateScaleTable(t *testing.T) {
	row := func(sc Scale) string {
		var b strings.Builder
		writeScale(&b, []Scale{sc})
		lines := strings.Split(b.String(), "\n")
		if len(lines) < 3 || !strings.HasPrefix(lines[0], "| streams | requests completed |") {
			t.Fatalf("scale table:\n%s", b.String())
		}
		return strings.Join(lines[2:], "\n")
	}
	ok := Scale{Streams: 10000, OutputLen: 32, Completed: 10000, Verdict: "the client had headroom | and its timing held",
		MarginalCPU: marginal(4.05, 0.05, 320000), PeakRSSMB: 512.25, PeakAnonMB: 400,
		Sim: chunkCount{Writes: 300000, Tokens: 320000, Multi: 15000}}
	ok.Matched.Requests, ok.Matched.Gaps = 10000, 200000
	ok.Matched.TTFT = metrics.Stats{Mean: 1.234, P99: 9.876}
	ok.Matched.ITLAbsP99 = 0.5
	got := row(ok)
	// The verdict's "|" is escaped; 4 s over 320,000 tokens is 12.5 µs.
	if want := "| 10000 | 10000 | +1.23 | +9.88 | 0.500 | the client had headroom \\| and its timing held | 12.500 | 512.2 | 400.0 |\n"; !strings.HasPrefix(got, want) {
		t.Errorf("scale row:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(got, "At 10000 streams the simulator wrote 320000 tokens in 300000 content writes; 15000 writes (5.0%) carried more than one token") {
		t.Errorf("scale note:\n%s", got)
	}

	failed := Scale{Streams: 10000, OutputLen: 32, Completed: -1,
		Err: short(&runError{cmd: "/tmp/bs --num-prompts 10000", err: errors.New("exit status 1"), stderr: "warming up\nbenchserve: error: dial tcp: too many open files"})}
	if want := "| 10000 | — | — | — | — | client failed: exit status 1: benchserve: error: dial tcp: too many open files | — | — | — |\n"; row(failed) != want {
		t.Errorf("failed scale row:\n%s\nwant:\n%s", row(failed), want)
	}

	unmatched := Scale{Streams: 2000, OutputLen: 32, Completed: 2000, Verdict: "ok", MarginalCPU: math.NaN(), PeakRSSMB: 100, PeakAnonMB: 60, Err: "/sim/truth: EOF"}
	if want := "| 2000 | 2000 | — | — | — | ok; not matched: /sim/truth: EOF | n/a | 100.0 | 60.0 |\n"; row(unmatched) != want {
		t.Errorf("unmatched scale row:\n%s\nwant:\n%s", row(unmatched), want)
	}
}

func TestCalibrateShortError(t *testing.T) {
	if got := short(errors.New("POST /sim/truth/reset: 500 Internal Server Error")); got != "POST /sim/truth/reset: 500 Internal Server Error" {
		t.Errorf("short(plain) = %q", got)
	}
	long := &runError{cmd: "bs", err: errors.New("exit status 3"), stderr: strings.Repeat("x", 300)}
	if got := short(long); len(got) != 200 || !strings.HasPrefix(got, "exit status 3: xxx") || !strings.HasSuffix(got, "...") {
		t.Errorf("short(long) = %q (%d bytes)", got, len(got))
	}
	if got := short(&runError{cmd: "bs", err: errors.New("signal: killed")}); got != "signal: killed" {
		t.Errorf("short(no stderr) = %q", got)
	}
}

func TestCalibrateFDNote(t *testing.T) {
	if fdNote(10000, 20000) != "" || fdNote(10000, math.MaxUint64) != "" {
		t.Error("a note under a limit that is enough")
	}
	if got := fdNote(10000, 1024); !strings.Contains(got, "hard RLIMIT_NOFILE is 1024") || strings.Contains(got, "\n") {
		t.Errorf("fdNote(10000, 1024) = %q, want one line naming the limit", got)
	}
}

// Each matched row carries the client's judgement of the run, so that the
// table shows it beside the error it was meant to foresee.
func TestMatchedShowsVerdict(t *testing.T) {
	var b strings.Builder
	writeMatched(&b, []Point{
		{Concurrency: 1, Verdict: "ok: timing held (0.0% of chunks bunched by late reads, read delay p99 1.31 ms)"},
		{Concurrency: 1000, Verdict: "may be distorted: 2.1% of chunks bunched by late reads"},
		{Concurrency: 5},
	})
	rows := strings.Split(strings.TrimSpace(b.String()), "\n")
	for i, want := range []string{"| ok |", "| may be distorted |", "| - |"} {
		if !strings.HasSuffix(rows[2+i], want) {
			t.Errorf("row %d = %q, want it to end %q", i, rows[2+i], want)
		}
	}
}

// The scaling table: per processor count, tokens per client CPU-second,
// the efficiency against the first row (its CPU per token over this
// row's) and the cores 2M tokens/s would take at this row's cost.
func TestCalibrateScalingTable(t *testing.T) {
	var b strings.Builder
	writeScaling(&b, []Throughput{
		{Procs: 1, TokensPerSec: 150000, CPUMicrosPerToken: 4, MarginalCPU: 3.5, PeakAnonMB: 30},
		{Procs: 2, TokensPerSec: 240000, CPUMicrosPerToken: 5, MarginalCPU: 4.5, PeakAnonMB: 31},
	})
	for _, want := range []string{
		"| 1 | 150000 | 4.000 | 3.500 | 250000 | 100% | 8.0 | 30.0 |",
		"| 2 | 240000 | 5.000 | 4.500 | 200000 | 80% | 10.0 | 31.0 |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no row %q in:\n%s", want, b.String())
		}
	}
	for _, o := range []Options{{ThroughputProcs: []int{0}, ThroughputRequests: 1}, {ThroughputProcs: []int{2}}} {
		if err := o.Check(); err == nil || !strings.Contains(err.Error(), "--throughput-procs") {
			t.Errorf("%+v: %v", o, err)
		}
	}
}
