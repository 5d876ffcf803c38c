package sweep

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"benchserve/report"
)

// fakeRuns is a search's runs without a server: pass decides each run.
type fakeRuns struct {
	start int // runs made before the search (a ceiling run)
	log   []try
	pass  func(x float64, phase string, k int) bool
}

func (f *fakeRuns) searcher(rate bool, maxRuns int) *searcher {
	return &searcher{rate: rate, tol: 0.05, maxRuns: maxRuns, n: 3,
		made: func() int { return f.start + len(f.log) },
		run: func(_ context.Context, x float64, phase string, k int) (*report.Result, bool, error) {
			p := f.pass(x, phase, k)
			f.log = append(f.log, try{x, phase, p})
			return nil, p, nil
		}}
}

// below passes every run at a load up to b.
func below(b float64) func(float64, string, int) bool {
	return func(x float64, _ string, _ int) bool { return x <= b }
}

func answerOf(t *testing.T, s *searcher, o outcome) string {
	t.Helper()
	var buf bytes.Buffer
	r := &runner{cfg: &Config{SLOs: []report.Threshold{{Expr: "p99_ttft_ms<100"}}}, table: report.NewSweepTable(&buf)}
	_ = s.finish(r, o)
	return strings.TrimSpace(buf.String())
}

// From 10 req/s with the boundary at 37: bracketing 10, 20, 40 (3 runs),
// bisecting 30, 35, 37.5, 36.25 (4 runs), then 3 confirming runs at each
// end of [36.25, 37.5]: 13 runs in all. Budgets below that end the search
// where they end, and the answer says so.
func TestSearchBudget(t *testing.T) {
	cases := []struct {
		max  int
		cut  string
		want string
	}{
		{40, "", "Highest request rate meeting p99_ttft_ms<100: 36.25 req/s (between 36.25 req/s and 37.5 req/s: met in 3 of 3 runs at 36.25 req/s, in 0 of 3 at 37.5 req/s)."},
		{13, "", "Highest request rate meeting p99_ttft_ms<100: 36.25 req/s (between"},
		{7, "confirming", "Highest request rate meeting p99_ttft_ms<100: about 36.25 req/s, between 36.25 req/s and 37.5 req/s, not confirmed: the run budget of 7 ended before the confirmation runs; raise --search-max-runs."},
		{9, "confirming", "not confirmed: the run budget of 9 ended during the confirmation runs (met in 2 of 2 runs at 36.25 req/s, not run at 37.5 req/s); raise --search-max-runs."},
		{11, "confirming", "during the confirmation runs (met in 3 of 3 runs at 36.25 req/s, in 0 of 1 at 37.5 req/s)"},
		{5, "bisecting", "about 35 req/s, between 35 req/s and 40 req/s, not confirmed: the run budget of 5 ended while bisecting"},
		{2, "bracketing", "Every load tried met p99_ttft_ms<100, up to 20 req/s: the run budget of 2 ended before a load failed them; raise --search-max-runs."},
	}
	for _, c := range cases {
		f := &fakeRuns{pass: below(37)}
		s := f.searcher(true, c.max)
		o, err := s.find(context.Background(), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.log) > c.max {
			t.Errorf("budget %d: %d runs made", c.max, len(f.log))
		}
		if o.cut != c.cut {
			t.Errorf("budget %d: cut %q, want %q", c.max, o.cut, c.cut)
		}
		if got := answerOf(t, s, o); !strings.Contains(got, c.want) {
			t.Errorf("budget %d:\n got %s\nwant %s", c.max, got, c.want)
		}
	}
}

