package bench

import (
	"benchserve/internal/cputime"
	"runtime"
	"time"

	"benchserve/internal/hist"
	"benchserve/metrics"
)

// selfCheck measures the client while it runs, so that every result says
// whether the client itself may have distorted it (metrics.Check judges):
// CPU time, GC pauses and how late the pacer released each request.
type selfCheck struct {
	withSim bool
	cpu0    time.Duration
	gc0     uint64
	// lags are release − intended send time, per dispatched request, in
	// seconds: the pacer's own error, before any wait for a concurrency slot.
	lags []float64
	// sketch replaces lags in a soak.
	sketch *metrics.Dist
}

// startSelfCheck starts measuring a run of n requests; withSim: the
// simulator runs in this process (--sim).
func startSelfCheck(n int, withSim, soak bool) *selfCheck {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	c := &selfCheck{withSim: withSim, cpu0: cputime.Self(), gc0: ms.PauseTotalNs}
	if soak {
		c.sketch = metrics.NewDist()
	} else {
		c.lags = make([]float64, 0, n)
	}
	return c
}

// lag records one request's pacer lag; a nil check (a warmup) keeps none.
func (c *selfCheck) lag(v float64) {
	switch {
	case c == nil:
	case c.sketch != nil:
		c.sketch.Add(v)
	default:
		c.lags = append(c.lags, v)
	}
}

// stop ends the measurement when the last response is in (what the client
// spends afterwards, on metrics and the report, is not the run's), with
// the read delays the client gathered.
func (c *selfCheck) stop(readDelay hist.H) metrics.ClientStats {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return metrics.ClientStats{
		CPU: cputime.Self() - c.cpu0, GCPause: time.Duration(ms.PauseTotalNs - c.gc0),
		Lags: c.lags, LagSketch: c.sketch, ReadDelay: readDelay, Cores: runtime.GOMAXPROCS(0), WithSim: c.withSim,
	}
}
