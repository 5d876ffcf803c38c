package schedule

import (
	"context"
	"math"
	"testing"
	"time"

	"benchserve/internal/py/pyrand"
)

func TestPlanBurst(t *testing.T) {
	slots, err := Plan(5, Arrival{Rate: math.Inf(1), Burstiness: 1}, LoRA{}, pyrand.NewPython(1), pyrand.NewNumPy(1))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range slots {
		if s.At != 0 || s.LoRA != "" {
			t.Errorf("slot %d = %+v, want a burst at 0 with no adapter", i, s)
		}
	}
}

// The offsets are cumulative sums of the reference's exponential draws:
// np.random.seed(42); [np.random.exponential(1/rate) for each request].
func TestPlanPoissonIsAbsolute(t *testing.T) {
	const rate = 4.0
	slots, err := Plan(200, Arrival{Rate: rate, Burstiness: 1}, LoRA{}, pyrand.NewPython(42), pyrand.NewNumPy(42))
	if err != nil {
		t.Fatal(err)
	}
	np := pyrand.NewNumPy(42)
	var at float64
	for i, s := range slots {
		if want := time.Duration(at * float64(time.Second)); s.At != want {
			t.Fatalf("slot %d at %v, want %v", i, s.At, want)
		}
		at += np.Exponential(1 / rate)
	}
	// 199 gaps of mean 0.25 s: the last offset is near 50 s.
	if last := slots[len(slots)-1].At.Seconds(); last < 35 || last > 65 {
		t.Errorf("last offset %.1f s is far from 199/rate", last)
	}
	if slots[0].At != 0 {
		t.Errorf("first request must leave at once, got %v", slots[0].At)
	}
}

func TestPlanLoRA(t *testing.T) {
	names := []string{"a", "b", "c"}
	slots, _ := Plan(6, Arrival{Rate: math.Inf(1), Burstiness: 1}, LoRA{Names: names, Distribution: "distinct"}, pyrand.NewPython(1), pyrand.NewNumPy(1))
	var got string
	for _, s := range slots {
		got += s.LoRA
	}
	if got != "abcabc" {
		t.Errorf("distinct = %q", got)
	}

	// uniform is random.choice(names) from the Python stream.
	py := pyrand.NewPython(42)
	slots, _ = Plan(50, Arrival{Rate: math.Inf(1), Burstiness: 1}, LoRA{Names: names, Distribution: "uniform"}, pyrand.NewPython(42), pyrand.NewNumPy(42))
	for i, s := range slots {
		if want := names[py.Choice(3)]; s.LoRA != want {
			t.Fatalf("uniform slot %d = %q, want %q", i, s.LoRA, want)
		}
	}

	// skewed interleaves with the Poisson gaps in the NumPy stream: pick, gap, pick, gap.
	np := pyrand.NewNumPy(7)
	slots, _ = Plan(50, Arrival{Rate: 10, Burstiness: 1}, LoRA{Names: names, Distribution: "skewed", ZipfAlpha: 2}, pyrand.NewPython(7), pyrand.NewNumPy(7))
	p := []float64{1, 0.5, 0.25}
	count := map[string]int{}
	for i, s := range slots {
		if want := names[np.ChoiceP(p)]; s.LoRA != want {
			t.Fatalf("skewed slot %d = %q, want %q", i, s.LoRA, want)
		}
		np.Exponential(0.1)
		count[s.LoRA]++
	}
	if count["a"] <= count["c"] {
		t.Errorf("skewed picks %v: the first adapter should dominate", count)
	}

	if _, err := Plan(1, Arrival{Rate: 1, Burstiness: 1}, LoRA{Names: names, Distribution: "zipf"}, pyrand.NewPython(1), pyrand.NewNumPy(1)); err == nil {
		t.Error("unknown distribution accepted")
	}
	if _, err := Plan(1, Arrival{Rate: 0, Burstiness: 1}, LoRA{}, pyrand.NewPython(1), pyrand.NewNumPy(1)); err == nil {
		t.Error("rate 0 accepted")
	}
}

// The pacer keeps clock.WaitUntil's contract: it never releases early,
// and an ended context stops it even for a deadline already past.
func TestWaitUntil(t *testing.T) {
	deadline := time.Now().Add(2 * time.Millisecond)
	if !WaitUntil(context.Background(), deadline) || time.Now().Before(deadline) {
		t.Error("WaitUntil gave up or returned before its deadline")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if WaitUntil(ctx, time.Now().Add(-time.Second)) {
		t.Error("WaitUntil released past its deadline with the context ended")
	}
}

func TestPlanConstantAndGamma(t *testing.T) {
	slots, err := Plan(5, Arrival{Rate: 4, Constant: true, Burstiness: 1}, LoRA{}, pyrand.NewPython(1), pyrand.NewNumPy(1))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range slots {
		if want := time.Duration(i) * 250 * time.Millisecond; s.At != want {
			t.Errorf("constant slot %d at %v, want %v", i, s.At, want)
		}
	}
	// Gamma gaps are np.random.gamma(b, 1/(rate*b)) from the same stream.
	const rate, b = 8.0, 0.25
	slots, err = Plan(400, Arrival{Rate: rate, Burstiness: b}, LoRA{}, pyrand.NewPython(3), pyrand.NewNumPy(3))
	if err != nil {
		t.Fatal(err)
	}
	np := pyrand.NewNumPy(3)
	var at float64
	for i, s := range slots {
		if want := time.Duration(at * float64(time.Second)); s.At != want {
			t.Fatalf("gamma slot %d at %v, want %v", i, s.At, want)
		}
		at += np.Gamma(b, 1/(rate*b))
	}
	// The mean gap is still 1/rate: 399 gaps of 0.125 s is about 50 s.
	if last := slots[len(slots)-1].At.Seconds(); last < 30 || last > 75 {
		t.Errorf("last gamma offset %.1f s is far from 399/rate", last)
	}
	for _, bad := range []Arrival{{Rate: 1, Burstiness: 0}, {Rate: 1, Burstiness: math.Inf(1)}, {Rate: 1, Constant: true, Burstiness: 2}} {
		if _, err := Plan(1, bad, LoRA{}, pyrand.NewPython(1), pyrand.NewNumPy(1)); err == nil {
			t.Errorf("Plan accepted %+v", bad)
		}
	}
}

func TestPlanTrace(t *testing.T) {
	slots, err := PlanTrace([]float64{1000, 1000, 1500, 4000}, 2, LoRA{}, pyrand.NewPython(1), pyrand.NewNumPy(1))
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{0, 0, time.Second, 6 * time.Second}
	for i, s := range slots {
		if s.At != want[i] {
			t.Errorf("slot %d at %v, want %v", i, s.At, want[i])
		}
	}
	if _, err := PlanTrace([]float64{5, 4}, 1, LoRA{}, pyrand.NewPython(1), pyrand.NewNumPy(1)); err == nil {
		t.Error("times out of order accepted")
	}
	if _, err := PlanTrace([]float64{1}, -1, LoRA{}, pyrand.NewPython(1), pyrand.NewNumPy(1)); err == nil {
		t.Error("negative slowdown accepted")
	}
}
