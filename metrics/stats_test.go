package metrics

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// u is the unit in the last place of 1.0; tiny is half of it, so 1+tiny
// rounds back to 1 (ties to even) when added alone.
const (
	u    = 0x1p-52
	tiny = 0x1p-53
)

func naiveSum(xs []float64) float64 {
	s := 0.0
	for _, v := range xs {
		s += v
	}
	return s
}

// oneThenTiny is [1, tiny, tiny, ...] of length n.
func oneThenTiny(n int) []float64 {
	xs := make([]float64, n)
	xs[0] = 1
	for i := 1; i < n; i++ {
		xs[i] = tiny
	}
	return xs
}

func TestPairwiseSum(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		// want is worked out from numpy's pairwise_sum
		// (numpy/_core/src/umath/loops_utils.h.src).
		want float64
	}{
		// n < 8: a plain left-to-right loop.
		{"n=5 plain loop", []float64{1, tiny, tiny, tiny, tiny}, 1},
		// n = 10: r0..r7 = a0..a7 (loop body never runs), then
		// ((1+tiny)+(2tiny)) + ((2tiny)+(2tiny)) = 1 + 3u (1+tiny ties to 1),
		// then + tiny twice: 1+3u+tiny ties to even 1+4u, 1+4u+tiny stays.
		{"n=10 accumulators and remainder", oneThenTiny(10), 1 + 4*u},
		// n = 16: r0 = 1+tiny = 1, r1..r7 = 2tiny = u each:
		// ((1+u)+2u) + (2u+2u) = 1+7u.
		{"n=16 eight accumulators", oneThenTiny(16), 1 + 7*u},
		// n = 200 > 128: split at 100 rounded down to a multiple of 8 = 96.
		// Left [0,96): r0 = 1 (11 tiny adds each tie back to 1), r1..r7 = 12
		// tiny = 6u each: ((1+6u)+12u) + 24u = 1+42u. Right [96,200): 104 tiny
		// = 52u exactly. Total 1+94u. (A split at 100 would give 1+92u.)
		{"n=200 split at 96", oneThenTiny(200), 1 + 94*u},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := pairwiseSum(tc.xs); got != tc.want {
				t.Errorf("pairwiseSum = %x, want %x", got, tc.want)
			}
		})
	}
	// The n > 128 case must differ from the naive sum, or it proves nothing.
	if xs := oneThenTiny(200); naiveSum(xs) == pairwiseSum(xs) {
		t.Errorf("naive and pairwise sums agree (%x); the case does not test pairwise summation", naiveSum(xs))
	}
}

func TestMeanAndStdUsePairwiseSum(t *testing.T) {
	xs := oneThenTiny(200)
	if got, want := mean(xs), (1+94*u)/200; got != want {
		t.Errorf("mean = %x, want %x", got, want)
	}
	// std of [1, 2, 3, 4]: mean 2.5, squared deviations 2.25+0.25+0.25+2.25
	// = 5, over n = 1.25.
	st := Describe([]float64{4, 1, 3, 2})
	if st.Mean != 2500 || st.Std != math.Sqrt(1.25)*1000 {
		t.Errorf("mean, std = %v, %v; want 2500, %v", st.Mean, st.Std, math.Sqrt(1.25)*1000)
	}
}

func TestMedian(t *testing.T) {
	// Variables, not constants: Go folds constant expressions exactly,
	// while NumPy rounds 0.1+0.2 first (giving 0.15000000000000002).
	p1, p2 := 0.1, 0.2
	tests := []struct {
		xs   []float64
		want float64
	}{
		{[]float64{0.3, 0.1, 0.2}, 0.2},            // odd: the middle value
		{[]float64{0.2, 0.1}, (p1 + p2) / 2},       // even: mean of the two middle values
		{[]float64{4, 1, 3, 2}, 2.5},               // even, unsorted input
		{[]float64{0.25}, 0.25},                    // one value
		{[]float64{5, 5, 1, 9, 9, 9}, (5 + 9) / 2}, // ties
	}
	for _, tc := range tests {
		if got := Describe(tc.xs).Median; got != tc.want*1000 {
			t.Errorf("median(%v) = %v, want %v", tc.xs, got, tc.want*1000)
		}
	}
}

