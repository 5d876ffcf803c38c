package schedule

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"benchserve/internal/py/pyrand"
)

func TestRampSpan(t *testing.T) {
	for _, c := range []struct {
		n    int
		r    Ramp
		want float64 // seconds, by hand
	}{
		// 2n/(Start+End) = 120/12.
		{60, Ramp{Strategy: "linear", Start: 2, End: 10}, 10},
		// From 0: 16/4.
		{8, Ramp{Strategy: "linear", Start: 0, End: 4}, 4},
		// n ln(16)/(1*15) = 30*4 ln2/15 = 8 ln2.
		{30, Ramp{Strategy: "exponential", Start: 1, End: 16}, 8 * 0.6931471805599453},
		// r == 1: n/Start.
		{12, Ramp{Strategy: "exponential", Start: 3, End: 3}, 4},
		{12, Ramp{Strategy: "linear", Start: 3, End: 3}, 4},
		{0, Ramp{Strategy: "linear", Start: 2, End: 10}, 0},
		{5, Ramp{Strategy: "exponential", Start: 0, End: 10}, 0}, // refused by CheckRamp
	} {
		got := RampSpan(c.n, c.r)
		if d := math.Abs(got.Seconds() - c.want); d > 1e-9 {
			t.Errorf("RampSpan(%d, %+v) = %v, want %.9f s", c.n, c.r, got, c.want)
		}
	}
}

// A constant-arrival ramp puts request i at Λ⁻¹(i), so the requests sent in
// second k are the integers in [Λ(k), Λ(k+1)): Λ(k+1)-Λ(k), give or take 1.
func TestPlanRampLinearConstant(t *testing.T) {
	ramp := Ramp{Strategy: "linear", Start: 2, End: 10, Over: 10 * time.Second}
	slots, err := Plan(61, Arrival{Rate: math.NaN(), Constant: true, Burstiness: 1, Ramp: &ramp}, LoRA{}, pyrand.NewPython(1), pyrand.NewNumPy(1))
	if err != nil {
		t.Fatal(err)
	}
	counts := perSecond(slots, 10)
	for k, got := range counts {
		// rate 2+0.8t integrated over [k, k+1].
		want := 2 + 0.8*float64(k) + 0.4
		if math.Abs(float64(got)-want) > 1 {
			t.Errorf("second %d: %d requests, want %.1f ± 1 (all %v)", k, got, want, counts)
		}
	}
	// 2t + 0.4t² = 2 at t = (-2 + sqrt(7.2))/0.8 = 0.854101966 s;
	// = 20 at t = 5 s; = 60 at t = 10 s.
	for _, c := range []struct {
		i    int
		want time.Duration
	}{{0, 0}, {2, 854101966 * time.Nanosecond}, {20, 5 * time.Second}, {60, 10 * time.Second}} {
		if d := slots[c.i].At - c.want; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("slot %d at %v, want %v", c.i, slots[c.i].At, c.want)
		}
	}
	// Over 0: the ramp lasts RampSpan(61) = 122/12 s, not 10 s.
	ramp.Over = 0
	slots, err = Plan(61, Arrival{Constant: true, Burstiness: 1, Ramp: &ramp}, LoRA{}, pyrand.NewPython(1), pyrand.NewNumPy(1))
	if err != nil {
		t.Fatal(err)
	}
	// 61 = 2T + 8T/2 at T = 61/6 s: the last request (s = 60) is just before.
	if got, end := slots[60].At, time.Duration(61*time.Second/6); got >= end || got < end-200*time.Millisecond {
		t.Errorf("last slot at %v, want just before %v", got, end)
	}
}

