package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"benchserve/record"
)

// abRec is a successful request of ttft and step ms per gap, n tokens,
// ending at end seconds.
func abRec(ttft, step float64, n int, end float64) *record.Record {
	r := &record.Record{Sent: true, Success: true, TTFT: ttft / 1000, OutputLen: n, End: end}
	var g []time.Duration
	for range n - 1 {
		g = append(g, time.Duration(step*float64(time.Millisecond)))
	}
	r.Gaps = record.GapsOf(g...)
	r.Latency = r.TTFT + float64(n-1)*step/1000
	return r
}

// abPairs makes n pairs whose A side draws TTFT and step from rng, and
// whose B side is bOf(A's values, rng).
func abPairs(n int, seed uint64, bOf func(ttft, step float64, rng *rand.Rand) (float64, float64)) []ABPair {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []ABPair
	for k := range n {
		ttft, step := 20+10*rng.Float64(), 5+rng.Float64()
		bt, bs := bOf(ttft, step, rng)
		end := float64(k) / 10
		out = append(out, ABPair{A: abRec(ttft, step, 8, end), B: abRec(bt, bs, 8, end)})
	}
	return out
}

func figure(t *testing.T, ab AB, key string) ABFigure {
	t.Helper()
	for _, f := range ab.Figures {
		if f.Key == key {
			return f
		}
	}
	t.Fatalf("no figure %s in %+v", key, ab.Figures)
	return ABFigure{}
}

func TestComputeAB(t *testing.T) {
	dur := [2]float64{60, 60}
	iid := func(_, _ float64, rng *rand.Rand) (float64, float64) { return 20 + 10*rng.Float64(), 5 + rng.Float64() }
	cases := []struct {
		name  string
		pairs []ABPair
		// want: verdict by key ("" not checked).
		want map[string]string
	}{
		{"B equal to A in every pair", abPairs(600, 1, func(a, s float64, _ *rand.Rand) (float64, float64) { return a, s }),
			map[string]string{"mean_ttft_ms": ABSame, "p99_ttft_ms": ABSame, "mean_itl_ms": ABSame, "output_throughput": ABSame}},
		{"B 2 ms later to its first token in every pair", abPairs(600, 2, func(a, s float64, _ *rand.Rand) (float64, float64) { return a + 2, s }),
			map[string]string{"mean_ttft_ms": ABWorse, "median_ttft_ms": ABWorse, "p99_ttft_ms": ABWorse, "mean_itl_ms": ABSame, "mean_e2e_latency_ms": ABWorse}},
		{"B's decode 10% faster", abPairs(600, 3, func(a, s float64, _ *rand.Rand) (float64, float64) { return a, s / 1.1 }),
			map[string]string{"mean_ttft_ms": ABSame, "mean_itl_ms": ABBetter, "median_tpot_ms": ABBetter, "p99_itl_ms": ABBetter}},
		{"independent draws from one distribution", abPairs(600, 4, iid),
			map[string]string{"mean_ttft_ms": ABSame, "median_ttft_ms": ABSame, "mean_itl_ms": ABSame, "mean_tpot_ms": ABSame, "mean_e2e_latency_ms": ABSame}},
		{"too few for a P99", abPairs(40, 5, iid),
			map[string]string{"p99_ttft_ms": ABTooFew, "p99_tpot_ms": ABTooFew, "mean_ttft_ms": ABSame}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ab := ComputeAB(c.pairs, dur, ABOptions{Seed: 1, Resamples: 500})
			if ab.Pairs != len(c.pairs) || ab.Block != ABBlock(len(c.pairs)) {
				t.Fatalf("pairs %d block %d", ab.Pairs, ab.Block)
			}
			for key, want := range c.want {
				f := figure(t, ab, key)
				if f.Verdict != want {
					t.Errorf("%s: verdict %q, want %q (diff %v, interval [%v, %v], %s)", key, f.Verdict, want, f.Diff, f.Low, f.High, f.TooFew)
				}
				if want != ABTooFew && !(f.Low <= f.Diff && f.Diff <= f.High) {
					t.Errorf("%s: interval [%v, %v] leaves out its difference %v", key, f.Low, f.High, f.Diff)
				}
			}
		})
	}
}

