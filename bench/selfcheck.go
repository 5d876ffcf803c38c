package bench

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"benchserve/internal/pyjson"
	"benchserve/metrics"
	"benchserve/record"
	"benchserve/report"
)

// selfCheck measures the client while it runs, so that every result says
// whether the client itself may have distorted it: CPU time, GC pauses,
// how late the pacer released each request, and the rate it achieved.
type selfCheck struct {
	withSim   bool
	cpu0, cpu time.Duration
	gc0, gc   uint64
	// lags are release − intended send time, per dispatched request, in
	// seconds: the pacer's own error, before any wait for a concurrency slot.
	lags []float64
}

// startSelfCheck starts measuring a run of n requests; withSim: the
// simulator runs in this process (--sim).
func startSelfCheck(n int, withSim bool) *selfCheck {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return &selfCheck{withSim: withSim, cpu0: cpuTime(), gc0: ms.PauseTotalNs, lags: make([]float64, 0, n)}
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// checkResult is what the self-check found.
type checkResult struct {
	// target is --request-rate, planned the rate of this run's drawn
	// schedule (a Poisson sample differs from its mean), achieved the rate
	// requests actually left at.
	target, planned, achieved float64 // requests per second
	lagP99, lagMax            float64 // seconds
	cpu                       time.Duration
	cpuPerToken               float64 // microseconds
	gcPause                   time.Duration
	verdict                   string
	anchored                  metrics.Anchored
	// kernelTimed is the share of successful responses, in percent, whose
	// every read was timed with the kernel's receive time (0 if none
	// succeeded, like the other figures then).
	kernelTimed float64
	// withSim: the simulator runs in this process (--sim), so the CPU
	// and GC figures are its too.
	withSim bool
}

// stop ends the CPU and GC measurement, when the last response is in:
// what the client spends afterwards (metrics, report) is not the run's.
func (c *selfCheck) stop() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	c.cpu, c.gc = cpuTime()-c.cpu0, ms.PauseTotalNs-c.gc0
}

// finish computes the findings over a run of dur seconds whose schedule
// planned the last request at planned seconds.
func (c *selfCheck) finish(dur, rate, planned float64, recs []record.Record, outputTokens int) checkResult {
	r := checkResult{
		target:   rate,
		planned:  math.Inf(1),
		cpu:      c.cpu,
		gcPause:  time.Duration(c.gc),
		anchored: metrics.FromSchedule(recs),
		achieved: math.Inf(1),
		withSim:  c.withSim,
	}
	if len(recs) > 1 && planned > 0 {
		r.planned = float64(len(recs)-1) / planned
	}
	lags := slices.Clone(c.lags)
	slices.Sort(lags)
	if n := len(lags); n > 0 {
		r.lagMax = lags[n-1]
		r.lagP99 = metrics.Describe(lags).P99 / 1000
	}
	var first, last float64
	sent := 0
	for i := range recs {
		if !recs[i].Sent {
			continue
		}
		if sent == 0 || recs[i].Start < first {
			first = recs[i].Start
		}
		last = max(last, recs[i].Start)
		sent++
	}
	if sent > 1 && last > first {
		r.achieved = float64(sent-1) / (last - first)
	}
	if outputTokens > 0 {
		r.cpuPerToken = float64(r.cpu.Microseconds()) / float64(outputTokens)
	}
	ok, kernel := 0, 0
	for i := range recs {
		if recs[i].Success {
			ok++
			if recs[i].KernelTimed {
				kernel++
			}
		}
	}
	if ok > 0 {
		r.kernelTimed = 100 * float64(kernel) / float64(ok)
	}
	r.verdict = verdict(r, dur)
	return r
}

// simNote qualifies the verdict of a run whose simulator shares the process.
const simNote = " (CPU and GC figures include the in-process simulator of --sim)"

// verdict says whether the client kept up. The thresholds are where the
// client's own cost starts to show in latencies of a few milliseconds.
func verdict(r checkResult, dur float64) string {
	var why []string
	cores := float64(runtime.GOMAXPROCS(0))
	if dur > 0 {
		if share := r.cpu.Seconds() / (dur * cores); share > 0.8 {
			why = append(why, fmt.Sprintf("client CPU at %.0f%% of %d cores", share*100, int(cores)))
		}
		if share := r.gcPause.Seconds() / dur; share > 0.01 {
			why = append(why, fmt.Sprintf("GC pauses %.1f%% of the run", share*100))
		}
	}
	if r.lagP99 > 0.001 {
		why = append(why, fmt.Sprintf("dispatch lag p99 %.2f ms", r.lagP99*1000))
	}
	note := ""
	if r.withSim {
		note = simNote
	}
	if len(why) == 0 {
		return "the client had headroom" + note
	}
	return "may be distorted: " + strings.Join(why, ", ") + note
}

