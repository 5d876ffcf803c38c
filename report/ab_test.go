package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"benchserve/metrics"
)

func TestParseABLimit(t *testing.T) {
	keys := metrics.ABKeys(false)
	for _, c := range []struct {
		expr string
		want ABLimit
		err  string
	}{
		{"p99_ttft_ms:5%", ABLimit{Expr: "p99_ttft_ms:5%", Key: "p99_ttft_ms", Value: 5, Relative: true}, ""},
		{" mean_itl_ms : 0.5 ", ABLimit{Expr: " mean_itl_ms : 0.5 ", Key: "mean_itl_ms", Value: 0.5}, ""},
		{"output_throughput:10 %", ABLimit{Expr: "output_throughput:10 %", Key: "output_throughput", Value: 10, Relative: true}, ""},
		{"p99_ttft_ms", ABLimit{}, "expected KEY:PERCENT%"},
		{"p99_ttft:5%", ABLimit{}, `"p99_ttft" is not a figure`},
		{"request_goodput:5%", ABLimit{}, "is not a figure"},
		{"p99_ttft_ms:x%", ABLimit{}, "is not a number"},
		{"p99_ttft_ms:-1", ABLimit{}, "is not a number >= 0"},
	} {
		got, err := ParseABLimit(c.expr, keys)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want %q", c.expr, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%q: %+v, %v; want %+v", c.expr, got, err, c.want)
		}
	}
}

func TestCheckAB(t *testing.T) {
	ab := metrics.AB{Figures: []metrics.ABFigure{
		{Key: "p99_ttft_ms", Lower: true, Low: 3, High: 9, PctLow: 6, PctHigh: 18},
		{Key: "mean_itl_ms", Lower: true, Low: -1, High: 2, PctLow: -4, PctHigh: 8},
		{Key: "output_throughput", Low: -30, High: -10, PctLow: -12, PctHigh: -4},
		{Key: "p99_itl_ms", Lower: true, TooFew: "too few", Low: math.NaN(), High: math.NaN()},
	}}
	for _, c := range []struct {
		limit  ABLimit
		failed bool
		bound  float64
	}{
		{ABLimit{Key: "p99_ttft_ms", Value: 5, Relative: true}, true, 6},   // at least 6% worse
		{ABLimit{Key: "p99_ttft_ms", Value: 6, Relative: true}, false, 6},  // not beyond 6%
		{ABLimit{Key: "p99_ttft_ms", Value: 2}, true, 3},                   // at least 3 ms worse
		{ABLimit{Key: "mean_itl_ms", Value: 0, Relative: true}, false, -4}, // may be better: noise
		{ABLimit{Key: "output_throughput", Value: 3, Relative: true}, true, 4},
		{ABLimit{Key: "output_throughput", Value: 5, Relative: true}, false, 4},
		{ABLimit{Key: "p99_itl_ms", Value: 0}, false, math.NaN()},
	} {
		got := CheckAB([]ABLimit{c.limit}, ab)[0]
		if got.Failed != c.failed || !(got.Bound == c.bound || math.IsNaN(got.Bound) && math.IsNaN(c.bound)) {
			t.Errorf("%+v: failed %v bound %v, want %v %v", c.limit, got.Failed, got.Bound, c.failed, c.bound)
		}
	}
}

func TestPrintAB(t *testing.T) {
	ab := metrics.AB{Pairs: 3, Block: 2, Resamples: 10, Tail: 0.01, Figures: []metrics.ABFigure{
		{Key: "mean_ttft_ms", Label: "Mean TTFT (ms)", Lower: true, A: 10, B: 12, Diff: 2, Pct: 20, Low: 1, High: 3, PctLow: 10, PctHigh: 30, Verdict: metrics.ABWorse},
	}}
	var b bytes.Buffer
	if err := PrintAB(&b, ab, []ABOutcome{{ABLimit: ABLimit{Expr: "mean_ttft_ms:5%", Relative: true}, Bound: 10, Failed: true}}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"================== A/B (B − A) ===================\n", "Mean TTFT (ms):", "+2.00", "+20.0%", "[+1.00, +3.00] (+10.0%, +30.0%)", "B worse",
		"--ab-max-regression mean_ttft_ms:5%: FAILED (B is worse by at least 10.00%)"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if k := string(ABKey(ab, nil)); !strings.Contains(k, `"key": "mean_ttft_ms"`) || !strings.Contains(k, `"verdict": "B worse"`) || !strings.Contains(k, `"ci95_low": 1.0`) {
		t.Errorf("ABKey: %s", k)
	}
}