// A 2 of 3 high end confirms: it failed in most; 2 of 2 made of 3 is
// already decided too.
func TestSearchConfirmRule(t *testing.T) {
	// The high end 37.5 passes its first confirming run only.
	f := &fakeRuns{pass: func(x float64, phase string, k int) bool { return x <= 37 || (phase == "confirm" && k == 1) }}
	s := f.searcher(true, 40)
	o, _ := s.find(context.Background(), 10)
	if !o.confirmed || o.nHi != 1 || o.kHi != 3 {
		t.Errorf("outcome %+v, want confirmed with 1 of 3 at the high end", o)
	}
	// Budget 12: the high end's third run is not made, but its two
	// failures are already most of 3.
	f = &fakeRuns{pass: below(37)}
	s = f.searcher(true, 12)
	if o, _ = s.find(context.Background(), 10); !o.confirmed || o.kHi != 2 || len(f.log) != 12 {
		t.Errorf("budget 12: outcome %+v after %d runs, want confirmed after 0 of 2 at the high end", o, len(f.log))
	}
}

// A low end that fails 1 run in 3 steps the bracket down each round;
// after the third round the answer names that round's loads with that
// round's counts (it used to step once more and print the old counts
// against the new loads).
func TestSearchNoisyCountsAreTheirLoads(t *testing.T) {
	f := &fakeRuns{pass: func(x float64, phase string, k int) bool {
		return x <= 30 || (x <= 36.25 && (phase == "search" || k != 2))
	}}
	s := f.searcher(true, 40)
	o, _ := s.find(context.Background(), 10)
	if o.confirmed || o.rounds != 3 || o.cut != "" {
		t.Fatalf("outcome %+v, want 3 unconfirmed rounds", o)
	}
	lo, hi := 36.25/1.05/1.05, 36.25/1.05
	if math.Abs(o.lo-lo) > 1e-9 || math.Abs(o.hi-hi) > 1e-9 {
		t.Errorf("bracket [%v, %v], want [%v, %v]", o.lo, o.hi, lo, hi)
	}
	checkLastRound(t, f.log, o)
	want := "about 32.88 req/s, between 32.88 req/s and 34.52 req/s, not confirmed (met in 2 of 3 runs at 32.88 req/s, in 2 of 3 at 34.52 req/s: the boundary is noisy"
	if got := answerOf(t, s, o); !strings.Contains(got, want) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// checkLastRound checks the outcome's counts against the runs made: the
// last kHi runs were at hi with nHi passes, the kLo before them at lo
// with nLo.
func checkLastRound(t *testing.T, log []try, o outcome) {
	t.Helper()
	tally := func(runs []try, x float64) int {
		n := 0
		for _, r := range runs {
			if r.phase != "confirm" || r.x != x {
				t.Errorf("run %+v in the last round, want a confirming run at %v", r, x)
			}
			if r.pass {
				n++
			}
		}
		return n
	}
	if o.kLo+o.kHi > len(log) {
		t.Fatalf("counts %+v for %d runs", o, len(log))
	}
	hiRuns := log[len(log)-o.kHi:]
	loRuns := log[len(log)-o.kHi-o.kLo : len(log)-o.kHi]
	if n := tally(hiRuns, o.hi); n != o.nHi {
		t.Errorf("%d passes at the high end, outcome says %d", n, o.nHi)
	}
	if n := tally(loRuns, o.lo); n != o.nLo {
		t.Errorf("%d passes at the low end, outcome says %d", n, o.nLo)
	}
}

// Over budgets, axes and noisy boundaries: never more runs than the
// budget, and the counts always those of the loads named.
func TestSearchNeverPastBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 400; i++ {
		rate := i%2 == 0
		b := 1 + rng.Float64()*60
		noise := rng.Float64() * 0.3
		max := 1 + rng.IntN(30)
		f := &fakeRuns{start: rng.IntN(2), pass: func(x float64, _ string, _ int) bool {
			return x <= b*(1+noise*(rng.Float64()-0.5))
		}}
		s := f.searcher(rate, max)
		x0 := 1 + float64(rng.IntN(40))
		o, err := s.find(context.Background(), x0)
		if err != nil {
			t.Fatal(err)
		}
		if made := f.start + len(f.log); made > max {
			t.Fatalf("case %d: %d runs for a budget of %d", i, made, max)
		}
		if o.cut != "" && f.start+len(f.log) != max {
			t.Errorf("case %d: cut %q with %d of %d runs made", i, o.cut, f.start+len(f.log), max)
		}
		if !math.IsNaN(o.lo) && !math.IsNaN(o.hi) {
			checkLastRound(t, f.log, o)
		}
		if got := answerOf(t, s, o); strings.Contains(got, "NaN") || (o.cut != "" && !strings.Contains(got, "raise --search-max-runs")) {
			t.Errorf("case %d: %s", i, got)
		}
	}
}

