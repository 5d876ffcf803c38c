// Package sweep runs the main benchmark at many loads from one command:
// a grid of rates, concurrencies and lengths, a profile that finds its own
// range, or a search for the highest load that meets an SLO. It sits
// beside package bench and uses its stages: a plan is prepared once per
// dataset and re-scheduled for each point (bench.Plan.At).
package sweep

import (
	"fmt"
	"time"

	"benchserve/bench"
	"benchserve/report"
)

// Config is a sweep: the main command's flags (Base), the lists some of
// them took, and the sweep's own flags.
type Config struct {
	Base *bench.Config
	// Rates, Concurrencies, InputLens and OutputLens are the lists given
	// to --request-rate, --max-concurrency, --random-input-len and
	// --random-output-len (nil: Base's one value). A concurrency of 0 is
	// no cap, as in the main command.
	Rates         []float64
	Concurrencies []int
	InputLens     []int
	OutputLens    []int
	// Zip pairs the lists (all of one length) instead of crossing them.
	Zip bool
	// Pause is how long the server rests between points.
	Pause time.Duration
	// Profile "auto": a latency floor (concurrency 1), a throughput
	// ceiling (everything at once), then Points rates between them.
	Profile string
	Points  int
	// Search ("request-rate" or "max-concurrency") looks for the highest
	// load at which every SLO holds, to within Tolerance (a fraction),
	// in at most MaxRuns runs.
	Search    string
	SLOs      []report.Threshold
	Tolerance float64
	MaxRuns   int
	// Repeats runs each point this many times; RepeatUntilCV (> 0) stops
	// a point's repeats early once the coefficient of variation of its
	// throughputs and median latencies is at most this (after 3 runs).
	Repeats       int
	RepeatUntilCV float64
}

// Point is one load of a sweep.
type Point struct {
	Rate      float64 // +Inf: no rate
	Conc      int     // 0: no cap
	InputLen  int
	OutputLen int
	// Phase says why it runs: grid, floor, ceiling, profile, search,
	// confirm.
	Phase string
}

// Load is the point as bench sees it.
func (p Point) Load(warmup bool) bench.Load {
	l := bench.Load{Rate: p.Rate, Warmup: warmup}
	if p.Conc > 0 {
		c := p.Conc
		l.MaxConcurrency = &c
	}
	return l
}

// Grid is the points of the lists: their Cartesian product, lengths
// outermost and the rate innermost, or with zip the i-th of each.
func (c *Config) Grid() ([]Point, error) {
	b := c.Base
	rates := c.Rates
	if rates == nil {
		rates = []float64{b.RequestRate}
	}
	concs := c.Concurrencies
	if concs == nil {
		concs = []int{0}
		if b.MaxConcurrency != nil {
			concs = []int{*b.MaxConcurrency}
		}
	}
	ins, outs := c.InputLens, c.OutputLens
	if ins == nil {
		ins = []int{b.RandomInputLen}
	}
	if outs == nil {
		outs = []int{b.RandomOutputLen}
	}
	var pts []Point
	if c.Zip {
		n := 1
		for _, l := range []int{len(c.Rates), len(c.Concurrencies), len(c.InputLens), len(c.OutputLens)} {
			if l > 1 && n > 1 && l != n {
				return nil, fmt.Errorf("--zip: the lists have different lengths (%d and %d)", n, l)
			}
			n = max(n, l)
		}
		at := func(i, n int) int { return min(i, n-1) }
		for i := range n {
			pts = append(pts, Point{Rate: rates[at(i, len(rates))], Conc: concs[at(i, len(concs))],
				InputLen: ins[at(i, len(ins))], OutputLen: outs[at(i, len(outs))], Phase: "grid"})
		}
		return pts, nil
	}
	for _, in := range ins {
		for _, out := range outs {
			for _, cc := range concs {
				for _, r := range rates {
					pts = append(pts, Point{Rate: r, Conc: cc, InputLen: in, OutputLen: out, Phase: "grid"})
				}
			}
		}
	}
	return pts, nil
}