func TestPlanRampExponentialConstant(t *testing.T) {
	// 1 → 16 over 4 s: rate 2^t, Λ(t) = (2^t - 1)/ln 2, 15/ln 2 ≈ 21.6 by 4 s.
	ramp := Ramp{Strategy: "exponential", Start: 1, End: 16, Over: 4 * time.Second}
	slots, err := Plan(22, Arrival{Constant: true, Burstiness: 1, Ramp: &ramp}, LoRA{}, pyrand.NewPython(1), pyrand.NewNumPy(1))
	if err != nil {
		t.Fatal(err)
	}
	counts := perSecond(slots, 4)
	for k, got := range counts {
		want := (math.Pow(2, float64(k+1)) - math.Pow(2, float64(k))) / math.Ln2
		if math.Abs(float64(got)-want) > 1 {
			t.Errorf("second %d: %d requests, want %.2f ± 1 (all %v)", k, got, want, counts)
		}
	}
	// The integers in [0, 1.44), [1.44, 4.33), [4.33, 10.10), [10.10, 21.64).
	if got := counts; !reflect.DeepEqual(got, []int{2, 3, 6, 11}) {
		t.Errorf("per-second counts %v, want [2 3 6 11]", got)
	}
	// Request 1 leaves when (2^t - 1)/ln 2 = 1: t = log2(1 + ln 2) ≈ 0.7602 s.
	if want := time.Duration(math.Log2(1+math.Ln2) * 1e9); absDur(slots[1].At-want) > time.Microsecond {
		t.Errorf("slot 1 at %v, want %v", slots[1].At, want)
	}
	// Request 21 is the last before 4 s (21 < 15/ln 2 ≈ 21.64), at
	// log2(1 + 21 ln 2) ≈ 3.97 s.
	if want := time.Duration(math.Log2(1+21*math.Ln2) * 1e9); absDur(slots[21].At-want) > time.Microsecond || want >= 4*time.Second {
		t.Errorf("slot 21 at %v, want %v", slots[21].At, want)
	}
}

// Poisson and gamma gaps on a ramp are unit-mean draws in count space, mapped
// through the quadratic's root (here the textbook form, not the code's).
func TestPlanRampDraws(t *testing.T) {
	ramp := Ramp{Strategy: "linear", Start: 2, End: 10, Over: 10 * time.Second}
	inv := func(s float64) float64 {
		if s > 60 {
			return 10 + (s-60)/10
		}
		a, b := 0.4, 2.0 // 0.4t² + 2t - s = 0
		return (-b + math.Sqrt(b*b+4*a*s)) / (2 * a)
	}
	names := []string{"a", "b", "c"}
	lora := LoRA{Names: names, Distribution: "skewed", ZipfAlpha: 2}
	p := []float64{1, 0.5, 0.25}
	for _, b := range []float64{1, 0.5} {
		slots, err := Plan(100, Arrival{Rate: 1, Burstiness: b, Ramp: &ramp}, lora, pyrand.NewPython(5), pyrand.NewNumPy(5))
		if err != nil {
			t.Fatal(err)
		}
		np := pyrand.NewNumPy(5)
		var s float64
		for i, sl := range slots {
			if want := names[np.ChoiceP(p)]; sl.LoRA != want {
				t.Fatalf("burstiness %v: slot %d names %q, want %q", b, i, sl.LoRA, want)
			}
			if want := time.Duration(inv(s) * 1e9); absDur(sl.At-want) > time.Microsecond {
				t.Fatalf("burstiness %v: slot %d at %v, want %v", b, i, sl.At, want)
			}
			if b == 1 {
				s += np.Exponential(1)
			} else {
				s += np.Gamma(b, 1/b)
			}
		}
	}
}

func TestRampInverseRoundTrip(t *testing.T) {
	for _, r := range []Ramp{
		{Strategy: "linear", Start: 2, End: 10, Over: 10 * time.Second},
		{Strategy: "linear", Start: 0, End: 5, Over: 3 * time.Second},
		{Strategy: "linear", Start: 3, End: 3, Over: 2 * time.Second},
		{Strategy: "linear", Start: 1, End: 1 + 1e-12, Over: 2 * time.Second},
		{Strategy: "exponential", Start: 1, End: 16, Over: 4 * time.Second},
		{Strategy: "exponential", Start: 0.5, End: 200, Over: 7 * time.Second},
		{Strategy: "exponential", Start: 4, End: 4, Over: time.Second},
	} {
		T := r.Over.Seconds()
		top := r.countAt(T, T)
		for _, s := range []float64{0, 1e-9, 1e-3, 0.5, 1, 7, top / 2, top, top + 1e-6, top + 13.7, 10 * top} {
			tt := r.timeAt(s, T)
			if back := r.countAt(tt, T); math.Abs(back-s) > 1e-9*math.Max(1, s) {
				t.Errorf("%+v: Λ(Λ⁻¹(%v)) = %v (t = %v)", r, s, back, tt)
			}
		}
	}
	// Λ itself, by hand: linear 2→10 over 10 s is 2t + 0.4t², then 10/s.
	lin := Ramp{Strategy: "linear", Start: 2, End: 10}
	exp := Ramp{Strategy: "exponential", Start: 1, End: 16}
	for _, c := range []struct {
		r       Ramp
		t, T, s float64
	}{
		{lin, 5, 10, 20},
		{lin, 10, 10, 60},
		{lin, 12, 10, 80},
		{Ramp{Strategy: "linear", Start: 0, End: 5}, 1, 3, 5.0 / 6},
		{exp, 2, 4, 3 / math.Ln2},
		{exp, 5, 4, 15/math.Ln2 + 16},
	} {
		if got := c.r.countAt(c.t, c.T); math.Abs(got-c.s) > 1e-12*math.Max(1, c.s) {
			t.Errorf("%+v over %v s: Λ(%v) = %v, want %v", c.r, c.T, c.t, got, c.s)
		}
		if got := c.r.timeAt(c.s, c.T); math.Abs(got-c.t) > 1e-9 {
			t.Errorf("%+v over %v s: Λ⁻¹(%v) = %v, want %v", c.r, c.T, c.s, got, c.t)
		}
	}
}