// A ceiling run that used the whole budget leaves no search run.
func TestSearchNoRunLeft(t *testing.T) {
	f := &fakeRuns{start: 1, pass: below(10)}
	s := f.searcher(true, 1)
	o, _ := s.find(context.Background(), 5)
	if len(f.log) != 0 {
		t.Errorf("%d runs past the budget", len(f.log))
	}
	want := "No search run: the run budget of 1 ended before the first (the ceiling run used it); raise --search-max-runs."
	if got := answerOf(t, s, o); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// Deterministic oracles (every run at a load up to b meets the SLOs) on
// both axes, from below and above the boundary: the search ends
// confirmed, with lo meeting them and hi not, the bracket within the
// tolerance (neighbouring concurrencies), each search run inside the
// bracket of the runs before it, and one confirmation round of 3 runs at
// each end. Where no load can pass, or every load does, it says so.
func TestSearchDeterministicOracles(t *testing.T) {
	cases := []struct {
		rate  bool
		b, x0 float64
		max   int
		// found: a boundary inside the loads reachable; else lo or hi
		// stays NaN, with cut the phase the budget ended in.
		found  bool
		loNaN  bool
		cut    string
		search []float64 // the search runs' loads, when given
	}{
		{rate: true, b: 37, x0: 10, max: 40, found: true, search: []float64{10, 20, 40, 30, 35, 37.5, 36.25}},
		{rate: true, b: 37, x0: 100, max: 40, found: true, search: []float64{100, 50, 25, 37.5, 31.25, 34.375, 35.9375}},
		{rate: true, b: 0.3, x0: 10, max: 40, found: true},
		{rate: true, b: 1000, x0: 1, max: 40, found: true},
		{rate: true, b: 10, x0: 10, max: 40, found: true, search: []float64{10, 20, 15, 12.5, 11.25, 10.625, 10.3125}},
		{rate: false, b: 37, x0: 1, max: 40, found: true, search: []float64{1, 2, 4, 8, 16, 32, 64, 48, 40, 36, 38, 37}},
		{rate: false, b: 37, x0: 100, max: 40, found: true, search: []float64{100, 50, 25, 37, 43, 40, 38}},
		{rate: false, b: 1, x0: 64, max: 40, found: true, search: []float64{64, 32, 16, 8, 4, 2, 1}},
		{rate: false, b: 0.5, x0: 8, max: 40, loNaN: true, search: []float64{8, 4, 2, 1}},
		{rate: false, b: 0.5, x0: 8, max: 3, loNaN: true, cut: "bracketing", search: []float64{8, 4, 2}},
		{rate: true, b: math.Inf(1), x0: 1, max: 12, cut: "bracketing", search: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048}},
		{rate: true, b: 0, x0: 1, max: 12, loNaN: true, cut: "bracketing"},
	}
	for i, c := range cases {
		f := &fakeRuns{pass: below(c.b)}
		s := f.searcher(c.rate, c.max)
		o, err := s.find(context.Background(), c.x0)
		if err != nil {
			t.Fatal(err)
		}
		var search []float64
		lo, hi := math.Inf(-1), math.Inf(1)
		for _, r := range f.log {
			if r.phase != "search" {
				continue
			}
			search = append(search, r.x)
			if len(search) > 1 && !(r.x > lo && r.x < hi) && !math.IsInf(lo, -1) && !math.IsInf(hi, 1) {
				t.Errorf("case %d: run at %v outside the bracket (%v, %v) of the runs before", i, r.x, lo, hi)
			}
			if r.pass {
				lo = max(lo, r.x)
			} else {
				hi = min(hi, r.x)
			}
		}
		if c.search != nil && !slices.Equal(search, c.search) {
			t.Errorf("case %d: search runs %v, want %v", i, search, c.search)
		}
		if !c.found {
			if math.IsNaN(o.lo) != c.loNaN || math.IsNaN(o.hi) == c.loNaN || o.cut != c.cut || o.confirmed {
				t.Errorf("case %d: outcome %+v, want lo NaN %v, cut %q", i, o, c.loNaN, c.cut)
			}
			continue
		}
		narrow := o.hi <= o.lo*(1+s.tol)
		if !c.rate {
			narrow = o.hi == o.lo+1
		}
		if !(o.lo <= c.b && o.hi > c.b) || !narrow {
			t.Errorf("case %d: bracket [%v, %v] for a boundary at %v", i, o.lo, o.hi, c.b)
		}
		if !o.confirmed || o.rounds != 1 || o.nLo != 3 || o.kLo != 3 || o.nHi != 0 || o.kHi != 3 || o.cut != "" {
			t.Errorf("case %d: outcome %+v, want confirmed in one round of 3 and 3", i, o)
		}
		if len(f.log) != len(search)+6 {
			t.Errorf("case %d: %d runs, %d of them searching: want 6 confirming", i, len(f.log), len(search))
		}
	}
}

