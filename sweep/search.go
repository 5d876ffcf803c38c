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

// searcher finds the highest load at which every SLO holds.
type searcher struct {
	r     *runner
	rate  bool // the axis: request rate, else max concurrency
	base  Point
	tries []try
}

func (s *searcher) point(x float64, phase string) Point {
	pt := s.base
	pt.Phase = phase
	if s.rate {
		pt.Rate = x
	} else {
		pt.Conc = int(x)
	}
	return pt
}

// eval runs the load x once and reports whether every SLO held.
func (s *searcher) eval(ctx context.Context, x float64, phase string) (bool, error) {
	res, ok, err := s.r.run(ctx, s.point(x, phase), 1)
	pass := ok && res != nil && *s.r.passed(res)
	s.tries = append(s.tries, try{x, phase, pass})
	return pass, err
}

// confirm runs x n times and counts the runs that met every SLO.
func (s *searcher) confirm(ctx context.Context, x float64, n int) (int, error) {
	pt := s.point(x, "confirm")
	var results []*report.Result
	passes := 0
	for k := 1; k <= n; k++ {
		res, ok, err := s.r.run(ctx, pt, k)
		pass := ok && res != nil && *s.r.passed(res)
		if pass {
			passes++
		}
		if ok {
			results = append(results, res)
		}
		s.tries = append(s.tries, try{x, "confirm", pass})
		if err != nil {
			return passes, err
		}
	}
	if len(results) > 1 {
		return passes, s.r.writeSpread(pt, results)
	}
	return passes, nil
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
	return hi <= lo*(1+s.r.cfg.Tolerance) || (!s.rate && hi-lo <= 1)
}

func (s *searcher) budget() bool { return s.r.runs < s.r.cfg.MaxRuns }

// search is --search: bracket the boundary by doubling or halving from a
// start, bisect measured runs until the bracket is within the tolerance,
// then run the low end and the high end again (at least 3 times each):
// the answer stands when the low end met the SLOs in every run and the
// high end failed them in most; otherwise the bracket steps down (or up)
// by the tolerance and is checked again, at most three times.
func (r *runner) search(ctx context.Context) error {
	c := r.cfg
	s := &searcher{r: r, rate: c.Search == "request-rate", base: r.basePoint()}
	x0 := 1.0
	switch {
	case s.rate && len(c.Rates) > 0 && !math.IsInf(c.Rates[0], 1):
		x0 = c.Rates[0]
	case s.rate:
		ceil, err := r.ceiling(ctx, s.base)
		if err != nil {
			return err
		}
		top, err := r.meanRate(ctx, ceil)
		if err != nil {
			return err
		}
		x0 = top / 2
	case len(c.Concurrencies) > 0 && c.Concurrencies[0] > 0:
		x0 = float64(c.Concurrencies[0])
	}
	lo, hi := math.NaN(), math.NaN()
	pass, err := s.eval(ctx, x0, "search")
	if err != nil {
		return err
	}
	if pass {
		lo = x0
		for x := s.up(x0); s.budget(); x = s.up(x) {
			if pass, err = s.eval(ctx, x, "search"); err != nil {
				return err
			}
			if !pass {
				hi = x
				break
			}
			lo = x
		}
	} else {
		hi = x0
		for x := s.down(x0); x > 0 && (s.rate || x >= 1) && s.budget(); x = s.down(x) {
			if pass, err = s.eval(ctx, x, "search"); err != nil {
				return err
			}
			if pass {
				lo = x
				break
			}
			hi = x
		}
	}
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return s.finish(lo, hi, 0, 0, 0, false)
	}
	for !s.narrow(lo, hi) && s.budget() {
		mid := (lo + hi) / 2
		if !s.rate {
			mid = math.Floor(mid)
		}
		if pass, err = s.eval(ctx, mid, "search"); err != nil {
			return err
		}
		if pass {
			lo = mid
		} else {
			hi = mid
		}
	}
	n := max(3, c.Repeats)
	var nLo, nHi int
	confirmed := false
	for round := 0; round < 3 && s.budget(); round++ {
		if nLo, err = s.confirm(ctx, lo, n); err != nil {
			return err
		}
		if nHi, err = s.confirm(ctx, hi, n); err != nil {
			return err
		}
		if nLo == n && 2*nHi < n {
			confirmed = true
			break
		}
		step := c.Tolerance
		if nLo < n { // the low end is not reliably good: step down
			hi, lo = lo, lo/(1+step)
			if !s.rate {
				lo = math.Max(1, hi-1)
			}
			if lo >= hi {
				break
			}
			continue
		}
		lo, hi = hi, hi*(1+step) // the high end mostly passes: step up
		if !s.rate {
			hi = lo + 1
		}
	}
	return s.finish(lo, hi, nLo, nHi, n, confirmed)
}

// finish writes the search's last line and prints its answer; a search
// where no load met the SLOs exits 4.
func (s *searcher) finish(lo, hi float64, nLo, nHi, n int, confirmed bool) error {
	r := s.r
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
	o := &pyjson.Object{}
	o.Set("search_axis", pyjson.String(axis))
	var exprs []string
	for _, t := range r.cfg.SLOs {
		exprs = append(exprs, t.Expr)
	}
	o.Set("search_slo", pyjson.Strings(exprs))
	o.Set("search_result", num(lo))
	o.Set("search_low", num(lo))
	o.Set("search_high", num(hi))
	o.Set("search_confirmed", pyjson.Bool(confirmed))
	o.Set("search_low_passed", pyjson.Int(nLo))
	o.Set("search_high_passed", pyjson.Int(nHi))
	o.Set("search_confirm_runs", pyjson.Int(n))
	o.Set("search_tolerance", pyjson.Float(r.cfg.Tolerance))
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
	o.Set("search_runs", append(runs, ']'))
	if r.out != "" {
		if err := report.Append(r.out, append(o.Bytes(), '\n')); err != nil {
			return &bench.ExitError{Code: bench.ExitFailure, Msg: "--output-file: " + err.Error()}
		}
	}
	slo := strings.Join(exprs, ", ")
	f := func(v float64) string { return trim(v) + unit }
	switch {
	case math.IsNaN(lo):
		r.table.line("No load met %s: the lowest tried, %s, failed.", slo, f(hi))
		return &bench.ExitError{Code: bench.ExitThresholds, Msg: fmt.Sprintf("no load met %s (lowest tried: %s)", slo, f(hi))}
	case math.IsNaN(hi):
		r.table.line("Every load tried met %s, up to %s: the server's limit is higher (or the SLO looser) than the search reached.", slo, f(lo))
	case confirmed:
		r.table.line("Highest %s meeting %s: %s (between %s and %s: met in %d of %d runs at %s, in %d of %d at %s).",
			strings.ReplaceAll(axis, "_", " "), slo, f(lo), f(lo), f(hi), nLo, n, f(lo), nHi, n, f(hi))
	default:
		r.table.line("Highest %s meeting %s: about %s, between %s and %s, not confirmed (met in %d of %d runs at %s, in %d of %d at %s: the boundary is noisy; try --duration or more --repeats).",
			strings.ReplaceAll(axis, "_", " "), slo, f(lo), f(lo), f(hi), nLo, n, f(lo), nHi, n, f(hi))
	}
	return nil
}

func trim(v float64) string { return fmt.Sprintf("%.4g", v) }
