package metrics

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"benchserve/internal/hist"
	"benchserve/record"
)

// ClientStats is what the client measured of itself during a run.
type ClientStats struct {
	CPU     time.Duration // user + system, first request to last response
	GCPause time.Duration
	// Lags are release − intended send time, per dispatched request, in
	// seconds: the pacer's own error, before any wait for a concurrency slot.
	Lags []float64
	// LagSketch replaces Lags in a soak (--soak): the same lags in fixed
	// memory.
	LagSketch *Dist
	// ReadDelay holds, for every kernel-timed read of a response, how long
	// its newest bytes had waited in the socket.
	ReadDelay hist.H
	// Cores is the processors the client could use (GOMAXPROCS).
	Cores int
	// WithSim: the simulator ran in the client's process (--sim).
	WithSim bool
}

// Shape is what the self-check needs to know of the run's plan.
type Shape struct {
	Duration float64 // seconds
	Rate     float64 // --request-rate
	// Closed: no request has an intended send time of its own
	// (--request-rate inf without trace times).
	Closed bool
	// Slots is the number of requests the schedule planned, the last at
	// LastSlot seconds.
	Slots    int
	LastSlot float64
}

// SelfCheck is whether the client itself may have distorted a run.
type SelfCheck struct {
	// Target is --request-rate, Planned the rate of the drawn schedule (a
	// Poisson sample differs from its mean), Achieved the rate requests
	// actually left at; requests per second.
	Target, Planned, Achieved float64
	LagP99, LagMax            float64 // seconds
	CPU                       time.Duration
	CPUPerToken               float64 // microseconds
	GCPause                   time.Duration
	// Anchored is nil for a closed-loop run: there is no intended send
	// time to measure from.
	Anchored *Anchored
	// KernelTimed is the share of successful responses, in percent, whose
	// every read was timed with the kernel's receive time (0 if none
	// succeeded); OK counts them.
	KernelTimed float64
	OK          int
	// ReadDelay: see ClientStats. SendP50, SendP99 and SendMax are over
	// the records' send delays.
	ReadDelay                  hist.H
	SendP50, SendP99, SendMax  time.Duration
	Chunks, Bunched, LateBunch int64
	// MaxInflight is the most requests in flight at one instant.
	MaxInflight int
	// Sources counts the successful requests by where their output length
	// came from.
	Sources map[record.OutputSource]int
	Closed  bool
	WithSim bool
	// GapMedian is the median gap between chunks, set only when the
	// verdict needs it (chunks bunched by late reads).
	GapMedian time.Duration
	// Integrity counts the streams with each integrity problem; any
	// adds a warning to the verdict.
	Integrity StreamIntegrity
	Verdict   string
}

// medianGap is the median of every successful request's gaps, selected
// from the records (selectGaps) rather than gathered and sorted: a soak's
// 25 million gaps would take 200 MB as float64s.
func medianGap(recs []record.Record) time.Duration {
	n := 0
	for i := range recs {
		if recs[i].Success {
			n += recs[i].Gaps.Len()
		}
	}
	if n == 0 {
		return 0
	}
	ranks := []int{n / 2}
	if n%2 == 0 {
		ranks = []int{n/2 - 1, n / 2}
	}
	v := selectGaps(recs, n, ranks)
	return time.Duration(medianAt(n, func(k int) float64 { return v[k].Seconds() }) * 1e9)
}

// Limits of the verdict, from the error measured against the truth
// (docs/metrics.md, "Client verdict"). A run "may be distorted" only when
// the client could have moved a reported percentile, up to the P99 (1% of
// the values it is taken over), by more than tolerance. TTFT, ITL and E2E
// start at the request's actual write and end at the kernel's receive
// time of its bytes, so the client's CPU, its GC pauses and late reads
// do not enter them; what can:
//   - chunks bunched by late reads: each is timed late by up to one gap,
//     so more than 1% of them can move the ITL P99 by a gap;
//   - requests that left late (dispatch lag + send delay, runs with a
//     schedule): not in those latencies, but a late request can change
//     another's only through the server's queue, when another arrival
//     falls within its lateness; that reaches 1% of the requests only
//     when the 1% latest are late by more than the mean gap between
//     planned sends.
//
// Lateness above maxLateness (the pacer's measured p99 is 0.03–0.70 ms
// up to 1,000 req/s, docs/performance.md) is named in an "ok" verdict:
// the schedule-anchored latencies include it.
const (
	tolerance       = time.Millisecond
	maxLateness     = time.Millisecond
	maxLateBunchPct = 1.0
)

