package testenv

import "testing"

// SlowVar runs the slow tier: the tests that need real time (accuracy
// against the simulator, the soak, the fault matrix, the SLO search end
// to end, signals, anything with a wall-clock bound). Their bounds hold
// on a loaded 2-core machine, but they take minutes, so a plain `go test
// ./...` leaves them out; .ci/run sets BENCHSERVE_SLOW=1.
const SlowVar = "BENCHSERVE_SLOW"

// Slow skips t, saying so, unless BENCHSERVE_SLOW=1, and always under
// -short.
func Slow(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skipf("slow tier (real time): skipped under -short")
	}
	if !required(t, SlowVar) {
		t.Skipf("slow tier (real time): set %s=1 to run it, as .ci/run does", SlowVar)
	}
}

// SlowOn reports whether the slow tier runs, for a test whose wall-clock
// bounds are only a part of it: it checks them when true, and logs that
// it does not otherwise.
func SlowOn(t testing.TB) bool {
	t.Helper()
	return !testing.Short() && required(t, SlowVar)
}

// StatisticalVar runs the statistical tier, by hand: end-to-end checks
// whose outcome is a statistical verdict over real time (A/B runs of two
// simulators judged by bootstrap intervals). Their inputs are latencies
// the machine's load moves, so no bound holds on a loaded 2-core machine;
// CI runs their pure-function counterparts instead (CONTRIBUTING.md).
const StatisticalVar = "BENCHSERVE_STATISTICAL"

// Statistical skips t, saying so, unless BENCHSERVE_STATISTICAL=1.
func Statistical(t testing.TB) {
	t.Helper()
	if testing.Short() || !required(t, StatisticalVar) {
		t.Skipf("statistical tier (by hand, on a quiet machine): set %s=1 to run it", StatisticalVar)
	}
}
