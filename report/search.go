package report

import (
	"fmt"
	"math"
	"strings"

	"benchserve/internal/py/pyjson"
)

// Search is where a sweep's SLO search ended (package sweep runs it):
// its search_* line and its answer in words.
type Search struct {
	Rate bool // the axis: request rate, else max concurrency
	SLOs []string
	// Lo is the highest load found to meet the SLOs, NaN when none did;
	// Hi the lowest found to fail them, NaN when none did.
	Lo, Hi float64
	// The counts of the last confirmation round, the one run at Lo and
	// Hi: NLo of KLo runs at Lo met the SLOs, NHi of KHi at Hi.
	NLo, KLo, NHi, KHi int
	Rounds             int // confirmation rounds run
	Confirmed          bool
	// Cut is the phase the run budget ended in ("bracketing",
	// "bisecting", "confirming"), "" when it did not end the search.
	Cut         string
	ConfirmRuns int // runs at each end of a confirmation round
	Tolerance   float64
	MaxRuns     int
	Runs        []SearchRun
}

// SearchRun is one run of a search: its load, phase and whether it met
// every SLO.
type SearchRun struct {
	X      float64
	Phase  string
	Passed bool
}

// Line is the search's last line in the result file.
func (s *Search) Line() []byte {
	axis := "max_concurrency"
	if s.Rate {
		axis = "request_rate"
	}
	num := func(v float64) []byte {
		if math.IsNaN(v) {
			return pyjson.Null
		}
		return pyjson.Float(v)
	}
	j := &pyjson.Object{}
	j.Set("search_axis", pyjson.String(axis))
	j.Set("search_slo", pyjson.Strings(s.SLOs))
	j.Set("search_result", num(s.Lo))
	j.Set("search_low", num(s.Lo))
	j.Set("search_high", num(s.Hi))
	j.Set("search_confirmed", pyjson.Bool(s.Confirmed))
	j.Set("search_low_passed", pyjson.Int(s.NLo))
	j.Set("search_high_passed", pyjson.Int(s.NHi))
	j.Set("search_low_runs", pyjson.Int(s.KLo))
	j.Set("search_high_runs", pyjson.Int(s.KHi))
	j.Set("search_confirm_runs", pyjson.Int(s.ConfirmRuns))
	j.Set("search_tolerance", pyjson.Float(s.Tolerance))
	j.Set("search_max_runs", pyjson.Int(s.MaxRuns))
	if s.Cut != "" {
		j.Set("search_budget_ended", pyjson.String(s.Cut))
	} else {
		j.Set("search_budget_ended", pyjson.Null)
	}
	runs := []byte{'['}
	for i, t := range s.Runs {
		if i > 0 {
			runs = append(runs, ", "...)
		}
		e := &pyjson.Object{}
		e.Set(axis, pyjson.Float(t.X))
		e.Set("phase", pyjson.String(t.Phase))
		e.Set("passed", pyjson.Bool(t.Passed))
		runs = e.Append(runs)
	}
	j.Set("search_runs", append(runs, ']'))
	return append(j.Bytes(), '\n')
}

// Load is a load of the search's axis in words: "36.25 req/s", "12".
func (s *Search) Load(v float64) string {
	if s.Rate {
		return trim(v) + " req/s"
	}
	return trim(v)
}

// Answer is the search's answer in words: what it found and, when it is
// not confirmed, why, with the counts of the runs made at each end.
func (s *Search) Answer() string {
	f := s.Load
	slo := strings.Join(s.SLOs, ", ")
	axis := "max concurrency"
	if s.Rate {
		axis = "request rate"
	}
	ended := fmt.Sprintf("the run budget of %d ended", s.MaxRuns)
	raise := "raise --search-max-runs"
	counts := fmt.Sprintf("met in %d of %d runs at %s, ", s.NLo, s.KLo, f(s.Lo))
	if s.KHi == 0 {
		counts += "not run at " + f(s.Hi)
	} else {
		counts += fmt.Sprintf("in %d of %d at %s", s.NHi, s.KHi, f(s.Hi))
	}
	about := fmt.Sprintf("Highest %s meeting %s: about %s, between %s and %s, not confirmed", axis, slo, f(s.Lo), f(s.Lo), f(s.Hi))
	switch {
	case math.IsNaN(s.Lo) && math.IsNaN(s.Hi):
		return fmt.Sprintf("No search run: %s before the first (the ceiling run used it); %s.", ended, raise)
	case math.IsNaN(s.Lo) && s.Cut != "":
		return fmt.Sprintf("No load met %s: the lowest tried, %s, failed, and %s before a lower one was tried; %s.", slo, f(s.Hi), ended, raise)
	case math.IsNaN(s.Lo):
		return fmt.Sprintf("No load met %s: the lowest tried, %s, failed.", slo, f(s.Hi))
	case math.IsNaN(s.Hi) && s.Cut != "":
		return fmt.Sprintf("Every load tried met %s, up to %s: %s before a load failed them; %s.", slo, f(s.Lo), ended, raise)
	case math.IsNaN(s.Hi):
		return fmt.Sprintf("Every load tried met %s, up to %s: the server's limit is higher (or the SLO looser) than the search reached.", slo, f(s.Lo))
	case s.Confirmed:
		return fmt.Sprintf("Highest %s meeting %s: %s (between %s and %s: %s).", axis, slo, f(s.Lo), f(s.Lo), f(s.Hi), counts)
	case s.Cut == "bisecting":
		return fmt.Sprintf("%s: %s while bisecting, with the bracket still wider than the tolerance (%s), before the confirmation runs; %s.", about, ended, trim(s.Tolerance), raise)
	case s.Cut == "confirming" && s.Rounds == 0:
		return fmt.Sprintf("%s: %s before the confirmation runs; %s.", about, ended, raise)
	case s.Cut == "confirming" && s.KLo == s.ConfirmRuns && s.KHi == s.ConfirmRuns:
		return fmt.Sprintf("%s (%s): %s before the next confirmation round; %s.", about, counts, ended, raise)
	case s.Cut == "confirming":
		return fmt.Sprintf("%s: %s during the confirmation runs (%s); %s.", about, ended, counts, raise)
	}
	return fmt.Sprintf("%s (%s: the boundary is noisy; try --duration or more --repeats).", about, counts)
}

func trim(v float64) string { return fmt.Sprintf("%.4g", v) }
