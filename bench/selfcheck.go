package bench

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"benchserve/internal/hist"
	"benchserve/internal/pyjson"
	"benchserve/metrics"
	"benchserve/record"
	"benchserve/report"
)

// selfCheck measures the client while it runs, so that every result says
// whether the client itself may have distorted it: CPU time, GC pauses,
// how late the pacer released each request, how late the client read and
// sent bytes, and the rate it achieved.
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

// Limits of the verdict. Timing holds when the client bunched no more
// than 1% of the chunks by reading late (a chunk alone in a late read keeps
// its kernel time exactly; bunched ones share the newest one's) and read
// 99% of its reads within 5 ms (later than that, a client is starved and
// bunching is near). A run with a schedule also needs its requests to
// leave on time: released within 1 ms and written within 2 ms (the error
// the project promises at 1,000 streams). The client's load shows in
// latencies of a few milliseconds beyond these.
const (
	maxCPUShare     = 0.8
	maxGCShare      = 0.01
	maxDispatchLag  = time.Millisecond
	maxReadDelay    = 5 * time.Millisecond
	maxSendDelay    = 2 * time.Millisecond
	maxLateBunchPct = 1.0
)

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
	// anchored is nil for a closed-loop run (--request-rate inf): there
	// is no intended send time to measure from.
	anchored *metrics.Anchored
	// kernelTimed is the share of successful responses, in percent, whose
	// every read was timed with the kernel's receive time (0 if none
	// succeeded, like the other figures then); ok counts them.
	kernelTimed float64
	ok          int
	// The timing figures: how long bytes waited in the socket before a
	// read took them (kernel-timed reads), how long after its send time a
	// request's last byte was written, and the chunks that came in one
	// read with the chunk before them (bunched), where the read came late.
	readDelay                  hist.H
	sendP50, sendP99, sendMax  time.Duration
	chunks, bunched, lateBunch int64
	// maxInflight is the most requests in flight at one instant.
	maxInflight int
	// sources counts the successful requests by where their output
	// length came from.
	sources map[record.OutputSource]int
	// closed: a closed-loop run, whose requests have no time to leave at.
	closed bool
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

// checkRun is what finish needs to know of the run.
type checkRun struct {
	dur, rate float64
	// closed: no request has an intended send time of its own
	// (--request-rate inf without trace times).
	closed bool
	// slots is the number of requests the schedule planned, the last at
	// last seconds.
	slots        int
	last         float64
	outputTokens int
	readDelay    hist.H
}

// finish computes the findings over recs.
func (c *selfCheck) finish(run checkRun, recs []record.Record) checkResult {
	r := checkResult{
		target:    run.rate,
		planned:   math.Inf(1),
		cpu:       c.cpu,
		gcPause:   time.Duration(c.gc),
		achieved:  math.Inf(1),
		withSim:   c.withSim,
		readDelay: run.readDelay,
		sources:   map[record.OutputSource]int{},
		closed:    run.closed,
	}
	if !run.closed {
		a := metrics.FromSchedule(recs)
		r.anchored = &a
	}
	// The planned rate is over the schedule's slots, not the records: a
	// conversation is one slot and many records, and an interrupted run
	// keeps only some records.
	if run.slots > 1 && run.last > 0 {
		r.planned = float64(run.slots-1) / run.last
	}
	lags := slices.Clone(c.lags)
	slices.Sort(lags)
	if n := len(lags); n > 0 {
		r.lagMax = lags[n-1]
		r.lagP99 = metrics.Describe(lags).P99 / 1000
	}
	var first, last float64
	var sends []float64
	sent, kernel := 0, 0
	for i := range recs {
		rec := &recs[i]
		if !rec.Sent {
			continue
		}
		if sent == 0 || rec.Start < first {
			first = rec.Start
		}
		last = max(last, rec.Start)
		sent++
		if rec.SendDelay > 0 {
			sends = append(sends, rec.SendDelay)
		}
		r.chunks += int64(rec.Chunks)
		r.bunched += int64(rec.Bunched)
		r.lateBunch += int64(rec.LateBunched)
		if rec.Success {
			r.ok++
			r.sources[rec.OutputSource]++
			if rec.KernelTimed {
				kernel++
			}
		}
	}
	if sent > 1 && last > first {
		r.achieved = float64(sent-1) / (last - first)
	}
	if len(sends) > 0 {
		slices.Sort(sends)
		st := metrics.Describe(sends)
		sec := func(ms float64) time.Duration { return time.Duration(ms * 1e6) }
		r.sendP50, r.sendP99, r.sendMax = sec(st.Median), sec(st.P99), time.Duration(sends[len(sends)-1]*1e9)
	}
	r.maxInflight = metrics.MaxInflight(recs)
	if run.outputTokens > 0 {
		r.cpuPerToken = float64(r.cpu.Microseconds()) / float64(run.outputTokens)
	}
	if r.ok > 0 {
		r.kernelTimed = 100 * float64(kernel) / float64(r.ok)
	}
	r.verdict = verdict(r, run.dur)
	return r
}

