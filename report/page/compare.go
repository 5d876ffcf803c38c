package page

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"

	"benchserve/record"
)

// Row is one figure of a comparison: A's, B's, their difference and,
// where records allow, a bootstrap 95% interval of the difference.
type Row struct {
	Key    string   `json:"key"`
	Label  string   `json:"label"`
	A      *float64 `json:"a"`
	B      *float64 `json:"b"`
	Diff   *float64 `json:"diff"`
	Pct    *float64 `json:"pct"`
	CILow  *float64 `json:"ci95_low,omitempty"`
	CIHigh *float64 `json:"ci95_high,omitempty"`
	// Beyond: the interval excludes 0, a difference larger than the runs'
	// own noise.
	Beyond *bool `json:"beyond_noise,omitempty"`
	// Lower is better for this figure (latencies, failures).
	Lower bool `json:"lower_is_better"`
}

// Compared is two runs to compare: their result lines and, optionally,
// their records.
type Compared struct {
	NameA, NameB string
	A, B         Line
	RA, RB       []record.Record
	Made         string
}

var compareFigures = []struct {
	key, label string
	lower      bool
}{
	{"completed", "completed requests", false}, {"failed", "failed requests", true}, {"duration", "duration (s)", true},
	{"request_throughput", "request throughput (req/s)", false}, {"output_throughput", "output throughput (tok/s)", false},
	{"total_throughput", "total throughput (tok/s)", false}, {"request_goodput", "request goodput (req/s)", false},
	{"mean_ttft_ms", "mean TTFT (ms)", true}, {"median_ttft_ms", "median TTFT (ms)", true}, {"p99_ttft_ms", "P99 TTFT (ms)", true},
	{"mean_tpot_ms", "mean TPOT (ms)", true}, {"p99_tpot_ms", "P99 TPOT (ms)", true},
	{"mean_itl_ms", "mean ITL (ms)", true}, {"median_itl_ms", "median ITL (ms)", true}, {"p99_itl_ms", "P99 ITL (ms)", true},
	{"mean_e2e_latency_ms", "mean E2E latency (ms)", true}, {"median_e2e_latency_ms", "median E2E latency (ms)", true},
	{"p99_e2e_latency_ms", "P99 E2E latency (ms)", true},
}

// Rows compares c figure by figure; with both runs' records, the
// latencies get a bootstrap interval of B − A.
func Rows(c *Compared) []Row {
	boot := map[string][2]float64{}
	if len(c.RA) > 0 && len(c.RB) > 0 {
		boot = bootstrap(c.RA, c.RB)
	}
	var rows []Row
	for _, f := range compareFigures {
		r := Row{Key: f.key, Label: f.label, Lower: f.lower}
		a, okA := c.A.Num[f.key]
		b, okB := c.B.Num[f.key]
		if !okA && !okB {
			continue
		}
		okA, okB = okA && finite(a), okB && finite(b)
		if okA {
			r.A = &a
		}
		if okB {
			r.B = &b
		}
		if okA && okB {
			d := b - a
			r.Diff = &d
			if a != 0 {
				p := 100 * d / math.Abs(a)
				r.Pct = &p
			}
		}
		if ci, ok := boot[f.key]; ok {
			lo, hi := ci[0], ci[1]
			beyond := lo > 0 || hi < 0
			r.CILow, r.CIHigh, r.Beyond = &lo, &hi, &beyond
		}
		rows = append(rows, r)
	}
	return rows
}

// bootstrapRounds resamples each run this many times.
const bootstrapRounds = 400

// bootstrap is the 95% percentile interval of B − A for the latency
// figures the records give (TTFT, E2E and ITL: mean, median, P99), each
// run's successful requests (or gaps) resampled with replacement, with a
// fixed seed so that a comparison is repeatable.
func bootstrap(ra, rb []record.Record) map[string][2]float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	type set struct{ a, b []float64 }
	sets := map[string]set{}
	la, lb := latenciesMs(ra), latenciesMs(rb)
	for i, key := range []string{"ttft", "itl", "e2e_latency"} {
		sets[key] = set{la[i].v, lb[i].v}
	}
	out := map[string][2]float64{}
	for name, s := range sets {
		if len(s.a) < 2 || len(s.b) < 2 {
			continue
		}
		a, b := thin(s.a, 200000), thin(s.b, 200000)
		diffs := map[string][]float64{}
		for range bootstrapRounds {
			ma, qa := resample(rng, a)
			mb, qb := resample(rng, b)
			diffs["mean"] = append(diffs["mean"], mb-ma)
			diffs["median"] = append(diffs["median"], qb[0]-qa[0])
			diffs["p99"] = append(diffs["p99"], qb[1]-qa[1])
		}
		for stat, d := range diffs {
			sort.Float64s(d)
			out[stat+"_"+name+"_ms"] = [2]float64{d[int(0.025*float64(len(d)))], d[int(math.Ceil(0.975*float64(len(d))))-1]}
		}
	}
	return out
}