func TestRampMeanRate(t *testing.T) {
	lin := Ramp{Strategy: "linear", Start: 2, End: 10, Over: 10 * time.Second}
	for _, c := range []struct {
		r    Ramp
		over time.Duration
		want float64
	}{
		{lin, 10 * time.Second, 6},
		{lin, 20 * time.Second, 8}, // (60 + 100)/20
		{lin, 5 * time.Second, 4},  // 20/5
		{Ramp{Strategy: "linear", Start: 2, End: 10}, 10 * time.Second, 6}, // Over 0: lasts over
		{Ramp{Strategy: "exponential", Start: 1, End: 16, Over: 4 * time.Second}, 4 * time.Second, 15 / math.Ln2 / 4},
		{lin, 0, 2},
	} {
		if got := c.r.MeanRate(c.over); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%+v MeanRate(%v) = %v, want %v", c.r, c.over, got, c.want)
		}
	}
}

func TestPlanForConstant(t *testing.T) {
	slots, err := PlanFor(4*time.Second, Arrival{Rate: 20, Constant: true, Burstiness: 1}, LoRA{}, pyrand.NewPython(1), pyrand.NewNumPy(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(slots) != 80 {
		t.Fatalf("%d slots, want 80", len(slots))
	}
	for i, s := range slots {
		if s.At >= 4*time.Second || absDur(s.At-time.Duration(i)*50*time.Millisecond) > time.Nanosecond {
			t.Errorf("slot %d at %v, want %v", i, s.At, time.Duration(i)*50*time.Millisecond)
		}
	}
	// A ramp of Over 0 lasts d: 2→10 over 10 s expects 60, at 0, Λ⁻¹(1), ...,
	// Λ⁻¹(59); Λ⁻¹(60) is 10 s exactly, not before it.
	ramp := Ramp{Strategy: "linear", Start: 2, End: 10}
	slots, err = PlanFor(10*time.Second, Arrival{Rate: math.Inf(1), Constant: true, Burstiness: 1, Ramp: &ramp}, LoRA{}, pyrand.NewPython(1), pyrand.NewNumPy(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(slots) != 60 {
		t.Errorf("ramp over d: %d slots, want 60", len(slots))
	}
}

func TestPlanForPoisson(t *testing.T) {
	const d = 100 * time.Second
	names := []string{"a", "b", "c"}
	lora := LoRA{Names: names, Distribution: "skewed", ZipfAlpha: 2}
	a := Arrival{Rate: 20, Burstiness: 1}
	slots, err := PlanFor(d, a, lora, pyrand.NewPython(9), pyrand.NewNumPy(9))
	if err != nil {
		t.Fatal(err)
	}
	// 2000 expected, standard deviation sqrt(2000) ≈ 44.7.
	if n := len(slots); n < 2000-179 || n > 2000+179 {
		t.Errorf("%d slots in 100 s at 20/s, want 2000 ± 179", n)
	}
	for i, s := range slots {
		if s.At >= d {
			t.Fatalf("slot %d at %v, not before %v", i, s.At, d)
		}
	}
	again, _ := PlanFor(d, a, lora, pyrand.NewPython(9), pyrand.NewNumPy(9))
	if !reflect.DeepEqual(slots, again) {
		t.Error("the same seed gave different slots")
	}
	// The same draws as Plan: PlanFor is Plan cut at d.
	plan, _ := Plan(len(slots)+1, a, lora, pyrand.NewPython(9), pyrand.NewNumPy(9))
	if !reflect.DeepEqual(slots, plan[:len(slots)]) || plan[len(slots)].At < d {
		t.Error("PlanFor's slots are not Plan's up to d")
	}
	other, _ := PlanFor(d, a, lora, pyrand.NewPython(10), pyrand.NewNumPy(10))
	if reflect.DeepEqual(slots, other) {
		t.Error("another seed gave the same slots")
	}
}

func TestPlanForRefuses(t *testing.T) {
	py, np := pyrand.NewPython(1), pyrand.NewNumPy(1)
	_, err := PlanFor(time.Second, Arrival{Rate: math.Inf(1), Burstiness: 1}, LoRA{}, py, np)
	if err == nil || err.Error() != "--duration: an infinite --request-rate has no send times to stop at" {
		t.Errorf("infinite rate: err = %v", err)
	}
	if _, err := PlanFor(0, Arrival{Rate: 1, Burstiness: 1}, LoRA{}, py, np); err == nil {
		t.Error("d = 0 accepted")
	}
	if _, err := PlanFor(time.Second, Arrival{Rate: 0, Burstiness: 1}, LoRA{}, py, np); err == nil || !strings.HasPrefix(err.Error(), "--request-rate:") {
		t.Errorf("rate 0: err = %v", err)
	}
	bad := Ramp{Strategy: "linear", Start: 5, End: 1}
	if _, err := PlanFor(time.Second, Arrival{Rate: 1, Burstiness: 1, Ramp: &bad}, LoRA{}, py, np); err == nil || !strings.HasPrefix(err.Error(), "--ramp-up-start-rps:") {
		t.Errorf("bad ramp: err = %v", err)
	}
	neg := Ramp{Strategy: "linear", Start: 1, End: 5, Over: -time.Second}
	if _, err := Plan(3, Arrival{Burstiness: 1, Ramp: &neg}, LoRA{}, py, np); err == nil {
		t.Error("negative ramp length accepted")
	}
	ok := Ramp{Strategy: "linear", Start: 1, End: 5}
	if _, err := Plan(3, Arrival{Constant: true, Burstiness: 2, Ramp: &ok}, LoRA{}, py, np); err == nil || !strings.HasPrefix(err.Error(), "--burstiness") {
		t.Errorf("constant with burstiness on a ramp: err = %v", err)
	}
}

func TestCheckRamp(t *testing.T) {
	for _, c := range []struct {
		r    Ramp
		want string // "" for none, else the error's exact text
	}{
		{Ramp{Strategy: "linear", Start: 0, End: 5}, ""},
		{Ramp{Strategy: "exponential", Start: 1, End: 1}, ""},
		{Ramp{Strategy: "step", Start: 1, End: 2}, `--ramp-up-strategy: must be linear or exponential, got "step"`},
		{Ramp{Strategy: "", Start: 1, End: 2}, `--ramp-up-strategy: must be linear or exponential, got ""`},
		{Ramp{Strategy: "linear", Start: -1, End: 2}, "--ramp-up-start-rps: must be a finite number >= 0, got -1"},
		{Ramp{Strategy: "linear", Start: math.NaN(), End: 2}, "--ramp-up-start-rps: must be a finite number >= 0, got NaN"},
		{Ramp{Strategy: "linear", Start: 1, End: math.Inf(1)}, "--ramp-up-end-rps: must be a finite number >= 0, got +Inf"},
		{Ramp{Strategy: "linear", Start: 3, End: 2}, "--ramp-up-start-rps: must be <= --ramp-up-end-rps, got 3 > 2"},
		{Ramp{Strategy: "linear", Start: 0, End: 0}, "--ramp-up-end-rps: must be > 0, got 0"},
		{Ramp{Strategy: "exponential", Start: 0, End: 5}, "--ramp-up-start-rps: must be > 0 for an exponential ramp"},
	} {
		err := CheckRamp(c.r)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckRamp(%+v) = %v, want nil", c.r, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("CheckRamp(%+v) = %v, want %q", c.r, err, c.want)
		}
	}
}

func TestCapSteps(t *testing.T) {
	for _, c := range []struct {
		max  int
		over time.Duration
		want []time.Duration
	}{
		{4, 3 * time.Second, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}},
		{3, time.Second, []time.Duration{500 * time.Millisecond, time.Second}},
		{4, time.Second, []time.Duration{333333333, 666666666, time.Second}},
		{2, time.Minute, []time.Duration{time.Minute}},
		{1, time.Second, nil},
		{0, time.Second, nil},
		{5, 0, nil},
		{5, -time.Second, nil},
	} {
		if got := CapSteps(c.max, c.over); !reflect.DeepEqual(got, c.want) {
			t.Errorf("CapSteps(%d, %v) = %v, want %v", c.max, c.over, got, c.want)
		}
	}
}

// perSecond counts the slots with At in [k, k+1) s for k < secs.
func perSecond(slots []Slot, secs int) []int {
	counts := make([]int, secs)
	for _, s := range slots {
		if k := int(s.At / time.Second); k < secs {
			counts[k]++
		}
	}
	return counts
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
