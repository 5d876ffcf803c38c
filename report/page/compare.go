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

	"benchserve/metrics"
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
	// TooFew, instead of an interval: why the records cannot resolve
	// this figure ("too few requests: ...").
	TooFew string `json:"too_few,omitempty"`
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
	boot, tooFew := map[string][2]float64{}, map[string]string{}
	if len(c.RA) > 0 && len(c.RB) > 0 {
		boot, tooFew = bootstrap(c.RA, c.RB)
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
		r.TooFew = tooFew[f.key]
		rows = append(rows, r)
	}
	return rows
}

// bootstrapRounds resamples each run this many times.
const bootstrapRounds = 400

// minBeyond is how many requests must lie beyond a percentile (on each
// side's own sample) before the bootstrap may call a difference in it
// beyond noise: the resampled P99 of 40 requests is one of its top two
// values, and its interval says nothing. The mean and median take 10
// requests (5 on each side of the median).
const minBeyond = 5

// sample is one run's successful requests for a latency: the values in
// ms, sorted, owner[i] the request of v[i] (0 to n−1). A request gives
// TTFT and E2E one value each, ITL one per gap.
type sample struct {
	v     []float64
	owner []int32
	n     int
}

// samplesMs are recs' TTFT, ITL and E2E samples.
func samplesMs(recs []record.Record) [3]sample {
	type pair struct {
		v float64
		o int32
	}
	var ps [3][]pair
	n := int32(0)
	for i := range recs {
		r := &recs[i]
		if !r.Success {
			continue
		}
		ps[0] = append(ps[0], pair{r.TTFT * 1000, n})
		ps[2] = append(ps[2], pair{r.Latency * 1000, n})
		for _, g := range r.Gaps.All() {
			ps[1] = append(ps[1], pair{g.Seconds() * 1000, n})
		}
		n++
	}
	var out [3]sample
	for k, p := range ps {
		sort.Slice(p, func(i, j int) bool { return p[i].v < p[j].v })
		s := sample{v: make([]float64, len(p)), owner: make([]int32, len(p)), n: int(n)}
		for i := range p {
			s.v[i], s.owner[i] = p[i].v, p[i].o
		}
		out[k] = s
	}
	return out
}

// requestsBeyond is how many different requests give s's values above
// its p-th percentile or at it.
func (s sample) requestsBeyond(p float64) int {
	if len(s.v) == 0 {
		return 0
	}
	q := metrics.Percentile(len(s.v), p, func(k int) float64 { return s.v[k] })
	seen := map[int32]bool{}
	for i := len(s.v) - 1; i >= 0 && s.v[i] >= q; i-- {
		seen[s.owner[i]] = true
	}
	return len(seen)
}

// resample draws s.n requests with replacement and returns the mean,
// median and P99 of their values (every value of a request drawn twice
// counts twice), the percentiles as NumPy's linear ones, as the result
// line's.
func (s sample) resample(rng *rand.Rand, counts []int32, cum []int) (mean, median, p99 float64) {
	clear(counts)
	for range s.n {
		counts[rng.IntN(s.n)]++
	}
	return s.weighted(counts, cum)
}

// weighted is the mean, median and P99 of s with request i's values
// counted counts[i] times; cum is scratch of len(s.v).
func (s sample) weighted(counts []int32, cum []int) (mean, median, p99 float64) {
	sum, w := 0.0, 0
	for i, x := range s.v {
		c := int(counts[s.owner[i]])
		sum += x * float64(c)
		w += c
		cum[i] = w
	}
	if w == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	at := func(k int) float64 { return s.v[sort.SearchInts(cum, k+1)] }
	return sum / float64(w), metrics.Median(w, at), metrics.Percentile(w, 99, at)
}

