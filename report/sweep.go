package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"benchserve/internal/py/pyjson"
)

// This file writes a sweep's keys and its table (package sweep decides
// the loads and computes the figures): the sweep_point object each run's
// line carries, the line of a run that could not run, a point's
// repeat_stats line and the console table.

// SweepPoint is one run of a sweep: its sweep_point object.
type SweepPoint struct {
	Index int    // the run's number in the sweep, from 1
	Phase string // grid, floor, ceiling, profile, search, confirm
	Rate  float64
	Conc  int // 0: no cap (null)
	// InputLen and OutputLen are the point's random lengths.
	InputLen, OutputLen int
	// Repeat is the run's repeat of its point, from 1 (0 on the point's
	// repeat_stats line).
	Repeat int
	// Passed is whether the run met every SLO (nil: none was given).
	Passed *bool
}

func (p SweepPoint) object() []byte {
	o := &pyjson.Object{}
	o.Set("index", pyjson.Int(p.Index))
	o.Set("phase", pyjson.String(p.Phase))
	o.Set("request_rate", pyjson.Float(p.Rate))
	if p.Conc > 0 {
		o.Set("max_concurrency", pyjson.Int(p.Conc))
	} else {
		o.Set("max_concurrency", pyjson.Null)
	}
	o.Set("random_input_len", pyjson.Int(p.InputLen))
	o.Set("random_output_len", pyjson.Int(p.OutputLen))
	o.Set("repeat", pyjson.Int(p.Repeat))
	if p.Passed != nil {
		o.Set("slo_passed", pyjson.Bool(*p.Passed))
	} else {
		o.Set("slo_passed", pyjson.Null)
	}
	return o.Bytes()
}

// Label is the point's load in a few characters: "12.5 req/s", "c=16".
func (p SweepPoint) Label() string {
	s := "inf"
	if !math.IsInf(p.Rate, 1) {
		s = strconv.FormatFloat(p.Rate, 'g', 4, 64)
	}
	if p.Conc > 0 {
		s += fmt.Sprintf(" c=%d", p.Conc)
	}
	return s
}

// SweepTail is the keys a sweep adds after a run's own (Result.Tail).
func SweepTail(p SweepPoint) *pyjson.Object {
	o := &pyjson.Object{}
	o.Set("sweep_point", p.object())
	return o
}

// SweepBrokenLine is the line of a run that could not run: its point and
// why.
func SweepBrokenLine(p SweepPoint, msg string) []byte {
	o := &pyjson.Object{}
	o.Set("sweep_point", p.object())
	o.Set("error", pyjson.String(msg))
	return append(o.Bytes(), '\n')
}

// Spread is a figure over a point's repeats: the mean, the sample
// standard deviation, the coefficient of variation (std/mean) and a 95%
// interval for the mean.
type Spread struct {
	N             int
	Mean, Std, CV float64
	CILow, CIHigh float64
}

// RepeatStatsLine is a point's line after its repeats: the spread of each
// of keys that s has, in that order.
func RepeatStatsLine(p SweepPoint, repeats int, keys []string, s map[string]Spread) []byte {
	o := &pyjson.Object{}
	o.Set("sweep_point", p.object())
	o.Set("repeats", pyjson.Int(repeats))
	st := &pyjson.Object{}
	for _, k := range keys {
		sp, ok := s[k]
		if !ok {
			continue
		}
		e := &pyjson.Object{}
		e.Set("mean", pyjson.Float(sp.Mean))
		e.Set("std", pyjson.Float(sp.Std))
		e.Set("cv", pyjson.Float(sp.CV))
		e.Set("ci95_low", pyjson.Float(sp.CILow))
		e.Set("ci95_high", pyjson.Float(sp.CIHigh))
		st.Set(k, e.Bytes())
	}
	o.Set("repeat_stats", st.Bytes())
	return append(o.Bytes(), '\n')
}

// SweepTable is a sweep's console: one row per run, printed as it
// finishes, and the lines under it.
type SweepTable struct {
	w      io.Writer
	header bool
}

func NewSweepTable(w io.Writer) *SweepTable { return &SweepTable{w: w} }

const sweepRow = "%5s  %-8s %-14s %9s %10s %9s %9s %8s %8s %8s  %s\n"

func (t *SweepTable) head() {
	if t.header {
		return
	}
	t.header = true
	fmt.Fprintf(t.w, sweepRow, "run", "phase", "load", "req/s", "out tok/s", "TTFT p50", "TTFT p99", "ITL p50", "ITL p99", "goodput", "SLO")
	fmt.Fprintln(t.w, strings.Repeat("-", 112))
}

// Row prints a finished run: its load, achieved request rate, output
// throughput, TTFT and ITL (ms), goodput (req/s) and whether it passed.
func (t *SweepTable) Row(p SweepPoint, res *Result) {
	t.head()
	s := res.Summary
	good := "-"
	if g := res.Run.Goodput; g != nil {
		good = F(g.RequestGoodput)
	}
	verdict := "-"
	if p.Passed != nil {
		verdict = "FAIL"
		if *p.Passed {
			verdict = "pass"
		}
	}
	if s.Failed > 0 {
		verdict += fmt.Sprintf(" (%d failed)", s.Failed)
	}
	if res.Stop != nil {
		verdict += " (interrupted)"
	}
	fmt.Fprintf(t.w, sweepRow, fmt.Sprint(p.Index), p.Phase, p.Label(), F(s.RequestThroughput), F(s.OutputThroughput),
		F(s.TTFT.Median), F(s.TTFT.P99), F(s.ITL.Median), F(s.ITL.P99), good, verdict)
}

// Broken prints a run that could not run.
func (t *SweepTable) Broken(p SweepPoint, msg string) {
	t.head()
	fmt.Fprintf(t.w, "%5d  %-8s %-14s failed: %s\n", p.Index, p.Phase, p.Label(), msg)
}

// Spread prints a point's repeats: the mean and 95% interval of its
// throughput and latencies.
func (t *SweepTable) Spread(p SweepPoint, n int, s map[string]Spread) {
	f := func(k string) string {
		sp := s[k]
		return fmt.Sprintf("%s ± %s", F(sp.Mean), F(sp.CIHigh-sp.Mean))
	}
	fmt.Fprintf(t.w, "%5s  %-8s %-14s %d runs: req/s %s, out tok/s %s, TTFT p99 %s ms, ITL p99 %s ms (mean ± 95%% interval); CV of out tok/s %.1f%%\n",
		"", "repeats", p.Label(), n, f("request_throughput"), f("output_throughput"), f("p99_ttft_ms"), f("p99_itl_ms"), 100*s["output_throughput"].CV)
}

// CeilingLoop prints how a sweep by --duration reaches its throughput
// ceiling.
func (t *SweepTable) CeilingLoop(inFlight int) {
	fmt.Fprintf(t.w, "The ceiling by --duration: a closed loop of %d requests in flight, one per prompt (--max-concurrency gives another).\n", inFlight)
}

// NoRatesBetween prints why --sweep-profile auto ran no rates: its
// ceiling (req/s) was not above its floor.
func (t *SweepTable) NoRatesBetween(floor, ceiling float64) {
	fmt.Fprintf(t.w, "The throughput ceiling (%s req/s) is not above the floor (%s req/s): no rates between them to run.\n", F(ceiling), F(floor))
}

// Line prints a line of its own under the table (the search's answer).
func (t *SweepTable) Line(s string) { fmt.Fprintln(t.w, s) }
