// Package schedule plans when each request leaves and which LoRA adapter it
// names, as absolute offsets from the run's start, and paces dispatch to
// those offsets.
package schedule

import (
	"fmt"
	"math"
	"time"

	"benchserve/internal/pyrand"
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

// Plan returns n slots. With a finite rate, gaps are exponential with mean
// 1/rate drawn from np (a Poisson process), and slot i leaves at the sum of
// the first i gaps; with rate +Inf every slot leaves at 0. Draws happen in
// the reference tool's order (per request: the LoRA pick, then the gap after
// it), so the same seed gives the same arrival times and adapters.
func Plan(n int, rate float64, lora LoRA, py *pyrand.Python, np *pyrand.NumPy) ([]Slot, error) {
	if math.IsNaN(rate) || rate <= 0 {
		return nil, fmt.Errorf("--request-rate: must be > 0 (or inf), got %v", rate)
	}
	pick, err := newPicker(lora, py, np)
	if err != nil {
		return nil, err
	}
	slots := make([]Slot, n)
	var at float64 // seconds
	for i := range slots {
		slots[i].At = time.Duration(at * float64(time.Second))
		slots[i].LoRA = pick()
		if !math.IsInf(rate, 1) {
			at += np.Exponential(1.0 / rate)
		}
	}
	return slots, nil
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