// Check computes the self-check over recs, the run's records in dispatch
// order (those sent and not cut, when it was interrupted).
func Check(recs []record.Record, c ClientStats, sh Shape, outputTokens int) SelfCheck {
	t := CheckTally{Sources: map[record.OutputSource]int{}}
	var sends []float64
	for i := range recs {
		t.Add(&recs[i])
		if recs[i].Sent && recs[i].SendDelay > 0 {
			sends = append(sends, recs[i].SendDelay)
		}
	}
	r := checkFrom(&t, c, sh, outputTokens)
	if !sh.Closed {
		a := FromSchedule(recs)
		r.Anchored = &a
	}
	if len(sends) > 0 {
		slices.Sort(sends)
		st := Describe(sends)
		ms := func(v float64) time.Duration { return time.Duration(v * 1e6) }
		r.SendP50, r.SendP99, r.SendMax = ms(st.Median), ms(st.P99), time.Duration(sends[len(sends)-1]*1e9)
	}
	r.MaxInflight = MaxInflight(recs)
	if r.LateBunchedPct() > maxLateBunchPct {
		r.GapMedian = medianGap(recs)
	}
	r.Verdict = verdict(r)
	return r
}

// CheckTally is the part of the self-check that sums over records.
type CheckTally struct {
	sent, ok, kernel           int
	first, last                float64
	Chunks, Bunched, LateBunch int64
	Sources                    map[record.OutputSource]int
	Integrity                  StreamIntegrity
}

// Add counts one record.
func (t *CheckTally) Add(rec *record.Record) {
	if !rec.Sent {
		return
	}
	if t.sent == 0 || rec.Start < t.first {
		t.first = rec.Start
	}
	t.last = max(t.last, rec.Start)
	t.sent++
	t.Chunks += int64(rec.Chunks)
	t.Bunched += int64(rec.Bunched)
	t.LateBunch += int64(rec.LateBunched)
	t.Integrity.Add(rec)
	if rec.Success {
		t.ok++
		t.Sources[rec.OutputSource]++
		if rec.KernelTimed {
			t.kernel++
		}
	}
}

// checkFrom is the self-check but for what needs every record: the
// schedule-anchored figures, the send delays, the peak in flight, the
// median gap and the verdict.
func checkFrom(t *CheckTally, c ClientStats, sh Shape, outputTokens int) SelfCheck {
	r := SelfCheck{
		Target:    sh.Rate,
		Planned:   math.Inf(1),
		CPU:       c.CPU,
		GCPause:   c.GCPause,
		Achieved:  math.Inf(1),
		WithSim:   c.WithSim,
		ReadDelay: c.ReadDelay,
		Sources:   map[record.OutputSource]int{},
		Closed:    sh.Closed,
	}
	// The planned rate is over the schedule's slots, not the records: a
	// conversation is one slot and many records, and an interrupted run
	// keeps only some records.
	if sh.Slots > 1 && sh.LastSlot > 0 {
		r.Planned = float64(sh.Slots-1) / sh.LastSlot
	}
	if c.Lags != nil {
		lags := slices.Clone(c.Lags)
		slices.Sort(lags)
		if n := len(lags); n > 0 {
			r.LagMax = lags[n-1]
			r.LagP99 = Describe(lags).P99 / 1000
		}
	} else if c.LagSketch != nil && c.LagSketch.Len() > 0 {
		r.LagMax, r.LagP99 = c.LagSketch.max, c.LagSketch.Quantile(0.99)
	}
	if t.sent > 1 && t.last > t.first {
		r.Achieved = float64(t.sent-1) / (t.last - t.first)
	}
	r.Chunks, r.Bunched, r.LateBunch, r.OK = t.Chunks, t.Bunched, t.LateBunch, t.ok
	r.Integrity = t.Integrity
	for k, v := range t.Sources {
		r.Sources[k] = v
	}
	if outputTokens > 0 {
		r.CPUPerToken = float64(r.CPU.Microseconds()) / float64(outputTokens)
	}
	if r.OK > 0 {
		r.KernelTimed = 100 * float64(t.kernel) / float64(r.OK)
	}
	return r
}

