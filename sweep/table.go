package sweep

import (
	"fmt"
	"io"
	"strings"

	"benchserve/report"
)

// table is the sweep's console: one row per run, printed as it finishes.
type table struct {
	w      io.Writer
	header bool
}

func newTable(w io.Writer) *table { return &table{w: w} }

const rowFormat = "%5s  %-8s %-14s %9s %10s %9s %9s %8s %8s %8s  %s\n"

func (t *table) head() {
	if t.header {
		return
	}
	t.header = true
	fmt.Fprintf(t.w, rowFormat, "run", "phase", "load", "req/s", "out tok/s", "TTFT p50", "TTFT p99", "ITL p50", "ITL p99", "goodput", "SLO")
	fmt.Fprintln(t.w, strings.Repeat("-", 112))
}

// row prints a finished run: its load, achieved request rate, output
// throughput, TTFT and ITL (ms), goodput (req/s) and whether it passed.
func (t *table) row(idx int, pt Point, res *report.Result, pass *bool) {
	t.head()
	s := res.Summary
	good := "-"
	if g := res.Run.Goodput; g != nil {
		good = report.F(g.RequestGoodput)
	}
	verdict := "-"
	if pass != nil {
		verdict = "FAIL"
		if *pass {
			verdict = "pass"
		}
	}
	if s.Failed > 0 {
		verdict += fmt.Sprintf(" (%d failed)", s.Failed)
	}
	if res.Stop != nil {
		verdict += " (interrupted)"
	}
	fmt.Fprintf(t.w, rowFormat, fmt.Sprint(idx), pt.Phase, pt.Label(), report.F(s.RequestThroughput), report.F(s.OutputThroughput),
		report.F(s.TTFT.Median), report.F(s.TTFT.P99), report.F(s.ITL.Median), report.F(s.ITL.P99), good, verdict)
}

// broken prints a run that could not run.
func (t *table) broken(idx int, pt Point, msg string) {
	t.head()
	fmt.Fprintf(t.w, "%5d  %-8s %-14s failed: %s\n", idx, pt.Phase, pt.Label(), msg)
}

// spread prints a point's repeats: the mean and 95% interval of its
// throughput and latencies.
func (t *table) spread(pt Point, n int, s map[string]Spread) {
	f := func(k string) string {
		sp := s[k]
		return fmt.Sprintf("%s ± %s", report.F(sp.Mean), report.F(sp.CIHigh-sp.Mean))
	}
	fmt.Fprintf(t.w, "%5s  %-8s %-14s %d runs: req/s %s, out tok/s %s, TTFT p99 %s ms, ITL p99 %s ms (mean ± 95%% interval); CV of out tok/s %.1f%%\n",
		"", "repeats", pt.Label(), n, f("request_throughput"), f("output_throughput"), f("p99_ttft_ms"), f("p99_itl_ms"), 100*s["output_throughput"].CV)
}

// line prints a line of its own under the table (the search's answer).
func (t *table) line(format string, a ...any) {
	fmt.Fprintf(t.w, format+"\n", a...)
}