// rows are the console lines of our sections after the reference block.
// Embedding runs have no TTFT, as in the reference block.
func (r checkResult) rows(embedding bool) (map[string][]report.Row, []string) {
	a := r.anchored
	ms := func(v float64) string { return report.F(v) }
	var anchored []report.Row
	if !embedding {
		anchored = []report.Row{
			{Label: "Mean TTFT from schedule (ms):", Value: ms(a.TTFT.Mean)},
			{Label: "Median TTFT from schedule (ms):", Value: ms(a.TTFT.Median)},
			{Label: "P99 TTFT from schedule (ms):", Value: ms(a.TTFT.P99)},
		}
	}
	anchored = append(anchored, []report.Row{
		{Label: "Mean E2E from schedule (ms):", Value: ms(a.E2E.Mean)},
		{Label: "Median E2E from schedule (ms):", Value: ms(a.E2E.Median)},
		{Label: "P99 E2E from schedule (ms):", Value: ms(a.E2E.P99)},
		{Label: "Mean send lag (ms):", Value: ms(a.Lag.Mean)},
		{Label: "P99 send lag (ms):", Value: ms(a.Lag.P99)},
	}...)
	check := []report.Row{
		{Label: "Target request rate (req/s):", Value: report.F(r.target)},
		{Label: "Planned request rate (req/s):", Value: report.F(r.planned)},
		{Label: "Achieved send rate (req/s):", Value: report.F(r.achieved)},
		{Label: "Dispatch lag p99 (ms):", Value: report.F(r.lagP99 * 1000)},
		{Label: "Dispatch lag max (ms):", Value: report.F(r.lagMax * 1000)},
		{Label: "Client CPU time (s):", Value: report.F(r.cpu.Seconds())},
		{Label: "Client CPU per output token (us):", Value: report.F(r.cpuPerToken)},
		{Label: "GC pause total (ms):", Value: report.F(float64(r.gcPause) / 1e6)},
		{Label: "Kernel-timed responses (%):", Value: report.F(r.kernelTimed)},
		{Label: "Client verdict:", Value: r.verdict},
	}
	const t1, t2 = "Schedule-anchored latency", "Client self-check"
	return map[string][]report.Row{t1: anchored, t2: check}, []string{t1, t2}
}

// extra is the same figures as JSONL keys, written after the reference's.
func (r checkResult) extra(failed int) *pyjson.Object {
	o := &pyjson.Object{}
	stats := func(prefix string, s metrics.Stats) {
		for _, kv := range []struct {
			k string
			v float64
		}{{"mean", s.Mean}, {"median", s.Median}, {"std", s.Std}, {"p90", s.P90}, {"p95", s.P95}, {"p99", s.P99}} {
			o.Set(kv.k+"_"+prefix+"_ms", pyjson.Float(kv.v))
		}
	}
	stats("ttft_from_schedule", r.anchored.TTFT)
	stats("e2e_latency_from_schedule", r.anchored.E2E)
	stats("send_lag", r.anchored.Lag)
	o.Set("failed", pyjson.Int(failed))
	o.Set("planned_request_rate", pyjson.Float(r.planned))
	o.Set("achieved_request_rate", pyjson.Float(r.achieved))
	o.Set("dispatch_lag_p99_ms", pyjson.Float(r.lagP99*1000))
	o.Set("dispatch_lag_max_ms", pyjson.Float(r.lagMax*1000))
	o.Set("client_cpu_s", pyjson.Float(r.cpu.Seconds()))
	o.Set("client_cpu_us_per_output_token", pyjson.Float(r.cpuPerToken))
	o.Set("client_gc_pause_ms", pyjson.Float(float64(r.gcPause)/1e6))
	o.Set("kernel_timed_pct", pyjson.Float(r.kernelTimed))
	o.Set("client_verdict", pyjson.String(r.verdict))
	return o
}
