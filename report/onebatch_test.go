package report

import (
	"os"
	"strings"
	"testing"
)

func fp(x float64) *float64 { return &x }
func ip(x int) *int         { return &x }

// The worked example of the one-batch spec §5.2, rendered by tabulate
// 0.8.9: its re-formatting of numbers ("123456.79" → 123457, "0.50" →
// 0.5) kept.
func TestBatchReportWorkedExample(t *testing.T) {
	want, err := os.ReadFile("testdata/onebatch/report-worked-example.txt")
	if err != nil {
		t.Fatal(err)
	}
	cases := []*BatchCase{
		{BatchSize: 32, InputLen: 1024, Latency: 3.456789, InputThroughput: 123456.789, OutputThroughput: 2345.678},
		{BatchSize: 1, InputLen: 1024, Latency: 0.5, InputThroughput: 20480, OutputThroughput: 150, AccLength: fp(2.345), CacheHitRate: fp(0)},
	}
	got := BatchReport(cases, ReportOptions{InputLens: PyIntSeq([]int{1024}, false), OutputLens: PyIntSeq([]int{16}, true), HourlyCost: 2})
	// print() adds the last newline.
	if got+"\n" != string(want) {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// Sorted by input length (stable), the optional columns, and n/a where
// the output throughput is 0.
func TestBatchReportColumns(t *testing.T) {
	cases := []*BatchCase{
		{BatchSize: 8, InputLen: 2048, Latency: 1, InputThroughput: 1000, OutputThroughput: 0, NumEarlyStopped: ip(0), ProfileLink: "/tmp/p"},
		{BatchSize: 4, InputLen: 512, Latency: 2, InputThroughput: 2000, OutputThroughput: 400, NumEarlyStopped: ip(3), SteadyThroughput: fp(200)},
	}
	got := BatchReport(cases, ReportOptions{InputLens: "[512, 2048]", OutputLens: "(16,)", CacheHitRate: 0.25, DisableIgnoreEOS: true, Profile: true, HourlyCost: 4})
	lines := strings.Split(got, "\n")
	if lines[1] != "Input lens: [512, 2048]. Output lens: (16,). Cache hit rate: 25.0%." {
		t.Errorf("summary line %q", lines[1])
	}
	for _, h := range []string{"steady output throughput (tok/s)", "steady ITL (ms)", "early stops", "profile"} {
		if !strings.Contains(lines[2], h) {
			t.Errorf("header has no %q: %s", h, lines[2])
		}
	}
	if !strings.HasPrefix(lines[4], "|            4 |         512 |") || !strings.Contains(lines[4], "3/4") || !strings.Contains(lines[4], "| 20.00 ") {
		t.Errorf("first row (input 512): %s", lines[4])
	}
	if !strings.HasPrefix(lines[5], "|            8 |        2048 |") || !strings.Contains(lines[5], "[Profile](/tmp/p)") || strings.Count(lines[5], "n/a") != 6 {
		t.Errorf("second row (input 2048): %s", lines[5])
	}
}

func TestPrintBatchCase(t *testing.T) {
	var b strings.Builder
	PrintBatchCase(&b, &BatchCase{BatchSize: 32, InputLen: 1024, OutputLen: 256, Latency: 3.456789, InputThroughput: 123456.789,
		OutputThroughput: 2345.678, LastTTFT: 0.265, AccLength: fp(2.345), CacheHitRate: fp(0.5)})
	want := `batch size: 32
input_len: 1024
output_len: 256
latency: 3.46 s
input throughput: 123456.79 tok/s
output throughput: 2345.68 tok/s
last_ttft: 0.27 s
last generation throughput: -1.00 tok/s
acc_length: 2.35 
cache hit rate: 0.5000
`
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}

	b.Reset()
	PrintBatchCase(&b, &BatchCase{BatchSize: 2, InputLen: 8, OutputLen: 1, Latency: 0.125, InputThroughput: 128, LastTTFT: 0.125,
		LastGenThroughput: fp(1234.5), TotalOutputTokens: 2, NumEarlyStopped: ip(1), EarlyStopLines: true})
	want = `batch size: 2
input_len: 8
output_len: 1
latency: 0.12 s
input throughput: 128.00 tok/s
last_ttft: 0.12 s
last generation throughput: 1234.50 tok/s
total output tokens: 2 (requested 2)
early-stopped requests: 1/2
WARNING: no steady-state full-batch window (a request finished before the last one started decoding); steady-state metrics are n/a.
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}

	b.Reset()
	PrintBatchCase(&b, &BatchCase{BatchSize: 2, InputLen: 8, OutputLen: 4, TotalOutputTokens: 7, NumEarlyStopped: ip(1),
		SteadyThroughput: fp(812.345), SteadyS: fp(0.0049), EarlyStopLines: true})
	if !strings.HasSuffix(b.String(), "total output tokens: 7 (requested 8)\nearly-stopped requests: 1/2\nsteady-state output throughput: 812.35 tok/s over a 0.00 s full-batch window\n") {
		t.Errorf("steady window lines:\n%s", b.String())
	}
}

func TestBatchLine(t *testing.T) {
	got := string(BatchLine(&BatchCase{RunName: "r", BatchSize: 32, InputLen: 1024, OutputLen: 256, Latency: 3.456789,
		InputThroughput: 123456.789, OutputThroughput: 2345.675, OverallThroughput: 12.5, LastTTFT: 0.26545,
		TotalOutputTokens: 8192, NumEarlyStopped: ip(0), KernelTimed: true}, "v1"))
	want := `{"run_name": "r", "batch_size": 32, "input_len": 1024, "output_len": 256, "latency": 3.4568, "input_throughput": 123456.79, ` +
		`"output_throughput": 2345.68, "overall_throughput": 12.5, "last_ttft": 0.2655, "last_gen_throughput": -1, "acc_length": -1, ` +
		`"total_output_tokens": 8192, "num_early_stopped": 0, "steady_state_output_throughput": null, "steady_state_window_s": null, ` +
		`"cache_hit_rate": null, "kernel_timed": true, "client_version": "v1"}` + "\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	got = string(BatchLine(&BatchCase{LastGenThroughput: fp(1500.456), AccLength: fp(2.0), SteadyThroughput: fp(99.999), SteadyS: fp(1.23456),
		CacheHitRate: fp(0.123456)}, ""))
	for _, part := range []string{`"last_gen_throughput": 1500.46`, `"acc_length": 2.0`, `"num_early_stopped": null`,
		`"steady_state_output_throughput": 100.0`, `"steady_state_window_s": 1.2346`, `"cache_hit_rate": 0.1235`} {
		if !strings.Contains(got, part) {
			t.Errorf("no %s in %s", part, got)
		}
	}
}

func TestPydanticFile(t *testing.T) {
	mp := "None"
	got := string(PydanticFile([]PydanticCase{{BatchCase: &BatchCase{RunName: "é", BatchSize: 1, InputLen: 2, OutputLen: 3, Latency: 0.5,
		InputThroughput: 4, OutputThroughput: 5.25, OverallThroughput: 6, LastTTFT: 0.1, AccLength: fp(1.5)}, ProfileDecode: "/tmp/d.trace.json.gz"}},
		&mp, []string{"--tp", "2"}))
	want := `[
  {
    "model_path": "None",
    "run_name": "é",
    "batch_size": 1,
    "input_len": 2,
    "output_len": 3,
    "latency": 0.5,
    "input_throughput": 4.0,
    "output_throughput": 5.25,
    "overall_throughput": 6.0,
    "last_ttft": 0.1,
    "last_gen_throughput": -1,
    "acc_length": 1.5,
    "profile_link_extend": null,
    "profile_link_decode": "/tmp/d.trace.json.gz",
    "server_args": [
      "--tp",
      "2"
    ]
  }
]`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := string(PydanticFile(nil, nil, nil)); got != "[]" {
		t.Errorf("no results: %s", got)
	}
}

func TestPyIntSeq(t *testing.T) {
	for _, tc := range []struct {
		v     []int
		tuple bool
		want  string
	}{{[]int{1024}, true, "(1024,)"}, {[]int{1, 2}, true, "(1, 2)"}, {[]int{1024}, false, "[1024]"}, {[]int{1, 16, 64}, false, "[1, 16, 64]"}} {
		if got := PyIntSeq(tc.v, tc.tuple); got != tc.want {
			t.Errorf("PyIntSeq(%v, %v) = %s", tc.v, tc.tuple, got)
		}
	}
}
