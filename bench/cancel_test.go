package bench

import (
	"slices"
	"testing"
)

// The requests cancelled on purpose are a pure function of the seed, the
// rate and the plan position: none at 0%, all at 100%, about the rate in
// between, the same on every call (shards, which pick by the position in
// the whole plan, and reruns pick alike), and another seed picks others.
func TestCancelPicks(t *testing.T) {
	count := func(c cancelling, n int) (k int, picked []bool) {
		picked = make([]bool, n)
		for i := range n {
			if c.picks(i) {
				picked[i] = true
				k++
			}
		}
		return k, picked
	}
	for _, c := range []struct {
		pct      float64
		seed     uint64
		min, max int
	}{
		{0, 42, 0, 0},
		{100, 42, 1000, 1000},
		{10, 42, 80, 120},
		{10, 7, 80, 120},
		{50, 42, 450, 550},
	} {
		cn := cancelling{pct: c.pct, seed: c.seed}
		k, first := count(cn, 1000)
		if k < c.min || k > c.max {
			t.Errorf("%v%% seed %d: %d of 1000 picked, want %d to %d", c.pct, c.seed, k, c.min, c.max)
		}
		if k2, again := count(cn, 1000); k2 != k || !slices.Equal(first, again) {
			t.Errorf("%v%% seed %d: a second pass picked others", c.pct, c.seed)
		}
	}
	// The exact count at 10% and seed 42 over 1000 positions, so that a
	// change to the draw (which would change which requests a rerun
	// cancels) is seen.
	if k, _ := count(cancelling{pct: 10, seed: 42}, 1000); k != cancelCount42 {
		t.Errorf("10%% seed 42: %d of 1000 picked, want %d", k, cancelCount42)
	}
	_, a := count(cancelling{pct: 10, seed: 42}, 1000)
	_, b := count(cancelling{pct: 10, seed: 43}, 1000)
	if slices.Equal(a, b) {
		t.Error("seeds 42 and 43 picked the same requests")
	}
}

const cancelCount42 = 91

// The two flags' errors, before any network call.
func TestParseCancel(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		rate, delay *float64
		want        string
	}{
		{nil, f(1), "--request-cancellation-delay: needs --request-cancellation-rate"},
		{f(-1), nil, "--request-cancellation-rate: must be a percentage from 0 to 100, got -1"},
		{f(100.5), nil, "--request-cancellation-rate: must be a percentage from 0 to 100, got 100.5"},
		{f(10), f(-0.5), "--request-cancellation-delay: must be a number of seconds >= 0, got -0.5"},
		{f(10), f(0), ""},
		{nil, nil, ""},
	} {
		cfg := &Config{RequestCancellationRate: c.rate, RequestCancellationDelay: c.delay}
		_, err := parseCancel(cfg)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("rate %v delay %v: %q, want %q", c.rate, c.delay, got, c.want)
		}
	}
	c, err := parseCancel(&Config{RequestCancellationRate: f(25), RequestCancellationDelay: f(0.25)})
	if err != nil || c.pct != 25 || c.delay.Seconds() != 0.25 {
		t.Errorf("25%% after 0.25 s: %+v %v", c, err)
	}
}