// thin keeps at most n of sorted v, evenly spread (the distribution's
// shape is kept; the interval is then a little wider, never narrower).
func thin(v []float64, n int) []float64 {
	if len(v) <= n {
		return v
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = v[i*len(v)/n]
	}
	return out
}

// resample draws len(v) of sorted v with replacement and returns the
// resample's mean, median and P99 (nearest rank): counting the draws per
// index keeps it linear, as v is sorted.
func resample(rng *rand.Rand, v []float64) (mean float64, q [2]float64) {
	n := len(v)
	counts := make([]int32, n)
	sum := 0.0
	for range n {
		i := rng.IntN(n)
		counts[i]++
		sum += v[i]
	}
	ranks := [2]int{n / 2, int(math.Ceil(0.99*float64(n))) - 1}
	seen, k := 0, 0
	for i, c := range counts {
		seen += int(c)
		for k < 2 && seen > ranks[k] {
			q[k] = v[i]
			k++
		}
	}
	return sum / float64(n), q
}

// Text writes the comparison as a table.
func Text(w io.Writer, c *Compared, rows []Row) error {
	f := func(p *float64) string {
		if p == nil {
			return "–"
		}
		return fmt2(*p)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "A: %s\nB: %s\n", c.NameA, c.NameB)
	fmt.Fprintf(&b, "%-30s %12s %12s %12s %9s  %s\n", "figure", "A", "B", "B − A", "change", "95% interval of B − A (from the records)")
	b.WriteString(strings.Repeat("-", 110) + "\n")
	for _, r := range rows {
		pct := "–"
		if r.Pct != nil {
			pct = fmt.Sprintf("%+.1f%%", *r.Pct)
		}
		ci := ""
		if r.CILow != nil {
			ci = fmt.Sprintf("[%s, %s]", fmt2(*r.CILow), fmt2(*r.CIHigh))
			if *r.Beyond {
				ci += " beyond noise, " + better(r)
			} else {
				ci += " within noise"
			}
		}
		fmt.Fprintf(&b, "%-30s %12s %12s %12s %9s  %s\n", r.Label, f(r.A), f(r.B), f(r.Diff), pct, ci)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// better says which way a difference beyond noise goes.
func better(r Row) string {
	if r.Diff == nil {
		return ""
	}
	if (*r.Diff < 0) == r.Lower {
		return "B better"
	}
	return "B worse"
}

// ComparePage is the comparison as a page: the table, and with records
// both runs' distributions overlaid.
func ComparePage(c *Compared, rows []Row) []byte {
	var body strings.Builder
	fmt.Fprintf(&body, `<section id="compare"><h2>A: %s &nbsp; B: %s</h2><table class="compare"><thead><tr><th>figure</th><th>A</th><th>B</th><th>B − A</th><th>change</th><th>95%% interval of B − A</th></tr></thead><tbody>`,
		esc(filepath.Base(c.NameA)), esc(filepath.Base(c.NameB)))
	f := func(p *float64) string {
		if p == nil {
			return "–"
		}
		return fmt2(*p)
	}
	for _, r := range rows {
		pct, ci, cls := "–", "–", ""
		if r.Pct != nil {
			pct = fmt.Sprintf("%+.1f%%", *r.Pct)
		}
		if r.CILow != nil {
			ci = fmt.Sprintf("[%s, %s] %s", fmt2(*r.CILow), fmt2(*r.CIHigh), map[bool]string{true: "beyond noise", false: "within noise"}[*r.Beyond])
			if *r.Beyond {
				cls = map[string]string{"B better": "better", "B worse": "worse"}[better(r)]
			}
		}
		fmt.Fprintf(&body, `<tr class="%s"><td>%s</td><td class="num">%s</td><td class="num">%s</td><td class="num">%s</td><td class="num">%s</td><td>%s</td></tr>`,
			cls, esc(r.Label), f(r.A), f(r.B), f(r.Diff), pct, esc(ci))
	}
	body.WriteString(`</tbody></table></section>`)
	var charts []Chart
	if len(c.RA) > 0 && len(c.RB) > 0 {
		body.WriteString(`<section id="distributions"><h2>Distributions, A and B</h2>`)
		la, lb := latenciesMs(c.RA), latenciesMs(c.RB)
		for i, m := range la {
			ch := Chart{ID: "compare-" + m.key, Title: m.name + " distribution (CDF)", XLabel: m.name + " (ms)", YLabel: "fraction of requests"}
			for _, side := range []struct {
				name string
				v    []float64
			}{{"A", m.v}, {"B", lb[i].v}} {
				if len(side.v) == 0 {
					continue
				}
				s := cdf("", "", "", side.v).Series[0]
				s.Name = side.name
				ch.Series = append(ch.Series, s)
			}
			if len(ch.Series) == 2 {
				charts = append(charts, ch)
			}
		}
		charts = cleanCharts(charts)
		for i := range charts {
			body.WriteString(charts[i].SVG())
		}
		body.WriteString(`</section>`)
	}
	data, _ := json.Marshal(struct {
		Rows   []Row   `json:"rows"`
		Charts []Chart `json:"charts"`
	}{rows, charts})
	return page("benchserve compare", c.Made, body.String(), data)
}