// pct is part as a percentage of whole (0 of nothing).
func pct(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}

// simNote qualifies the verdict of a run whose simulator shares the process.
const simNote = " (CPU and GC figures include the in-process simulator of --sim)"

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// verdict says whether the client kept up and its timing can be trusted,
// naming every figure past its limit.
func verdict(r checkResult, dur float64) string {
	var why []string
	cores := float64(runtime.GOMAXPROCS(0))
	if dur > 0 {
		if share := r.cpu.Seconds() / (dur * cores); share > maxCPUShare {
			why = append(why, fmt.Sprintf("client CPU at %.0f%% of %d cores", share*100, int(cores)))
		}
		if share := r.gcPause.Seconds() / dur; share > maxGCShare {
			why = append(why, fmt.Sprintf("GC pauses %.1f%% of the run", share*100))
		}
	}
	if r.lagP99 > maxDispatchLag.Seconds() {
		why = append(why, fmt.Sprintf("dispatch lag p99 %.2f ms", r.lagP99*1000))
	}
	if p := r.readDelay.Quantile(0.99); p > maxReadDelay {
		why = append(why, fmt.Sprintf("read delay p99 %.2f ms (limit %.0f ms)", ms(p), ms(maxReadDelay)))
	}
	if r.sendP99 > maxSendDelay && !r.closed {
		why = append(why, fmt.Sprintf("send delay p99 %.2f ms (limit %.0f ms)", ms(r.sendP99), ms(maxSendDelay)))
	}
	if p := pct(r.lateBunch, r.chunks); p > maxLateBunchPct {
		why = append(why, fmt.Sprintf("%.1f%% of chunks bunched by late reads (limit %.0f%%)", p, maxLateBunchPct))
	}
	note := ""
	if r.withSim {
		note = simNote
	}
	switch {
	case len(why) > 0:
		return "may be distorted: " + strings.Join(why, ", ") + note
	case r.ok > 0 && r.kernelTimed < 100:
		// Without the kernel's receive times, read delays cannot be seen.
		return fmt.Sprintf("the client had headroom, but timing is not verified: %.0f%% of responses were timed when read, not by the kernel", 100-r.kernelTimed) + note
	}
	return fmt.Sprintf("the client had headroom and its timing held (read delay p99 %.2f ms, %.1f%% of chunks bunched by late reads)", ms(r.readDelay.Quantile(0.99)), pct(r.lateBunch, r.chunks)) + note
}

// sourcesText says where the output lengths came from: "server 100%",
// "retokenized 60%, requested 40%".
func (r checkResult) sourcesText() string {
	if r.ok == 0 {
		return "none"
	}
	var parts []string
	for _, s := range []record.OutputSource{record.OutputServer, record.OutputRetokenized, record.OutputRequested, record.OutputNone} {
		if n := r.sources[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s%%", s, report.F(100*float64(n)/float64(r.ok))))
		}
	}
	return strings.Join(parts, ", ")
}

