package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// A sweep's lines, key by key, as `benchserve sweep` writes them: a run's
// sweep_point, a broken run's line, a point's repeat_stats (keys in the
// order asked, absent figures left out).
func TestSweepLines(t *testing.T) {
	yes := true
	p := SweepPoint{Index: 3, Phase: "confirm", Rate: 12.5, InputLen: 64, OutputLen: 8, Repeat: 2, Passed: &yes}
	q := SweepPoint{Index: 4, Phase: "grid", Rate: math.Inf(1), Conc: 16, InputLen: 64, OutputLen: 8}
	qKeys := `{"sweep_point": {"index": 4, "phase": "grid", "request_rate": Infinity, "max_concurrency": 16, "random_input_len": 64, "random_output_len": 8, "repeat": 0, "slo_passed": null}`
	for _, c := range []struct{ got, want string }{
		{string(SweepTail(p).Bytes()), `{"sweep_point": {"index": 3, "phase": "confirm", "request_rate": 12.5, "max_concurrency": null, "random_input_len": 64, "random_output_len": 8, "repeat": 2, "slo_passed": true}}`},
		{string(SweepBrokenLine(q, `no "server"`)), qKeys + `, "error": "no \"server\""}` + "\n"},
		{string(RepeatStatsLine(q, 3, []string{"request_throughput", "p99_ttft_ms", "absent"}, map[string]Spread{
			"request_throughput": {N: 3, Mean: 12, Std: 2, CV: 1.0 / 6, CILow: 7.0313, CIHigh: 16.9687}, "p99_ttft_ms": {N: 3, Mean: 0.5}})),
			qKeys + `, "repeats": 3, "repeat_stats": {"request_throughput": {"mean": 12.0, "std": 2.0, "cv": 0.16666666666666666, "ci95_low": 7.0313, "ci95_high": 16.9687}, "p99_ttft_ms": {"mean": 0.5, "std": 0.0, "cv": 0.0, "ci95_low": 0.0, "ci95_high": 0.0}}}` + "\n"},
	} {
		if c.got != c.want {
			t.Errorf("got  %s\nwant %s", c.got, c.want)
		}
	}
	if p.Label() != "12.5" || q.Label() != "inf c=16" {
		t.Errorf("labels %q, %q", p.Label(), q.Label())
	}
}

// The search's line: a confirmed rate, and a concurrency search that found
// no load meeting its SLOs before its budget ended (nulls, and the loads of
// its runs as numbers of the axis).
func TestSearchLine(t *testing.T) {
	s := &Search{Rate: true, SLOs: []string{"p99_ttft_ms<100"}, Lo: 36.25, Hi: 37.5, NLo: 3, KLo: 3, KHi: 3, Rounds: 1, Confirmed: true,
		ConfirmRuns: 3, Tolerance: 0.05, MaxRuns: 40, Runs: []SearchRun{{10, "search", true}, {37.5, "confirm", false}}}
	want := `{"search_axis": "request_rate", "search_slo": ["p99_ttft_ms<100"], "search_result": 36.25, "search_low": 36.25, "search_high": 37.5, "search_confirmed": true, "search_low_passed": 3, "search_high_passed": 0, "search_low_runs": 3, "search_high_runs": 3, "search_confirm_runs": 3, "search_tolerance": 0.05, "search_max_runs": 40, "search_budget_ended": null, "search_runs": [{"request_rate": 10.0, "phase": "search", "passed": true}, {"request_rate": 37.5, "phase": "confirm", "passed": false}]}` + "\n"
	if got := string(s.Line()); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := s.Answer(), "Highest request rate meeting p99_ttft_ms<100: 36.25 req/s (between 36.25 req/s and 37.5 req/s: met in 3 of 3 runs at 36.25 req/s, in 0 of 3 at 37.5 req/s)."; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	s = &Search{SLOs: []string{"a<1", "b<2"}, Lo: math.NaN(), Hi: 4, ConfirmRuns: 3, Tolerance: 0.1, MaxRuns: 2, Cut: "bracketing",
		Runs: []SearchRun{{8, "search", false}, {4, "search", false}}}
	want = `{"search_axis": "max_concurrency", "search_slo": ["a<1", "b<2"], "search_result": null, "search_low": null, "search_high": 4.0, "search_confirmed": false, "search_low_passed": 0, "search_high_passed": 0, "search_low_runs": 0, "search_high_runs": 0, "search_confirm_runs": 3, "search_tolerance": 0.1, "search_max_runs": 2, "search_budget_ended": "bracketing", "search_runs": [{"max_concurrency": 8.0, "phase": "search", "passed": false}, {"max_concurrency": 4.0, "phase": "search", "passed": false}]}` + "\n"
	if got := string(s.Line()); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := s.Answer(), "No load met a<1, b<2: the lowest tried, 4, failed, and the run budget of 2 ended before a lower one was tried; raise --search-max-runs."; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// The table: one header, a row per run with its verdict, a broken run, a
// point's spread.
func TestSweepTable(t *testing.T) {
	var b bytes.Buffer
	tb := NewSweepTable(&b)
	no := false
	r := &Result{}
	r.Summary.RequestThroughput, r.Summary.Failed = 9.5, 2
	tb.Row(SweepPoint{Index: 1, Phase: "grid", Rate: 10, Passed: &no}, r)
	tb.Broken(SweepPoint{Index: 2, Phase: "grid", Rate: 20, Conc: 4}, "connection refused")
	tb.Spread(SweepPoint{Rate: 20}, 3, map[string]Spread{"request_throughput": {Mean: 9, CIHigh: 10}, "output_throughput": {CV: 0.0123}})
	lines := strings.Split(b.String(), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[0], "  run  phase    load") || lines[1] != strings.Repeat("-", 112) ||
		!strings.HasSuffix(lines[2], "FAIL (2 failed)") || strings.Join(strings.Fields(lines[2])[:4], " ") != "1 grid 10 9.50" ||
		lines[3] != "    2  grid     20 c=4         failed: connection refused" ||
		!strings.Contains(lines[4], "repeats  20             3 runs: req/s 9.00 ± 1.00,") || !strings.HasSuffix(lines[4], "CV of out tok/s 1.2%") {
		t.Errorf("table:\n%s", b.String())
	}
}