func TestComputeABShift(t *testing.T) {
	// A constant shift in every pair is a difference with no noise: the
	// interval is the shift itself, in ms and relative to A.
	pairs := abPairs(100, 9, func(a, s float64, _ *rand.Rand) (float64, float64) { return a + 3, s })
	f := figure(t, ComputeAB(pairs, [2]float64{10, 10}, ABOptions{Seed: 3, Resamples: 200}), "mean_ttft_ms")
	if math.Abs(f.Diff-3) > 1e-9 || math.Abs(f.Low-3) > 1e-9 || math.Abs(f.High-3) > 1e-9 {
		t.Fatalf("diff %v interval [%v, %v], want 3 [3, 3]", f.Diff, f.Low, f.High)
	}
	if want := 300 / f.A; math.Abs(f.Pct-want) > 1e-9 || math.Abs(f.PctLow-want) > 1e-9 {
		t.Fatalf("pct %v low %v, want %v", f.Pct, f.PctLow, want)
	}
}

func TestComputeABCoversTrueRatio(t *testing.T) {
	// B's decode 10% slower with noise of its own in every request: the
	// relative interval of the ITL and TPOT covers +10%.
	pairs := abPairs(300, 11, func(a, s float64, rng *rand.Rand) (float64, float64) {
		return a, (5 + rng.Float64()) * 1.1
	})
	ab := ComputeAB(pairs, [2]float64{30, 30}, ABOptions{Seed: 5})
	for _, key := range []string{"mean_itl_ms", "median_itl_ms", "mean_tpot_ms", "median_tpot_ms"} {
		f := figure(t, ab, key)
		if f.Verdict != ABWorse || !(f.PctLow < 10 && 10 < f.PctHigh) {
			t.Errorf("%s: %s, %+.2f%% [%+.2f%%, %+.2f%%], want B worse covering +10%%", key, f.Verdict, f.Pct, f.PctLow, f.PctHigh)
		}
	}
}

func TestComputeABSeeded(t *testing.T) {
	pairs := abPairs(200, 4, func(_, _ float64, rng *rand.Rand) (float64, float64) { return 20 + 10*rng.Float64(), 5 + rng.Float64() })
	a := figure(t, ComputeAB(pairs, [2]float64{20, 20}, ABOptions{Seed: 1, Resamples: 300}), "mean_ttft_ms")
	b := figure(t, ComputeAB(pairs, [2]float64{20, 20}, ABOptions{Seed: 1, Resamples: 300}), "mean_ttft_ms")
	c := figure(t, ComputeAB(pairs, [2]float64{20, 20}, ABOptions{Seed: 2, Resamples: 300}), "mean_ttft_ms")
	if a != b {
		t.Fatalf("same seed, different intervals: %+v, %+v", a, b)
	}
	if a.Low == c.Low {
		t.Fatalf("seeds 1 and 2 gave the same interval %v", a.Low)
	}
}

func TestComputeABThroughputAndGoodput(t *testing.T) {
	// B's requests give twice the tokens and all meet a TTFT bound A's
	// miss: B better on both throughputs.
	var pairs []ABPair
	for k := range 50 {
		pairs = append(pairs, ABPair{A: abRec(50+float64(k%7), 5, 8, float64(k)/10), B: abRec(10+float64(k%5), 5, 16, float64(k)/10)})
	}
	bound := 30.0
	ab := ComputeAB(pairs, [2]float64{5, 5}, ABOptions{Seed: 1, Resamples: 300, Goodput: &SLO{TTFT: &bound}})
	for _, key := range []string{"output_throughput", "request_goodput"} {
		if f := figure(t, ab, key); f.Verdict != ABBetter {
			t.Errorf("%s: %+v", key, f)
		}
	}
	if f := figure(t, ab, "output_throughput"); math.Abs(f.A-8*50/5.0) > 1e-9 || math.Abs(f.B-16*50/5.0) > 1e-9 {
		t.Errorf("throughputs %v %v, want over the 5 s given", f.A, f.B)
	}
}

func TestABBlock(t *testing.T) {
	for _, c := range []struct{ n, want int }{{0, 1}, {1, 1}, {8, 3}, {150, 12}, {1000, 32}, {10000, 100}} {
		if got := ABBlock(c.n); got != c.want {
			t.Errorf("ABBlock(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

func TestDrawBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ n, block int }{{10, 1}, {10, 3}, {7, 7}, {100, 5}} {
		counts := make([]int32, c.n)
		for range 50 {
			drawBlocks(rng, counts, c.block)
			total := 0
			for _, x := range counts {
				total += int(x)
			}
			if total != c.n {
				t.Fatalf("n %d block %d: drew %d pairs", c.n, c.block, total)
			}
		}
	}
}