// rows are the console lines of our sections after the reference block.
// Embedding runs have no TTFT, as in the reference block.
func (r checkResult) rows(embedding bool) (map[string][]report.Row, []string) {
	f := func(v float64) string { return report.F(v) }
	var a metrics.Anchored
	if r.anchored != nil {
		a = *r.anchored
	}
	val := func(v float64) string {
		if r.anchored == nil {
			return "n/a"
		}
		return f(v)
	}
	var anchored []report.Row
	if !embedding {
		anchored = []report.Row{
			{Label: "Mean TTFT from schedule (ms):", Value: val(a.TTFT.Mean)},
			{Label: "Median TTFT from schedule (ms):", Value: val(a.TTFT.Median)},
			{Label: "P99 TTFT from schedule (ms):", Value: val(a.TTFT.P99)},
		}
	}
	anchored = append(anchored, []report.Row{
		{Label: "Mean E2E from schedule (ms):", Value: val(a.E2E.Mean)},
		{Label: "Median E2E from schedule (ms):", Value: val(a.E2E.Median)},
		{Label: "P99 E2E from schedule (ms):", Value: val(a.E2E.P99)},
		{Label: "Mean send lag (ms):", Value: val(a.Lag.Mean)},
		{Label: "P99 send lag (ms):", Value: val(a.Lag.P99)},
	}...)
	check := []report.Row{
		{Label: "Target request rate (req/s):", Value: f(r.target)},
		{Label: "Planned request rate (req/s):", Value: f(r.planned)},
		{Label: "Achieved send rate (req/s):", Value: f(r.achieved)},
		{Label: "Max requests in flight:", Value: fmt.Sprint(r.maxInflight)},
		{Label: "Dispatch lag p99 (ms):", Value: f(r.lagP99 * 1000)},
		{Label: "Dispatch lag max (ms):", Value: f(r.lagMax * 1000)},
		{Label: "Send delay p99 (ms):", Value: f(ms(r.sendP99))},
		{Label: "Read delay p99 (ms):", Value: f(ms(r.readDelay.Quantile(0.99)))},
		{Label: "Read delay max (ms):", Value: f(ms(r.readDelay.Max()))},
		{Label: "Bunched chunks (%):", Value: f(pct(r.bunched, r.chunks))},
		{Label: "Bunched by late reads (%):", Value: f(pct(r.lateBunch, r.chunks))},
		{Label: "Client CPU time (s):", Value: f(r.cpu.Seconds())},
		{Label: "Client CPU per output token (us):", Value: f(r.cpuPerToken)},
		{Label: "GC pause total (ms):", Value: f(float64(r.gcPause) / 1e6)},
		{Label: "Kernel-timed responses (%):", Value: f(r.kernelTimed)},
	}
	if !embedding {
		check = append(check, report.Row{Label: "Output token counts from:", Value: r.sourcesText()})
	}
	check = append(check, report.Row{Label: "Client verdict:", Value: r.verdict})
	const t1, t2 = "Schedule-anchored latency", "Client self-check"
	return map[string][]report.Row{t1: anchored, t2: check}, []string{t1, t2}
}

// extra is the same figures as JSONL keys, written after the reference's.
func (r checkResult) extra(failed int) *pyjson.Object {
	o := &pyjson.Object{}
	// Closed loop: null, as there is no schedule to measure from.
	stats := func(prefix string, s metrics.Stats) {
		vals := []float64{s.Mean, s.Median, s.Std, s.P90, s.P95, s.P99}
		for i, k := range []string{"mean", "median", "std", "p90", "p95", "p99"} {
			if r.anchored == nil {
				o.Set(k+"_"+prefix+"_ms", pyjson.Null)
			} else {
				o.Set(k+"_"+prefix+"_ms", pyjson.Float(vals[i]))
			}
		}
	}
	var a metrics.Anchored
	if r.anchored != nil {
		a = *r.anchored
	}
	stats("ttft_from_schedule", a.TTFT)
	stats("e2e_latency_from_schedule", a.E2E)
	stats("send_lag", a.Lag)
	o.Set("failed", pyjson.Int(failed))
	o.Set("planned_request_rate", pyjson.Float(r.planned))
	o.Set("achieved_request_rate", pyjson.Float(r.achieved))
	o.Set("max_inflight_requests", pyjson.Int(r.maxInflight))
	o.Set("dispatch_lag_p99_ms", pyjson.Float(r.lagP99*1000))
	o.Set("dispatch_lag_max_ms", pyjson.Float(r.lagMax*1000))
	o.Set("send_delay_p50_ms", pyjson.Float(ms(r.sendP50)))
	o.Set("send_delay_p99_ms", pyjson.Float(ms(r.sendP99)))
	o.Set("send_delay_max_ms", pyjson.Float(ms(r.sendMax)))
	o.Set("read_delay_p50_ms", pyjson.Float(ms(r.readDelay.Quantile(0.5))))
	o.Set("read_delay_p99_ms", pyjson.Float(ms(r.readDelay.Quantile(0.99))))
	o.Set("read_delay_max_ms", pyjson.Float(ms(r.readDelay.Max())))
	o.Set("bunched_chunks_pct", pyjson.Float(pct(r.bunched, r.chunks)))
	o.Set("late_bunched_chunks_pct", pyjson.Float(pct(r.lateBunch, r.chunks)))
	o.Set("client_cpu_s", pyjson.Float(r.cpu.Seconds()))
	o.Set("client_cpu_us_per_output_token", pyjson.Float(r.cpuPerToken))
	o.Set("client_gc_pause_ms", pyjson.Float(float64(r.gcPause)/1e6))
	o.Set("kernel_timed_pct", pyjson.Float(r.kernelTimed))
	src := &pyjson.Object{}
	for _, s := range []record.OutputSource{record.OutputServer, record.OutputRetokenized, record.OutputRequested} {
		src.Set(s.String(), pyjson.Int(r.sources[s]))
	}
	o.Set("output_tokens_source", src.Bytes())
	o.Set("client_verdict", pyjson.String(r.verdict))
	return o
}
