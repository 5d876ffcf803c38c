package sweep

import (
	"context"
	"fmt"
	"math"

	"benchserve/internal/exit"
	"benchserve/report"
)

// auto is --sweep-profile auto: the latency floor (one request at a time),
// the throughput ceiling (everything at once, under the user's cap if
// any), then Points rates evenly spaced between their request rates.
// Linear spacing, as GuideLLM's sweep: latency changes fastest near the
// ceiling, where geometric spacing would leave the fewest points.
func (r *runner) auto(ctx context.Context) error {
	base := r.basePoint()
	floor := base
	floor.Rate, floor.Conc, floor.Phase = math.Inf(1), 1, "floor"
	lo, err := r.meanRate(ctx, floor)
	if err != nil {
		return err
	}
	ceil, err := r.ceiling(ctx, base)
	if err != nil {
		return err
	}
	hi, err := r.meanRate(ctx, ceil)
	if err != nil {
		return err
	}
	if !(hi > lo) {
		r.table.NoRatesBetween(lo, hi)
		return nil
	}
	n := max(1, r.cfg.Points)
	for k := 1; k <= n; k++ {
		pt := base
		pt.Rate, pt.Phase = lo+(hi-lo)*float64(k)/float64(n+1), "profile"
		if _, err := r.point(ctx, pt); err != nil {
			return err
		}
	}
	return nil
}

// meanRate runs pt and returns its mean request throughput.
func (r *runner) meanRate(ctx context.Context, pt Point) (float64, error) {
	results, err := r.point(ctx, pt)
	if err != nil {
		return 0, err
	}
	if len(results) == 0 {
		return 0, &exit.Error{Code: exit.Failure, Msg: fmt.Sprintf("the %s run failed: no rate to sweep from", pt.Phase)}
	}
	sum := 0.0
	for _, res := range results {
		sum += res.Summary.RequestThroughput
	}
	return sum / float64(len(results)), nil
}

// basePoint is the point of the base flags (the first of each list).
func (r *runner) basePoint() Point {
	c, b := r.cfg, r.cfg.Base
	pt := Point{Rate: b.RequestRate, InputLen: b.RandomInputLen, OutputLen: b.RandomOutputLen}
	if b.MaxConcurrency != nil {
		pt.Conc = *b.MaxConcurrency
	}
	if len(c.Rates) > 0 {
		pt.Rate = c.Rates[0]
	}
	if len(c.Concurrencies) > 0 {
		pt.Conc = c.Concurrencies[0]
	}
	return pt
}

// try is one search run.
type try struct {
	x     float64
	phase string
	pass  bool
}

// probe runs the load x once (repeat k of its phase): res is its result
// (nil when the run broke), pass whether it met every SLO; an error
// stops the search.
type probe func(ctx context.Context, x float64, phase string, k int) (res *report.Result, pass bool, err error)

// searcher finds the highest load at which every SLO holds, in at most
// maxRuns runs in all: made counts the runs made so far (a ceiling run's
// included), every phase stops where the budget ends.
type searcher struct {
	rate    bool // the axis: request rate, else max concurrency
	tol     float64
	maxRuns int
	n       int // confirming runs at each end of the bracket
	run     probe
	made    func() int
	// spread, if set, reports a confirmed load's repeats.
	spread func(x float64, results []*report.Result) error
	tries  []try
}

// outcome is where a search ended. lo is NaN when no load met the SLOs,
// hi when none failed them. The counts are of the last confirmation
// round, the one run at lo and hi: nLo of kLo runs at lo met the SLOs,
// nHi of kHi at hi.
type outcome struct {
	lo, hi             float64
	nLo, kLo, nHi, kHi int
	rounds             int
	confirmed          bool
	// cut is the phase the run budget ended in ("bracketing",
	// "bisecting", "confirming"), "" when it did not end the search.
	cut string
}

func (s *searcher) budget() bool { return s.made() < s.maxRuns }

// eval runs the load x once and reports whether every SLO held.
func (s *searcher) eval(ctx context.Context, x float64) (bool, error) {
	_, pass, err := s.run(ctx, x, "search", 1)
	s.tries = append(s.tries, try{x, "search", pass})
	return pass, err
}

// confirm runs x up to n times, as the budget allows: passes of made.
func (s *searcher) confirm(ctx context.Context, x float64) (passes, made int, err error) {
	var results []*report.Result
	for k := 1; k <= s.n && s.budget(); k++ {
		res, pass, err := s.run(ctx, x, "confirm", k)
		made++
		if pass {
			passes++
		}
		if res != nil {
			results = append(results, res)
		}
		s.tries = append(s.tries, try{x, "confirm", pass})
		if err != nil {
			return passes, made, err
		}
	}
	if s.spread != nil && len(results) > 1 {
		return passes, made, s.spread(x, results)
	}
	return passes, made, nil
}

func (s *searcher) up(x float64) float64 { return x * 2 }

func (s *searcher) down(x float64) float64 {
	if s.rate {
		return x / 2
	}
	return math.Floor(x / 2)
}

