package metrics

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"benchserve/internal/py/pyfmt"
	"benchserve/record"
)

// SLO is --goodput's bounds in milliseconds; a nil field has no bound.
type SLO struct{ TTFT, TPOT, ITL, E2E *float64 }

// Empty reports an SLO with no bound.
func (s SLO) Empty() bool { return s.TTFT == nil && s.TPOT == nil && s.ITL == nil && s.E2E == nil }

const goodputForm = "expected KEY:VALUE pairs, where KEY is ttft, tpot, itl or e2el and VALUE a number of milliseconds"

// ParseGoodput parses --goodput's items, vLLM's KEY:VALUE pairs: KEY one
// of ttft, tpot, itl (ours) and e2el, VALUE milliseconds >= 0. A key given
// twice keeps its last value, as vLLM's dict does.
func ParseGoodput(items []string) (SLO, error) {
	var s SLO
	for _, it := range items {
		k, v, ok := strings.Cut(it, ":")
		if !ok || strings.Contains(v, ":") {
			return SLO{}, fmt.Errorf("--goodput: %q: %s", it, goodputForm)
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return SLO{}, fmt.Errorf("--goodput: %q: %s", it, goodputForm)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return SLO{}, fmt.Errorf("--goodput: %q: the bound must be a number >= 0", it)
		}
		switch strings.TrimSpace(k) {
		case "ttft":
			s.TTFT = &f
		case "tpot":
			s.TPOT = &f
		case "itl":
			s.ITL = &f
		case "e2el":
			s.E2E = &f
		default:
			return SLO{}, fmt.Errorf("--goodput: unknown metric %q in %q (use ttft, tpot, itl or e2el)", k, it)
		}
	}
	return s, nil
}

// Good reports whether r meets every bound: it succeeded, its TTFT, TPOT
// ((latency − TTFT)/(output − 1), 0 for one output token, as vLLM) and
// latency are within theirs, and so is every gap between its chunks (its
// longest stall). Values in seconds are compared with bound/1000, as vLLM
// compares them.
func (s SLO) Good(r *record.Record) bool {
	if !r.Success {
		return false
	}
	within := func(v float64, bound *float64) bool { return bound == nil || v <= *bound/1000 }
	tpot := 0.0
	if r.OutputLen > 1 {
		tpot = (r.Latency - r.TTFT) / float64(r.OutputLen-1)
	}
	if !within(r.TTFT, s.TTFT) || !within(tpot, s.TPOT) || !within(r.Latency, s.E2E) {
		return false
	}
	if s.ITL != nil {
		for _, d := range r.Gaps.All() {
			if !within(d.Seconds(), s.ITL) {
				return false
			}
		}
	}
	return true
}

// Goodput is an SLO's figures over a run.
type Goodput struct {
	// Good counts the requests that met every bound, Total every request
	// sent (failures count, as not good).
	Good, Total int
	// RequestGoodput is Good per second of the run (vLLM's
	// request_goodput), TokenGoodput the good requests' output tokens per
	// second, Attainment Good/Total (0 of none).
	RequestGoodput, TokenGoodput, Attainment float64
}

// ComputeGoodput judges each record against s, for a run of dur seconds.
func ComputeGoodput(recs []record.Record, s SLO, dur float64) Goodput {
	g := Goodput{Total: len(recs)}
	tokens := 0
	for i := range recs {
		if s.Good(&recs[i]) {
			g.Good++
			tokens += recs[i].OutputLen
		}
	}
	if dur > 0 {
		g.RequestGoodput = float64(g.Good) / dur
		g.TokenGoodput = float64(tokens) / dur
	}
	if g.Total > 0 {
		g.Attainment = float64(g.Good) / float64(g.Total)
	}
	return g
}

// PercentileMetricNames are --percentile-metrics' names.
var PercentileMetricNames = []string{"ttft", "tpot", "itl", "e2el"}

// ParsePercentiles parses --percentile-metrics (vLLM's default
// "ttft,tpot,itl" when "") and --metric-percentiles (vLLM's default "99"
// when ""), dropping repeats.
func ParsePercentiles(metricsFlag, percentilesFlag string) (names []string, ps []float64, err error) {
	if metricsFlag == "" {
		metricsFlag = "ttft,tpot,itl"
	}
	if percentilesFlag == "" {
		percentilesFlag = "99"
	}
	for _, m := range strings.Split(metricsFlag, ",") {
		m = strings.TrimSpace(m)
		if !slices.Contains(PercentileMetricNames, m) {
			return nil, nil, fmt.Errorf("--percentile-metrics: unknown metric %q (use ttft, tpot, itl or e2el, comma-separated)", m)
		}
		if !slices.Contains(names, m) {
			names = append(names, m)
		}
	}
	for _, v := range strings.Split(percentilesFlag, ",") {
		p, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(p) || p < 0 || p > 100 {
			return nil, nil, fmt.Errorf("--metric-percentiles: %q is not a percentile between 0 and 100 (e.g. 50,90,99,99.9)", strings.TrimSpace(v))
		}
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	return names, ps, nil
}

// PercentileKey is vLLM's key for percentile p of a metric: p99_ttft_ms,
// p99.9_ttft_ms (p as Python's str(int(p)) when whole, else str(p)).
func PercentileKey(p float64, metric string) string {
	return "p" + PercentileWord(p) + "_" + metric + "_ms"
}

// PercentileWord is p as vLLM names it: "99", "99.9".
func PercentileWord(p float64) string {
	if p == math.Trunc(p) {
		return strconv.Itoa(int(p))
	}
	return pyfmt.Float(p)
}
