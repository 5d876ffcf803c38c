package sweep

import (
	"fmt"
	"math"
	"strings"

	"benchserve/bench"
	"benchserve/internal/py/pyjson"
	"benchserve/report"
)

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