// bootstrap is the 95% percentile interval of B − A for the latency
// figures the records give (TTFT, E2E and ITL: mean, median, P99), each
// run's successful requests resampled whole with replacement (an ITL
// resample takes all the gaps of the requests drawn), with a fixed seed
// so that a comparison is repeatable. A figure whose percentile either
// run's sample cannot resolve (fewer than minBeyond requests beyond it)
// gets a reason instead of an interval.
func bootstrap(ra, rb []record.Record) (map[string][2]float64, map[string]string) {
	rng := rand.New(rand.NewPCG(1, 2))
	sa, sb := samplesMs(ra), samplesMs(rb)
	out, tooFew := map[string][2]float64{}, map[string]string{}
	for i, name := range []string{"ttft", "itl", "e2e_latency"} {
		a, b := sa[i], sb[i]
		if len(a.v) < 2 || len(b.v) < 2 {
			continue
		}
		stats := []struct {
			stat string
			p    float64
		}{{"mean", 50}, {"median", 50}, {"p99", 99}}
		ok := map[string]bool{}
		for _, st := range stats {
			key := st.stat + "_" + name + "_ms"
			ok[st.stat] = true
			for _, side := range []struct {
				name string
				s    sample
			}{{"A", a}, {"B", b}} {
				if why := resolves(side.name, side.s, st.stat, st.p, name == "itl"); why != "" {
					tooFew[key], ok[st.stat] = why, false
					break
				}
			}
		}
		if !ok["mean"] && !ok["median"] && !ok["p99"] {
			continue
		}
		ca, cb := make([]int32, a.n), make([]int32, b.n)
		wa, wb := make([]int, len(a.v)), make([]int, len(b.v))
		var d [3][]float64
		for range bootstrapRounds {
			ma, qa, pa := a.resample(rng, ca, wa)
			mb, qb, pb := b.resample(rng, cb, wb)
			d[0], d[1], d[2] = append(d[0], mb-ma), append(d[1], qb-qa), append(d[2], pb-pa)
		}
		for k, st := range stats {
			if !ok[st.stat] {
				continue
			}
			v := d[k]
			sort.Float64s(v)
			at := func(j int) float64 { return v[j] }
			out[st.stat+"_"+name+"_ms"] = [2]float64{metrics.Percentile(len(v), 2.5, at), metrics.Percentile(len(v), 97.5, at)}
		}
	}
	return out, tooFew
}

// resolves is "" when side's sample s can resolve the figure (the mean
// and median need 2×minBeyond requests, a percentile minBeyond requests
// beyond it), else why not.
func resolves(side string, s sample, stat string, p float64, gaps bool) string {
	label := map[string]string{"mean": "mean", "median": "median", "p99": "P99"}[stat]
	switch {
	case stat != "p99" && s.n < 2*minBeyond:
		return fmt.Sprintf("too few requests: %s has %d, a %s needs %d", side, s.n, label, 2*minBeyond)
	case stat == "p99" && !gaps && float64(s.n)*(1-p/100) < minBeyond:
		return fmt.Sprintf("too few requests: %s has %d, a P99 needs %d beyond it (%d in all)", side, s.n, minBeyond, int(math.Ceil(minBeyond/(1-p/100)-1e-9)))
	case stat == "p99" && gaps:
		if k := s.requestsBeyond(p); k < minBeyond {
			return fmt.Sprintf("too few requests: %s's gaps at or above its P99 come from %d, a P99 needs %d", side, k, minBeyond)
		}
	}
	return ""
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
		if r.TooFew != "" {
			ci = r.TooFew
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
		if r.TooFew != "" {
			ci = r.TooFew
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
			ch := Chart{ID: "compare-" + m.key, Title: m.name + " distribution (CDF)", XLabel: m.name + " (ms)", YLabel: "fraction of " + m.of}
			for _, side := range []struct {
				name string
				v    []float64
			}{{"A", m.v}, {"B", lb[i].v}} {
				if len(side.v) == 0 {
					continue
				}
				s := cdf("", "", "", m.of, side.v).Series[0]
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