// Noisy oracles: a run at load x meets the SLOs with a probability that
// falls from 1 to 0 across [b(1-w), b(1+w)], independently each run. Over
// many seeded searches: a confirmed answer's low end is never above the
// band (it met the SLOs 3 times in 3) and its high end never below it
// (it failed in most): both certain, as no run above the band passes and
// none below it fails; an answer not confirmed says why; the counts are
// those of the loads named; and a band narrower than the tolerance is
// found confirmed most of the time.
func TestSearchNoisyOracle(t *testing.T) {
	for _, w := range []float64{0.01, 0.1, 0.3} {
		rng := rand.New(rand.NewPCG(uint64(w*100), 7))
		confirmed := 0
		const searches = 300
		for i := 0; i < searches; i++ {
			b := 5 + rng.Float64()*100
			f := &fakeRuns{pass: func(x float64, _ string, _ int) bool {
				p := math.Min(1, math.Max(0, (b*(1+w)-x)/(2*w*b)))
				return rng.Float64() < p
			}}
			s := f.searcher(true, 40)
			o, err := s.find(context.Background(), 1+rng.Float64()*50)
			if err != nil {
				t.Fatal(err)
			}
			if o.confirmed {
				confirmed++
				if o.lo > b*(1+w) || o.hi < b*(1-w) {
					t.Errorf("w %v, case %d: confirmed [%v, %v] outside the band around %v", w, i, o.lo, o.hi, b)
				}
			}
			if got := answerOf(t, s, o); !o.confirmed && !strings.Contains(got, "not confirmed") && !strings.Contains(got, "Every load tried") && !strings.Contains(got, "No load met") {
				t.Errorf("w %v, case %d: unconfirmed outcome %+v answered %s", w, i, o, got)
			}
			if !math.IsNaN(o.lo) && !math.IsNaN(o.hi) {
				checkLastRound(t, f.log, o)
			}
		}
		if w < 0.05 && confirmed < searches*3/4 { // fakeRuns' tolerance is 0.05

			t.Errorf("w %v: %d of %d searches confirmed, want most", w, confirmed, searches)
		}
		t.Logf("band ±%v: %d of %d confirmed", w, confirmed, searches)
	}
}
