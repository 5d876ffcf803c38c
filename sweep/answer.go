package sweep

import (
	"fmt"
	"math"
	"strings"

	"benchserve/internal/exit"
	"benchserve/report"
)

// finish writes the search's last line and prints its answer; a search
// where no load met the SLOs exits 4.
func (s *searcher) finish(r *runner, o outcome) error {
	rep := s.report(r, o)
	if r.out != "" {
		if err := report.Append(r.out, rep.Line()); err != nil {
			return &exit.Error{Code: exit.Failure, Msg: "--output-file: " + err.Error()}
		}
	}
	r.table.Line(rep.Answer())
	switch {
	case math.IsNaN(o.lo) && math.IsNaN(o.hi):
		return &exit.Error{Code: exit.Failure, Msg: fmt.Sprintf("the run budget of %d (--search-max-runs) ended before the search's first run", s.maxRuns)}
	case math.IsNaN(o.lo):
		return &exit.Error{Code: exit.Thresholds, Msg: fmt.Sprintf("no load met %s (lowest tried: %s)", strings.Join(rep.SLOs, ", "), rep.Load(o.hi))}
	}
	return nil
}

// report is the search's outcome o for package report to write.
func (s *searcher) report(r *runner, o outcome) *report.Search {
	rep := &report.Search{Rate: s.rate, Lo: o.lo, Hi: o.hi, NLo: o.nLo, KLo: o.kLo, NHi: o.nHi, KHi: o.kHi,
		Rounds: o.rounds, Confirmed: o.confirmed, Cut: o.cut, ConfirmRuns: s.n, Tolerance: s.tol, MaxRuns: s.maxRuns}
	for _, t := range r.cfg.SLOs {
		rep.SLOs = append(rep.SLOs, t.Expr)
	}
	for _, t := range s.tries {
		rep.Runs = append(rep.Runs, report.SearchRun{X: t.x, Phase: t.phase, Passed: t.pass})
	}
	return rep
}
