package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"benchserve/internal/py/pyjson"
	"benchserve/metrics"
)

// ABLimit is one --ab-max-regression: how much worse B may be than A in
// a figure, relative to A (Relative, in percent) or in the figure's unit.
type ABLimit struct {
	Expr     string
	Key      string
	Value    float64
	Relative bool
}

// ParseABLimit parses "KEY:NUMBER%" or "KEY:NUMBER" against the keys an
// A/B comparison has.
func ParseABLimit(expr string, keys []string) (ABLimit, error) {
	key, v, ok := strings.Cut(expr, ":")
	key, v = strings.TrimSpace(key), strings.TrimSpace(v)
	if !ok || key == "" || v == "" {
		return ABLimit{}, fmt.Errorf("--ab-max-regression %q: expected KEY:PERCENT%% or KEY:NUMBER (e.g. p99_ttft_ms:5%%)", expr)
	}
	if !slices.Contains(keys, key) {
		return ABLimit{}, fmt.Errorf("--ab-max-regression %q: %q is not a figure of the comparison (%s)", expr, key, strings.Join(keys, ", "))
	}
	l := ABLimit{Expr: expr, Key: key}
	if s, cut := strings.CutSuffix(v, "%"); cut {
		l.Relative, v = true, strings.TrimSpace(s)
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return ABLimit{}, fmt.Errorf("--ab-max-regression %q: %q is not a number >= 0", expr, v)
	}
	l.Value = f
	return l, nil
}

// ABOutcome is a limit checked against a comparison: Bound is how much
// worse B is at least (the interval's end nearest "no worse", in the
// limit's unit; NaN when the figure has no interval).
type ABOutcome struct {
	ABLimit
	Bound  float64
	Failed bool
}

// CheckAB checks each limit: it fails when even the interval's bound
// nearest to A, not its point, is worse than the limit, so that noise
// alone never fails it. A figure without an interval (too few requests)
// does not fail.
func CheckAB(limits []ABLimit, ab metrics.AB) []ABOutcome {
	var out []ABOutcome
	for _, l := range limits {
		o := ABOutcome{ABLimit: l, Bound: math.NaN()}
		for _, f := range ab.Figures {
			if f.Key != l.Key || f.TooFew != "" {
				continue
			}
			// Worse is up for a latency, down for a throughput.
			lo, hi := f.Low, f.High
			if l.Relative {
				lo, hi = f.PctLow, f.PctHigh
			}
			o.Bound = lo
			if !f.Lower {
				o.Bound = -hi
			}
			o.Failed = o.Bound > l.Value
		}
		out = append(out, o)
	}
	return out
}

// ABFailed lists the failed limits' expressions.
func ABFailed(os []ABOutcome) []string {
	var bad []string
	for _, o := range os {
		if o.Failed {
			bad = append(bad, o.Expr)
		}
	}
	return bad
}

// PrintAB writes the paired section: per figure A, B, B − A, relative,
// the interval, the verdict; then the limits.
func PrintAB(w io.Writer, ab metrics.AB, outcomes []ABOutcome) error {
	var b strings.Builder
	b.WriteString("\n")
	// Centred as rule centres, counting the minus sign as one column.
	b.WriteString(strings.Repeat("=", 18) + " A/B (B − A) " + strings.Repeat("=", 19) + "\n")
	fmt.Fprintf(&b, "Pairs: %d (request 2k and 2k+1 of the plan, one to each side), bootstrap of %d resamples in blocks of %d consecutive pairs\n", ab.Pairs, ab.Resamples, ab.Block)
	fmt.Fprintf(&b, "Intervals: simultaneous %g%% (all hold together: each spans its resampled differences from %.2f%% to %.2f%%)\n", 100*metrics.ABConfidence, 100*ab.Tail, 100-100*ab.Tail)
	fmt.Fprintf(&b, "%-32s %11s %11s %11s %8s  %-34s %s\n", "Figure", "A", "B", "B − A", "%", "interval of B − A (and %)", "verdict")
	for _, f := range ab.Figures {
		ci := "–"
		if f.TooFew == "" {
			ci = fmt.Sprintf("[%s, %s] (%s, %s)", signed(f.Low), signed(f.High), pctText(f.PctLow), pctText(f.PctHigh))
		}
		v := f.Verdict
		if f.TooFew != "" {
			v += ": " + f.TooFew
		}
		fmt.Fprintf(&b, "%-32s %11s %11s %11s %8s  %-34s %s\n", f.Label+":", F(f.A), F(f.B), signed(f.Diff), pctText(f.Pct), ci, v)
	}
	for _, o := range outcomes {
		state := "passed"
		if o.Failed {
			state = "FAILED"
		}
		unit := ""
		if o.Relative {
			unit = "%"
		}
		bound := "no interval"
		if !math.IsNaN(o.Bound) {
			bound = fmt.Sprintf("B is worse by at least %s%s", F(o.Bound), unit)
		}
		fmt.Fprintf(&b, "--ab-max-regression %s: %s (%s)\n", o.Expr, state, bound)
	}
	b.WriteString(strings.Repeat("=", 50) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func signed(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	if v >= 0 {
		return "+" + F(v)
	}
	return F(v)
}

func pctText(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return fmt.Sprintf("%+.1f%%", v)
}

// ABKey is the comparison as the "ab" key of B's result line.
func ABKey(ab metrics.AB, outcomes []ABOutcome) []byte {
	o := &pyjson.Object{}
	o.Set("pairs", pyjson.Int(ab.Pairs))
	o.Set("block_pairs", pyjson.Int(ab.Block))
	o.Set("resamples", pyjson.Int(ab.Resamples))
	o.Set("confidence", pyjson.Float(metrics.ABConfidence))
	o.Set("simultaneous", pyjson.Bool(true))
	o.Set("tail", pyjson.Float(ab.Tail))
	num := func(v float64) []byte {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return []byte("null")
		}
		return pyjson.Float(v)
	}
	figs := []byte{'['}
	for i, f := range ab.Figures {
		if i > 0 {
			figs = append(figs, ", "...)
		}
		x := &pyjson.Object{}
		x.Set("key", pyjson.String(f.Key))
		x.Set("a", num(f.A))
		x.Set("b", num(f.B))
		x.Set("diff", num(f.Diff))
		x.Set("pct", num(f.Pct))
		x.Set("ci95_low", num(f.Low))
		x.Set("ci95_high", num(f.High))
		x.Set("pct_ci95_low", num(f.PctLow))
		x.Set("pct_ci95_high", num(f.PctHigh))
		x.Set("lower_is_better", pyjson.Bool(f.Lower))
		x.Set("verdict", pyjson.String(f.Verdict))
		if f.TooFew != "" {
			x.Set("too_few", pyjson.String(f.TooFew))
		}
		figs = x.Append(figs)
	}
	o.Set("figures", append(figs, ']'))
	if len(outcomes) > 0 {
		rs := []byte{'['}
		for i, oc := range outcomes {
			if i > 0 {
				rs = append(rs, ", "...)
			}
			x := &pyjson.Object{}
			x.Set("limit", pyjson.String(oc.Expr))
			x.Set("bound", num(oc.Bound))
			x.Set("failed", pyjson.Bool(oc.Failed))
			rs = x.Append(rs)
		}
		o.Set("regressions", append(rs, ']'))
	}
	return o.Bytes()
}
