// Package schedule plans when each request leaves and which LoRA adapter it
// names, as absolute offsets from the run's start, and paces dispatch to
// those offsets.
package schedule

import (
	"fmt"
	"math"
	"time"

	"benchserve/internal/py/pyrand"
)

// Slot is one planned request.
type Slot struct {
	// At is the intended send time, as an offset from the run's start.
	At time.Duration
	// LoRA is the adapter name for this request, "" for none.
	LoRA string
}

// LoRA says how adapters are picked (--lora-name, --lora-request-distribution,
// --lora-zipf-alpha).
type LoRA struct {
	Names        []string
	Distribution string // uniform, distinct or skewed
	ZipfAlpha    float64
}

// Arrival says how send times are spread.
type Arrival struct {
	// Rate is requests per second; +Inf sends everything at once.
	Rate float64
	// Constant spaces requests exactly 1/Rate apart.
	Constant bool
	// Burstiness is the shape of gamma-distributed gaps with mean 1/Rate,
	// as vLLM's --burstiness; 1 is the reference's Poisson process.
	Burstiness float64
	// Ramp, when set, replaces Rate: the rate rises from Ramp.Start to
	// Ramp.End (see Ramp).
	Ramp *Ramp
}

// Plan returns n slots. Slot i leaves at the sum of the first i gaps,
// computed up front as offsets from the run's start so that lateness in
// sending one request never shifts the next. Poisson gaps are the
// reference's np.random.exponential(1/rate) draws, gamma gaps vLLM's
// np.random.gamma(burstiness, 1/(rate*burstiness)); constant arrivals
// leave at i/rate. Draws happen in the reference tool's order (per
// request: the LoRA pick, then the gap after it), so the same seed gives
// the same arrival times and adapters.
//
// With a.Ramp set, Rate is ignored and the n slots are planned on the ramp
// (over RampSpan(n, ramp) when its Over is 0); see ramp.go.
func Plan(n int, a Arrival, lora LoRA, py *pyrand.Python, np *pyrand.NumPy) ([]Slot, error) {
	if err := checkArrival(a); err != nil {
		return nil, err
	}
	var over time.Duration
	if a.Ramp != nil {
		if over = a.Ramp.Over; over == 0 {
			over = RampSpan(n, *a.Ramp)
		}
	}
	g, err := newGen(a, over, lora, py, np)
	if err != nil {
		return nil, err
	}
	slots := make([]Slot, n)
	for i := range slots {
		slots[i] = g.take(g.at())
	}
	return slots, nil
}

// checkArrival is Plan's validation, in its order; a ramp is checked where
// the rate would be.
func checkArrival(a Arrival) error {
	if a.Ramp != nil {
		if err := CheckRamp(*a.Ramp); err != nil {
			return err
		}
		if a.Ramp.Over < 0 {
			return fmt.Errorf("ramp length: must be >= 0, got %v", a.Ramp.Over)
		}
	} else if rate := a.Rate; math.IsNaN(rate) || rate <= 0 {
		return fmt.Errorf("--request-rate: must be > 0 (or inf), got %v", rate)
	}
	if b := a.Burstiness; math.IsNaN(b) || math.IsInf(b, 0) || b <= 0 {
		return fmt.Errorf("--burstiness: must be a finite number > 0, got %v", b)
	}
	if a.Constant && a.Burstiness != 1 {
		return fmt.Errorf("--burstiness applies to --arrival poisson, not constant")
	}
	return nil
}

// gen walks a plan one request at a time: at is the next send time, take
// draws its LoRA pick and then the gap after it. Gaps are drawn in a space
// s (seconds, or expected counts on a ramp) that toSec maps to seconds.
type gen struct {
	pick  func() string
	gap   func() float64
	toSec func(s float64) float64
	s     float64
}

