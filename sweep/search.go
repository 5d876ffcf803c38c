package sweep

import (
	"context"
	"fmt"
	"math"
	"strings"

	"benchserve/bench"
	"benchserve/internal/py/pyjson"
	"benchserve/report"
)

// auto is --sweep-profile auto: the latency floor (one request at a time),
// the throughput ceiling (everything at once, under the user's cap if
// any), then Points rates evenly spaced between their request rates.
// Linear spacing, as GuideLLM's sweep: latency changes fastest near the
// ceiling, where geometric spacing would leave the fewest points.
func (r *runner) auto(ctx context.Context) error {
	base := r.basePoint()
	floor, ceil := base, base
	floor.Rate, floor.Conc, floor.Phase = math.Inf(1), 1, "floor"
	ceil.Rate, ceil.Phase = math.Inf(1), "ceiling"
	lo, err := r.meanRate(ctx, floor)
	if err != nil {
		return err
	}
	hi, err := r.meanRate(ctx, ceil)
	if err != nil {
		return err
	}
	if !(hi > lo) {
		r.table.line("The throughput ceiling (%s req/s) is not above the floor (%s req/s): no rates between them to run.", report.F(hi), report.F(lo))
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
		return 0, &bench.ExitError{Code: bench.ExitFailure, Msg: fmt.Sprintf("the %s run failed: no rate to sweep from", pt.Phase)}
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
	if pass {
		o.lo = x0
		for x := s.up(x0); math.IsNaN(o.hi); x = s.up(x) {
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
	} else {
		o.hi = x0
		for x := s.down(x0); math.IsNaN(o.lo) && x > 0 && (s.rate || x >= 1); x = s.down(x) {
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
		if math.IsNaN(o.lo) {
			return o, nil
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
		ceil := base
		ceil.Rate, ceil.Phase = math.Inf(1), "ceiling"
		res, ok, err := r.run(ctx, ceil, 1)
		if err != nil {
			return err
		}
		if !ok || res == nil {
			return &bench.ExitError{Code: bench.ExitFailure, Msg: "the ceiling run failed: no rate to start the search from"}
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

// finish writes the search's last line and prints its answer; a search
// where no load met the SLOs exits 4.
func (s *searcher) finish(r *runner, o outcome) error {
	axis, unit := "max_concurrency", ""
	if s.rate {
		axis, unit = "request_rate", " req/s"
	}
	num := func(v float64) []byte {
		if math.IsNaN(v) {
			return pyjson.Null
		}
		return pyjson.Float(v)
	}
	j := &pyjson.Object{}
	j.Set("search_axis", pyjson.String(axis))
	var exprs []string
	for _, t := range r.cfg.SLOs {
		exprs = append(exprs, t.Expr)
	}
	j.Set("search_slo", pyjson.Strings(exprs))
	j.Set("search_result", num(o.lo))
	j.Set("search_low", num(o.lo))
	j.Set("search_high", num(o.hi))
	j.Set("search_confirmed", pyjson.Bool(o.confirmed))
	j.Set("search_low_passed", pyjson.Int(o.nLo))
	j.Set("search_high_passed", pyjson.Int(o.nHi))
	j.Set("search_low_runs", pyjson.Int(o.kLo))
	j.Set("search_high_runs", pyjson.Int(o.kHi))
	j.Set("search_confirm_runs", pyjson.Int(s.n))
	j.Set("search_tolerance", pyjson.Float(s.tol))
	j.Set("search_max_runs", pyjson.Int(s.maxRuns))
	if o.cut != "" {
		j.Set("search_budget_ended", pyjson.String(o.cut))
	} else {
		j.Set("search_budget_ended", pyjson.Null)
	}
	runs := []byte{'['}
	for i, t := range s.tries {
		if i > 0 {
			runs = append(runs, ", "...)
		}
		e := &pyjson.Object{}
		e.Set(axis, pyjson.Float(t.x))
		e.Set("phase", pyjson.String(t.phase))
		e.Set("passed", pyjson.Bool(t.pass))
		runs = e.Append(runs)
	}
	j.Set("search_runs", append(runs, ']'))
	if r.out != "" {
		if err := report.Append(r.out, append(j.Bytes(), '\n')); err != nil {
			return &bench.ExitError{Code: bench.ExitFailure, Msg: "--output-file: " + err.Error()}
		}
	}
	r.table.line("%s", s.answer(o, strings.Join(exprs, ", "), unit))
	switch {
	case math.IsNaN(o.lo) && math.IsNaN(o.hi):
		return &bench.ExitError{Code: bench.ExitFailure, Msg: fmt.Sprintf("the run budget of %d (--search-max-runs) ended before the search's first run", s.maxRuns)}
	case math.IsNaN(o.lo):
		return &bench.ExitError{Code: bench.ExitThresholds, Msg: fmt.Sprintf("no load met %s (lowest tried: %s%s)", strings.Join(exprs, ", "), trim(o.hi), unit)}
	}
	return nil
}

// answer is the search's answer in words: what it found and, when it is
// not confirmed, why, with the counts of the runs made at each end.
func (s *searcher) answer(o outcome, slo, unit string) string {
	f := func(v float64) string { return trim(v) + unit }
	axis := "max concurrency"
	if s.rate {
		axis = "request rate"
	}
	ended := fmt.Sprintf("the run budget of %d ended", s.maxRuns)
	raise := "raise --search-max-runs"
	counts := fmt.Sprintf("met in %d of %d runs at %s, ", o.nLo, o.kLo, f(o.lo))
	if o.kHi == 0 {
		counts += "not run at " + f(o.hi)
	} else {
		counts += fmt.Sprintf("in %d of %d at %s", o.nHi, o.kHi, f(o.hi))
	}
	about := fmt.Sprintf("Highest %s meeting %s: about %s, between %s and %s, not confirmed", axis, slo, f(o.lo), f(o.lo), f(o.hi))
	switch {
	case math.IsNaN(o.lo) && math.IsNaN(o.hi):
		return fmt.Sprintf("No search run: %s before the first (the ceiling run used it); %s.", ended, raise)
	case math.IsNaN(o.lo) && o.cut != "":
		return fmt.Sprintf("No load met %s: the lowest tried, %s, failed, and %s before a lower one was tried; %s.", slo, f(o.hi), ended, raise)
	case math.IsNaN(o.lo):
		return fmt.Sprintf("No load met %s: the lowest tried, %s, failed.", slo, f(o.hi))
	case math.IsNaN(o.hi) && o.cut != "":
		return fmt.Sprintf("Every load tried met %s, up to %s: %s before a load failed them; %s.", slo, f(o.lo), ended, raise)
	case math.IsNaN(o.hi):
		return fmt.Sprintf("Every load tried met %s, up to %s: the server's limit is higher (or the SLO looser) than the search reached.", slo, f(o.lo))
	case o.confirmed:
		return fmt.Sprintf("Highest %s meeting %s: %s (between %s and %s: %s).", axis, slo, f(o.lo), f(o.lo), f(o.hi), counts)
	case o.cut == "bisecting":
		return fmt.Sprintf("%s: %s while bisecting, with the bracket still wider than the tolerance (%s), before the confirmation runs; %s.", about, ended, trim(s.tol), raise)
	case o.cut == "confirming" && o.rounds == 0:
		return fmt.Sprintf("%s: %s before the confirmation runs; %s.", about, ended, raise)
	case o.cut == "confirming" && o.kLo == s.n && o.kHi == s.n:
		return fmt.Sprintf("%s (%s): %s before the next confirmation round; %s.", about, counts, ended, raise)
	case o.cut == "confirming":
		return fmt.Sprintf("%s: %s during the confirmation runs (%s); %s.", about, ended, counts, raise)
	}
	return fmt.Sprintf("%s (%s: the boundary is noisy; try --duration or more --repeats).", about, counts)
}

func trim(v float64) string { return fmt.Sprintf("%.4g", v) }