// BunchedPct and LateBunchedPct are the bunched chunks' shares, in percent.
func (r *SelfCheck) BunchedPct() float64     { return pct(r.Bunched, r.Chunks) }
func (r *SelfCheck) LateBunchedPct() float64 { return pct(r.LateBunch, r.Chunks) }

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

// Lateness is how late the 1% latest requests left the client: the
// pacer's dispatch lag p99 plus the send delay p99 (0 in a closed loop,
// where no request has a time to leave at).
func (r *SelfCheck) Lateness() time.Duration {
	if r.Closed {
		return 0
	}
	return time.Duration(r.LagP99*float64(time.Second)) + r.SendP99
}

// plannedGap is the mean gap between planned sends; ok is false without
// a schedule.
func (r *SelfCheck) plannedGap() (time.Duration, bool) {
	if r.Closed || !(r.Planned > 0) || math.IsInf(r.Planned, 1) {
		return 0, false
	}
	return time.Duration(float64(time.Second) / r.Planned), true
}

// verdict says what the client may have changed in the run's figures and
// by how much: "may be distorted: …" naming each figure that could move a
// reported latency past the tolerance, "not verified: …" when the
// kernel's receive times were missing, else "ok: …".
func verdict(r SelfCheck) string {
	return timingVerdict(r) + r.Integrity.warning()
}

// timingVerdict is the verdict on the client's timing alone.
func timingVerdict(r SelfCheck) string {
	var why []string
	late := r.Lateness()
	if p := r.LateBunchedPct(); p > maxLateBunchPct && r.GapMedian > tolerance {
		why = append(why, fmt.Sprintf("%.1f%% of chunks bunched by late reads (limit %.0f%%): each timed late by up to one gap (median %.2f ms), enough to move the ITL P99 and TTFTs by that much",
			p, maxLateBunchPct, ms(r.GapMedian)))
	}
	if gap, ok := r.plannedGap(); ok && late > tolerance && late > gap {
		why = append(why, fmt.Sprintf("1%% of requests left %.2f ms late or more (dispatch lag p99 %.2f ms + send delay p99 %.2f ms), longer than the %.2f ms between planned sends: the server saw a burstier load than planned, which can move latencies by up to %.2f ms",
			ms(late), r.LagP99*1000, ms(r.SendP99), ms(gap), ms(late)))
	}
	note := ""
	if r.WithSim {
		note = simNote
	}
	if len(why) > 0 {
		return "may be distorted: " + strings.Join(why, "; ") + note
	}
	lateNote := ""
	if late > maxLateness {
		lateNote = fmt.Sprintf("; 1%% of requests left %.2f ms late or more (dispatch lag p99 %.2f ms + send delay p99 %.2f ms): not in TTFT, ITL or E2E, which start at the actual send, but in the schedule-anchored latencies",
			ms(late), r.LagP99*1000, ms(r.SendP99))
	}
	if r.OK > 0 && r.KernelTimed < 100 {
		// Without the kernel's receive times, a late read adds to a latency unseen.
		return fmt.Sprintf("not verified: %.0f%% of responses were timed when read, not by the kernel, so a late read would add to their latencies unseen", 100-r.KernelTimed) + lateNote + note
	}
	return fmt.Sprintf("ok: timing held (%.1f%% of chunks bunched by late reads, read delay p99 %.2f ms)", r.LateBunchedPct(), ms(r.ReadDelay.Quantile(0.99))) + lateNote + note
}