// newGen builds the walk for a checked Arrival; over is the ramp's length
// when a.Ramp is set.
func newGen(a Arrival, over time.Duration, lora LoRA, py *pyrand.Python, np *pyrand.NumPy) (*gen, error) {
	pick, err := newPicker(lora, py, np)
	if err != nil {
		return nil, err
	}
	g := &gen{pick: pick, toSec: func(s float64) float64 { return s }}
	if r := a.Ramp; r != nil {
		// Time rescaling: unit-mean gaps in expected-count space, mapped
		// through the inverse of the ramp's cumulative rate.
		ramp, T := *r, over.Seconds()
		g.toSec = func(s float64) float64 { return ramp.timeAt(s, T) }
		switch {
		case a.Constant:
			g.gap = func() float64 { return 1 }
		case a.Burstiness != 1:
			shape, scale := a.Burstiness, 1/a.Burstiness
			g.gap = func() float64 { return np.Gamma(shape, scale) }
		default:
			g.gap = func() float64 { return np.Exponential(1.0) }
		}
		return g, nil
	}
	rate := a.Rate
	switch {
	case math.IsInf(rate, 1):
		g.gap = func() float64 { return 0 }
	case a.Constant:
		// Count requests and divide, so that no rounding accumulates.
		g.gap = func() float64 { return 1 }
		g.toSec = func(s float64) float64 { return s / rate }
	case a.Burstiness != 1:
		shape, scale := a.Burstiness, 1/(rate*a.Burstiness)
		g.gap = func() float64 { return np.Gamma(shape, scale) }
	default:
		g.gap = func() float64 { return np.Exponential(1.0 / rate) }
	}
	return g, nil
}

// at is the next request's send time.
func (g *gen) at() time.Duration {
	return time.Duration(g.toSec(g.s) * float64(time.Second))
}

// take plans the next request at the given time (g.at()): its LoRA pick,
// then the gap after it.
func (g *gen) take(at time.Duration) Slot {
	s := Slot{At: at, LoRA: g.pick()}
	g.s += g.gap()
	return s
}

func newPicker(l LoRA, py *pyrand.Python, np *pyrand.NumPy) (func() string, error) {
	names := l.Names
	if len(names) == 0 {
		return func() string { return "" }, nil
	}
	switch l.Distribution {
	case "uniform", "":
		return func() string { return names[py.Choice(len(names))] }, nil
	case "distinct":
		i := 0
		return func() string {
			s := names[i]
			i = (i + 1) % len(names)
			return s
		}, nil
	case "skewed":
		// p_i ∝ alpha^-i, as the reference's weights.
		p := make([]float64, len(names))
		for i := range p {
			p[i] = math.Pow(l.ZipfAlpha, -float64(i))
		}
		return func() string { return names[np.ChoiceP(p)] }, nil
	}
	return nil, fmt.Errorf("--lora-request-distribution: unknown distribution %q", l.Distribution)
}

// PlanTrace returns one slot per trace time (milliseconds, in sending
// order): slot i leaves (t_i − t_0)/1000 × slowdown seconds after the start,
// as the reference's trace replay does (a slowdown of 2 is twice as slow).
// LoRA picks are drawn as in Plan.
func PlanTrace(times []float64, slowdown float64, lora LoRA, py *pyrand.Python, np *pyrand.NumPy) ([]Slot, error) {
	if math.IsNaN(slowdown) || math.IsInf(slowdown, 0) || slowdown < 0 {
		return nil, fmt.Errorf("--mooncake-slowdown-factor: must be a finite number >= 0, got %v", slowdown)
	}
	pick, err := newPicker(lora, py, np)
	if err != nil {
		return nil, err
	}
	slots := make([]Slot, len(times))
	for i, t := range times {
		d := (t - times[0]) / 1000 * slowdown
		if d < 0 || math.IsNaN(d) || math.IsInf(d, 0) {
			return nil, fmt.Errorf("trace time %v of request %d is before the first (%v) or not a number", t, i, times[0])
		}
		slots[i] = Slot{At: time.Duration(d * float64(time.Second)), LoRA: pick()}
	}
	return slots, nil
}

// LoRAPicks draws n adapter names as Plan does, one per request, in order
// (one-batch's per-prompt lora_path).
func LoRAPicks(l LoRA, n int, py *pyrand.Python, np *pyrand.NumPy) ([]string, error) {
	pick, err := newPicker(l, py, np)
	if err != nil {
		return nil, err
	}
	out := make([]string, n)
	for i := range out {
		out[i] = pick()
	}
	return out, nil
}
