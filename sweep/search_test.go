package sweep

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
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