// narrow reports whether lo and hi are close enough: within the
// tolerance, or neighbouring concurrencies.
func (s *searcher) narrow(lo, hi float64) bool {
	return hi <= lo*(1+s.tol) || (!s.rate && hi-lo <= 1)
}

// find brackets the boundary by doubling or halving from x0, bisects
// measured runs until the bracket is within the tolerance, then runs
// the low end and the high end again (n times each): the answer stands
// when the low end met the SLOs in every run and the high end failed
// them in most; otherwise the bracket steps down (or up) by the
// tolerance and is checked again, at most three rounds in all. A step is
// taken only when a run is left for it, so the counts in the outcome are
// always those of its own lo and hi.
func (s *searcher) find(ctx context.Context, x0 float64) (outcome, error) {
	o := outcome{lo: math.NaN(), hi: math.NaN()}
	if !s.budget() {
		o.cut = "bracketing"
		return o, nil
	}
	pass, err := s.eval(ctx, x0)
	if err != nil {
		return o, err
	}
	// Double from a pass until a load fails, or halve from a failure
	// until one passes (down to a rate above 0 or a concurrency of 1).
	step := s.up
	if pass {
		o.lo = x0
	} else {
		o.hi, step = x0, s.down
	}
	for x := step(x0); math.IsNaN(o.lo) || math.IsNaN(o.hi); x = step(x) {
		if !(x > 0) || (!s.rate && x < 1) {
			return o, nil
		}
		if !s.budget() {
			o.cut = "bracketing"
			return o, nil
		}
		if pass, err = s.eval(ctx, x); err != nil {
			return o, err
		}
		if pass {
			o.lo = x
		} else {
			o.hi = x
		}
	}
	for !s.narrow(o.lo, o.hi) {
		if !s.budget() {
			o.cut = "bisecting"
			return o, nil
		}
		mid := (o.lo + o.hi) / 2
		if !s.rate {
			mid = math.Floor(mid)
		}
		if pass, err = s.eval(ctx, mid); err != nil {
			return o, err
		}
		if pass {
			o.lo = mid
		} else {
			o.hi = mid
		}
	}
	for o.rounds < 3 {
		if !s.budget() {
			o.cut = "confirming"
			return o, nil
		}
		o.rounds++
		if o.nLo, o.kLo, err = s.confirm(ctx, o.lo); err != nil {
			return o, err
		}
		if o.nHi, o.kHi, err = s.confirm(ctx, o.hi); err != nil {
			return o, err
		}
		if o.nLo == s.n && 2*(o.kHi-o.nHi) > s.n {
			o.confirmed = true
			return o, nil
		}
		if o.kLo < s.n || o.kHi < s.n || (o.rounds < 3 && !s.budget()) {
			o.cut = "confirming"
			return o, nil
		}
		if o.rounds == 3 {
			return o, nil
		}
		lo, hi := o.hi, o.hi*(1+s.tol) // the high end mostly passes: step up
		if !s.rate {
			hi = lo + 1
		}
		if o.nLo < s.n { // the low end is not reliably good: step down
			lo, hi = o.lo/(1+s.tol), o.lo
			if !s.rate {
				lo = hi - 1
			}
			if !(lo > 0) || (!s.rate && lo < 1) {
				return o, nil
			}
		}
		o.lo, o.hi = lo, hi
		o.nLo, o.kLo, o.nHi, o.kHi = 0, 0, 0, 0
	}
	return o, nil
}

// search is --search: the start, then find, then the answer.
func (r *runner) search(ctx context.Context) error {
	c := r.cfg
	base := r.basePoint()
	s := &searcher{rate: c.Search == "request-rate", tol: c.Tolerance, maxRuns: c.MaxRuns, n: max(3, c.Repeats),
		made: func() int { return r.runs }}
	at := func(x float64, phase string) Point {
		pt := base
		pt.Phase = phase
		if s.rate {
			pt.Rate = x
		} else {
			pt.Conc = int(x)
		}
		return pt
	}
	s.run = func(ctx context.Context, x float64, phase string, k int) (*report.Result, bool, error) {
		res, ok, err := r.run(ctx, at(x, phase), k)
		if !ok || res == nil {
			return nil, false, err
		}
		return res, *r.passed(res), err
	}
	s.spread = func(x float64, results []*report.Result) error {
		return r.writeSpread(at(x, "confirm"), results)
	}
	x0 := 1.0
	switch {
	case s.rate && len(c.Rates) > 0 && !math.IsInf(c.Rates[0], 1):
		x0 = c.Rates[0]
	case s.rate:
		// One ceiling run (it counts against the budget): the search
		// starts at half its throughput.
		ceil, err := r.ceiling(ctx, base)
		if err != nil {
			return err
		}
		res, ok, err := r.run(ctx, ceil, 1)
		if err != nil {
			return err
		}
		if !ok || res == nil {
			return &exit.Error{Code: exit.Failure, Msg: "the ceiling run failed: no rate to start the search from"}
		}
		x0 = res.Summary.RequestThroughput / 2
	case len(c.Concurrencies) > 0 && c.Concurrencies[0] > 0:
		x0 = float64(c.Concurrencies[0])
	}
	o, err := s.find(ctx, x0)
	if err != nil {
		return err
	}
	return s.finish(r, o)
}
