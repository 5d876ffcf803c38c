package report

import (
	"bytes"
	"strings"
	"testing"

	"benchserve/internal/py/pyjson"
	"benchserve/metrics"
	"benchserve/record"
)

// steadyRecords are SGLang's unit-test example (spec §1.5): A on [0, 10]
// with 5 tokens, B and C on [2, 8] with 3, prompts 100, 200, 300.
func steadyRecords() []record.Record {
	r := func(start, lat float64, g record.Gaps, out, in int) record.Record {
		return record.Record{Sent: true, Success: true, Start: start, End: start + lat, Latency: lat, TTFT: 1, Gaps: g,
			OutputLen: out, InputLen: in, TextTokens: out, TextCounted: true}
	}
	return []record.Record{r(0, 10, gaps(2, 2, 2, 2), 5, 100), r(2, 6, gaps(2, 2), 3, 200), r(2, 6, gaps(2, 2), 3, 300)}
}

// The block and the line are SGLang's, byte for byte: the expected text
// is what Python's "{:<40} {:<10}" formats and json.dumps wrote for the
// golden figures.
func TestSteadyBlockAndLine(t *testing.T) {
	st := metrics.ComputeSteady(steadyRecords(), 0.8, nil)
	var b bytes.Buffer
	if err := SteadyBlock(&b, &st); err != nil {
		t.Fatal(err)
	}
	want := "\n============== Steady-State Result ===============\nConcurrency ratio:                       0.80      \nMeasurement duration (s):                6.00      \nMinimum concurrency:                     3         \nCompleted requests:                      2         \nInput tokens:                            500       \nInput token throughput (tok/s):          83.33     \nGenerated tokens:                        9.00      \nOutput token throughput (tok/s):         1.50      \nOutput throughput, retokenized (tok/s):  1.50      \nAverage concurrency:                     3.00      \nPeak concurrency:                        3         \nPeak output throughput (tok/s):          3.00      \n==================================================\n"
	if b.String() != want {
		t.Errorf("block:\n%q\nwant\n%q", b.String(), want)
	}
	line := `{"concurrency_ratio": 0.8, "window_start": 2.0, "window_end": 8.0, "duration": 6.0, "concurrency_threshold": 3, "completed": 2, "total_input": 500, "input_throughput": 83.33333333333333, "total_output": 9.0, "total_output_retokenized": 9.0, "output_throughput": 1.5, "output_throughput_retokenized": 1.5, "average_concurrency": 3.0, "peak_concurrency": 3, "peak_output_throughput": 3.0}` + "\n"
	if got := string(SteadyLine(&st)); got != line {
		t.Errorf("line:\n%s\nwant\n%s", got, line)
	}
}

// Without a window the block says n/a and the line holds nulls (SGLang
// raises instead).
func TestSteadyNoWindow(t *testing.T) {
	st := metrics.ComputeSteady([]record.Record{{Sent: true, Start: 1, Latency: 1, Error: "500"}}, 0.5, nil)
	var b bytes.Buffer
	if err := SteadyBlock(&b, &st); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), " n/a "); n != 11 || !strings.Contains(b.String(), "Concurrency ratio:                       0.50") {
		t.Errorf("%d n/a lines in\n%s", n, b.String())
	}
	o, err := pyjson.ParseObject(SteadyLine(&st))
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range o.Keys() {
		v, _ := o.Get(k)
		if (i == 0) != (string(v) != "null") {
			t.Errorf("%s: %s", k, v)
		}
	}
	if o.Len() != 15 {
		t.Errorf("%d keys", o.Len())
	}
}

// In a run's output the block follows the reference block and comes
// before our sections; the line carries both objects after the
// reference's keys.
func TestSteadyInResult(t *testing.T) {
	run, s := completionsRun()
	st := metrics.ComputeSteady(steadyRecords(), 0.8, nil)
	res := &Result{Run: run, Summary: s, Records: steadyRecords(), Steady: &st}
	var b bytes.Buffer
	if err := res.Print(&b, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	var at int
	ref := strings.Index(out, "==================================================\n")
	block := strings.Index(out, "= Steady-State Result =")
	ours := strings.Index(out, "-"+steadyTitle+"-")
	if ref < 0 || block < ref || ours < block {
		t.Fatalf("reference rule at %d, steady block at %d, our section at %d:\n%s", ref, block, ours, out)
	}
	for _, l := range []string{"Requests sent in the window:             2", "Failed requests sent in the window:      0", "Mean E2E Latency (ms):                   6000.00"} {
		if !strings.Contains(out, l) {
			t.Errorf("no %q in\n%s", l, out)
		}
	}
	line := string(res.Line())
	obj := `"steady_state": ` + string(SteadyObject(&st).Bytes()) + `, "steady_state_sent": {"requests": 2, "failed": 0, "mean_ttft_ms": 1000.0`
	at, ref = strings.Index(line, obj), strings.Index(line, `"max_concurrent_requests"`)
	if at < 0 || ref < 0 || at < ref {
		t.Errorf("no %s after the reference's keys in\n%s", obj, line)
	}
}