func TestPercentileLinear(t *testing.T) {
	// Sorted: 0.01 0.02 0.03 0.04 0.05 0.1 0.4; n-1 = 6.
	xs := []float64{0.05, 0.4, 0.01, 0.1, 0.03, 0.02, 0.04}
	a, b := 0.1, 0.4
	lo := func(t float64) float64 { return a + float64((b-a)*t) }
	hi := func(t float64) float64 { return b - float64((b-a)*float64(1-t)) }

	// p90: virtual index 6*0.9 = 5.4, t = 0.4... < 0.5: numpy's _lerp uses
	// a + (b-a)*t.
	t90 := float64(6)*(90.0/100) - 5
	// p95: virtual index 5.7, t >= 0.5: b - (b-a)*(1-t).
	t95 := float64(6)*(95.0/100) - 5
	if !(t90 < 0.5 && t95 >= 0.5) {
		t.Fatalf("bad test setup: t90=%v t95=%v", t90, t95)
	}
	// The two forms must differ here, or the test cannot tell them apart.
	if lo(t90) == hi(t90) || lo(t95) == hi(t95) {
		t.Fatalf("bad test setup: the lerp forms agree")
	}
	st := Describe(xs)
	if st.P90 != lo(t90)*1000 {
		t.Errorf("P90 = %v, want %v", st.P90, lo(t90)*1000)
	}
	if st.P95 != hi(t95)*1000 {
		t.Errorf("P95 = %v, want %v", st.P95, hi(t95)*1000)
	}
	// Known NumPy outputs for these inputs (numpy 1.24 and later).
	if st.P90 != 0.22000000000000014*1000 || st.P95 != 0.3099999999999998*1000 || st.P99 != 0.3819999999999999*1000 {
		t.Errorf("P90, P95, P99 = %v, %v, %v; want NumPy's", st.P90, st.P95, st.P99)
	}
	if st.Max != 400 {
		t.Errorf("Max = %v, want 400", st.Max)
	}
}

func TestPercentileExactRank(t *testing.T) {
	// n = 11: p90 falls on index 10*0.9 = 9 exactly, p95 on 9.5 (t = 0.5,
	// the b-side form: 10 - 1*0.5 = 9.5).
	xs := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	st := Describe(xs)
	if st.P90 != 9000 || st.P95 != 9500 || st.Median != 5000 {
		t.Errorf("P90, P95, median = %v, %v, %v; want 9000, 9500, 5000", st.P90, st.P95, st.Median)
	}
}

func TestDescribeOneValue(t *testing.T) {
	st := Describe([]float64{0.125})
	want := Stats{Mean: 125, Median: 125, Std: 0, P90: 125, P95: 125, P99: 125, Max: 125}
	if !sameStats(st, want) {
		t.Errorf("Describe([0.125]) = %+v, want %+v", st, want)
	}
}

func TestDescribeEmpty(t *testing.T) {
	if st := Describe(nil); !sameStats(st, Stats{}) {
		t.Errorf("Describe(nil) = %+v, want zeros", st)
	}
}

func TestDescribeKeepsInput(t *testing.T) {
	xs := []float64{3, 1, 2}
	Describe(xs)
	if xs[0] != 3 || xs[1] != 1 || xs[2] != 2 {
		t.Errorf("Describe changed its input: %v", xs)
	}
}

// TestNumPyGolden compares with outputs NumPy produced (testdata/numpy_stats.txt
// says how).
func TestNumPyGolden(t *testing.T) {
	f, err := os.Open("testdata/numpy_stats.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var lines [][]float64
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		var row []float64
		for _, w := range strings.Fields(sc.Text()) {
			v, err := strconv.ParseFloat(w, 64)
			if err != nil {
				t.Fatal(err)
			}
			row = append(row, v)
		}
		lines = append(lines, row)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(lines) < 2 || len(lines)%2 != 0 {
		t.Fatalf("golden file has %d data lines, want pairs", len(lines))
	}
	names := []string{"mean", "median", "std", "p90", "p95", "p99", "max", "sum"}
	for i := 0; i < len(lines); i += 2 {
		xs, want := lines[i], lines[i+1]
		st := Describe(xs)
		got := []float64{st.Mean, st.Median, st.Std, st.P90, st.P95, st.P99, st.Max, sum(xs)}
		for k := range got {
			if got[k] != want[k] {
				t.Errorf("n=%d %s = %x, NumPy %x", len(xs), names[k], got[k], want[k])
			}
		}
	}
}
