package schedule

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"benchserve/internal/py/pyrand"
)

// Ramp is vLLM's --ramp-up-strategy/--ramp-up-start-rps/--ramp-up-end-rps,
// planned in time: the rate at time t is Start + (End-Start)*t/Over
// (linear) or Start*(End/Start)^(t/Over) (exponential) for t < Over, and
// End from Over on.
//
// A ramp is planned as a non-homogeneous process by time rescaling: gaps
// of mean 1 are drawn in expected-count space and each cumulative count s
// is sent at Λ⁻¹(s), where Λ(t) is the integral of the rate over [0, t].
type Ramp struct {
	Strategy   string        // "linear" or "exponential"
	Start, End float64       // requests per second
	Over       time.Duration // the ramp's length; 0 in Plan: the length over which n requests are expected (RampSpan)
}

// CheckRamp validates a ramp; its errors are one line naming the flag.
func CheckRamp(r Ramp) error {
	switch {
	case r.Strategy != "linear" && r.Strategy != "exponential":
		return fmt.Errorf("--ramp-up-strategy: must be linear or exponential, got %q", r.Strategy)
	case math.IsNaN(r.Start) || math.IsInf(r.Start, 0) || r.Start < 0:
		return fmt.Errorf("--ramp-up-start-rps: must be a finite number >= 0, got %v", r.Start)
	case math.IsNaN(r.End) || math.IsInf(r.End, 0) || r.End < 0:
		return fmt.Errorf("--ramp-up-end-rps: must be a finite number >= 0, got %v", r.End)
	case r.Start > r.End:
		return fmt.Errorf("--ramp-up-start-rps: must be <= --ramp-up-end-rps, got %v > %v", r.Start, r.End)
	case r.End <= 0:
		return fmt.Errorf("--ramp-up-end-rps: must be > 0, got %v", r.End)
	case r.Strategy == "exponential" && r.Start <= 0:
		return fmt.Errorf("--ramp-up-start-rps: must be > 0 for an exponential ramp")
	}
	return nil
}

// RampSpan is the ramp length over which n requests are expected: the T
// where the integral of the rate over [0, T] is n, for a ramp lasting T
// (linear: 2n/(Start+End); exponential: n*ln(r)/(Start*(r-1)) with
// r = End/Start, n/Start when r == 1). It is 0 for n <= 0 or a ramp that
// CheckRamp refuses.
func RampSpan(n int, r Ramp) time.Duration {
	if n <= 0 || CheckRamp(r) != nil {
		return 0
	}
	var sec float64
	switch {
	case r.Strategy == "linear":
		sec = 2 * float64(n) / (r.Start + r.End)
	case r.Start == r.End:
		sec = float64(n) / r.Start
	default:
		// ln(r)/(r-1) as log1p(x)/x, x = r-1, which stays accurate near r = 1.
		x := (r.End - r.Start) / r.Start
		sec = float64(n) * math.Log1p(x) / (r.Start * x)
	}
	return durationOf(sec)
}

// MeanRate is the planned rate averaged over [0, over]: the expected count
// over it divided by its length. A ramp whose Over is 0 is taken to last
// over (as PlanFor does); for over <= 0 it is the rate at 0, Start.
func (r Ramp) MeanRate(over time.Duration) float64 {
	if over <= 0 {
		return r.Start
	}
	T := r.Over
	if T == 0 {
		T = over
	}
	return r.countAt(over.Seconds(), T.Seconds()) / over.Seconds()
}

// countAt is Λ(t), the expected count over [0, t] seconds for a ramp
// lasting T seconds (T <= 0: at End throughout).
func (r Ramp) countAt(t, T float64) float64 {
	if T <= 0 {
		return r.End * t
	}
	if t > T {
		return r.countAt(T, T) + r.End*(t-T)
	}
	if r.Start == r.End {
		return r.Start * t
	}
	if r.Strategy == "exponential" {
		k := math.Log(r.End/r.Start) / T
		return r.Start * math.Expm1(k*t) / k
	}
	return r.Start*t + (r.End-r.Start)*t*t/(2*T)
}

// timeAt is Λ⁻¹(s), the time in seconds by which s requests are expected,
// for a ramp lasting T seconds.
func (r Ramp) timeAt(s, T float64) float64 {
	if s <= 0 {
		return 0
	}
	if T <= 0 {
		return s / r.End
	}
	if top := r.countAt(T, T); s > top {
		return T + (s-top)/r.End
	}
	if r.Start == r.End {
		return s / r.Start
	}
	if r.Strategy == "exponential" {
		k := math.Log(r.End/r.Start) / T
		return math.Log1p(s*k/r.Start) / k
	}
	// The root of (End-Start)/(2T) t² + Start t − s = 0, rationalized so
	// that it neither cancels for a shallow ramp nor divides by 0 for a
	// flat one: t = 2s / (Start + sqrt(Start² + 2(End−Start)s/T)).
	return 2 * s / (r.Start + math.Sqrt(r.Start*r.Start+2*(r.End-r.Start)*s/T))
}

// PlanFor plans the slots whose send time falls before d (every At < d),
// for --duration: the same draws as Plan (the LoRA pick, then the gap
// after it, per request), stopping at d instead of at a count. It refuses
// an infinite Rate without a ramp. With a Ramp whose Over is 0, the ramp
// lasts d.
func PlanFor(d time.Duration, a Arrival, lora LoRA, py *pyrand.Python, np *pyrand.NumPy) ([]Slot, error) {
	if d <= 0 {
		return nil, fmt.Errorf("--duration: must be > 0, got %v", d)
	}
	if err := checkArrival(a); err != nil {
		return nil, err
	}
	var over time.Duration
	expect := a.Rate * d.Seconds()
	if a.Ramp != nil {
		if over = a.Ramp.Over; over == 0 {
			over = d
		}
		expect = a.Ramp.countAt(d.Seconds(), over.Seconds())
	} else if math.IsInf(a.Rate, 1) {
		return nil, fmt.Errorf("--duration: an infinite --request-rate has no send times to stop at")
	}
	g, err := newGen(a, over, lora, py, np)
	if err != nil {
		return nil, err
	}
	slots := make([]Slot, 0, int(min(expect*1.1+16, 1<<20)))
	for at := g.at(); at < d; at = g.at() {
		slots = append(slots, g.take(at))
	}
	return slots, nil
}

// CapSteps is a concurrency ramp (--concurrency-ramp-duration): the cap
// starts at 1 and reaches max at over; step k (k = 0..max-2) is the
// absolute offset at which the cap rises from k+1 to k+2:
// over*(k+1)/(max-1), rounded down to the nanosecond. max <= 1 or
// over <= 0 gives nil.
func CapSteps(max int, over time.Duration) []time.Duration {
	if max <= 1 || over <= 0 {
		return nil
	}
	steps := make([]time.Duration, max-1)
	for k := range steps {
		// over*(k+1) in 128 bits: exact, and the quotient is at most over.
		hi, lo := bits.Mul64(uint64(over), uint64(k+1))
		q, _ := bits.Div64(hi, lo, uint64(max-1))
		steps[k] = time.Duration(q)
	}
	return steps
}

// durationOf converts seconds to a Duration, rounded to the nanosecond and
// held within the Duration's range.
func durationOf(sec float64) time.Duration {
	ns := math.Round(sec * float64(time.Second))
	switch {
	case math.IsNaN(ns) || ns <= 0:
		return 0
	case ns >= math.MaxInt64:
		return math.MaxInt64
	}
	return time.Duration(ns)
}
