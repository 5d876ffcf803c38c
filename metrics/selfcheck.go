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
	Verdict string
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

// Check computes the self-check over recs, the run's records in dispatch
// order (those sent and not cut, when it was interrupted).
func Check(recs []record.Record, c ClientStats, sh Shape, outputTokens int) SelfCheck {
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
	if !sh.Closed {
		a := FromSchedule(recs)
		r.Anchored = &a
	}
	// The planned rate is over the schedule's slots, not the records: a
	// conversation is one slot and many records, and an interrupted run
	// keeps only some records.
	if sh.Slots > 1 && sh.LastSlot > 0 {
		r.Planned = float64(sh.Slots-1) / sh.LastSlot
	}
	lags := slices.Clone(c.Lags)
	slices.Sort(lags)
	if n := len(lags); n > 0 {
		r.LagMax = lags[n-1]
		r.LagP99 = Describe(lags).P99 / 1000
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
		r.Chunks += int64(rec.Chunks)
		r.Bunched += int64(rec.Bunched)
		r.LateBunch += int64(rec.LateBunched)
		if rec.Success {
			r.OK++
			r.Sources[rec.OutputSource]++
			if rec.KernelTimed {
				kernel++
			}
		}
	}
	if sent > 1 && last > first {
		r.Achieved = float64(sent-1) / (last - first)
	}
	if len(sends) > 0 {
		slices.Sort(sends)
		st := Describe(sends)
		ms := func(v float64) time.Duration { return time.Duration(v * 1e6) }
		r.SendP50, r.SendP99, r.SendMax = ms(st.Median), ms(st.P99), time.Duration(sends[len(sends)-1]*1e9)
	}
	r.MaxInflight = MaxInflight(recs)
	if outputTokens > 0 {
		r.CPUPerToken = float64(r.CPU.Microseconds()) / float64(outputTokens)
	}
	if r.OK > 0 {
		r.KernelTimed = 100 * float64(kernel) / float64(r.OK)
	}
	r.Verdict = verdict(r, sh.Duration, max(c.Cores, 1))
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

// verdict says whether the client kept up and its timing can be trusted,
// naming every figure past its limit.
func verdict(r SelfCheck, dur float64, cores int) string {
	var why []string
	if dur > 0 {
		if share := r.CPU.Seconds() / (dur * float64(cores)); share > maxCPUShare {
			why = append(why, fmt.Sprintf("client CPU at %.0f%% of %d cores", share*100, cores))
		}
		if share := r.GCPause.Seconds() / dur; share > maxGCShare {
			why = append(why, fmt.Sprintf("GC pauses %.1f%% of the run", share*100))
		}
	}
	if r.LagP99 > maxDispatchLag.Seconds() {
		why = append(why, fmt.Sprintf("dispatch lag p99 %.2f ms", r.LagP99*1000))
	}
	if p := r.ReadDelay.Quantile(0.99); p > maxReadDelay {
		why = append(why, fmt.Sprintf("read delay p99 %.2f ms (limit %.0f ms)", ms(p), ms(maxReadDelay)))
	}
	if r.SendP99 > maxSendDelay && !r.Closed {
		why = append(why, fmt.Sprintf("send delay p99 %.2f ms (limit %.0f ms)", ms(r.SendP99), ms(maxSendDelay)))
	}
	if p := r.LateBunchedPct(); p > maxLateBunchPct {
		why = append(why, fmt.Sprintf("%.1f%% of chunks bunched by late reads (limit %.0f%%)", p, maxLateBunchPct))
	}
	note := ""
	if r.WithSim {
		note = simNote
	}
	switch {
	case len(why) > 0:
		return "may be distorted: " + strings.Join(why, ", ") + note
	case r.OK > 0 && r.KernelTimed < 100:
		// Without the kernel's receive times, read delays cannot be seen.
		return fmt.Sprintf("the client had headroom, but timing is not verified: %.0f%% of responses were timed when read, not by the kernel", 100-r.KernelTimed) + note
	}
	return fmt.Sprintf("the client had headroom and its timing held (read delay p99 %.2f ms, %.1f%% of chunks bunched by late reads)", ms(r.ReadDelay.Quantile(0.99)), r.LateBunchedPct()) + note
}
