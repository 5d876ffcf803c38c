package page

import (
	"math"
	"sort"

	"benchserve/record"
)

// maxPoints is how many points a drawn line keeps (LTTB); every summary
// figure is computed from all the data.
const maxPoints = 400

// recordCharts are the charts of one run's records: TTFT, ITL and E2E
// distributions (CDF and histogram), output throughput and requests in
// flight over time, TTFT against send time, failures over time by kind.
func recordCharts(id string, recs []record.Record) []Chart {
	var out []Chart
	for _, d := range latenciesMs(recs) {
		if len(d.v) == 0 {
			continue
		}
		out = append(out, cdf(id+"-"+d.key+"-cdf", d.name+" distribution (CDF)", d.name+" (ms)", d.of, d.v),
			histogram(id+"-"+d.key+"-hist", d.name+" histogram", d.name+" (ms)", d.of, d.v))
	}
	out = append(out, overTime(id, recs)...)
	return out
}

// latency is one latency of the successful requests, in ms, sorted.
type latency struct {
	key, name string
	// of is what v counts: "requests", or "gaps" for ITL.
	of string
	v  []float64
}

// latenciesMs are the successful requests' TTFTs, every gap between their
// chunks (ITL) and their E2E latencies.
func latenciesMs(recs []record.Record) [3]latency {
	var ttft, itl, e2e []float64
	for i := range recs {
		r := &recs[i]
		if !r.Success {
			continue
		}
		ttft = append(ttft, r.TTFT*1000)
		e2e = append(e2e, r.Latency*1000)
		for _, g := range r.Gaps.All() {
			itl = append(itl, g.Seconds()*1000)
		}
	}
	for _, v := range [][]float64{ttft, itl, e2e} {
		sort.Float64s(v)
	}
	return [3]latency{{"ttft", "TTFT", "requests", ttft}, {"itl", "ITL", "gaps", itl}, {"e2e", "E2E latency", "requests", e2e}}
}

// cdf is the empirical CDF of sorted v: (v[i], (i+1)/n), downsampled;
// of is what v counts (requests, gaps).
func cdf(id, title, xl, of string, v []float64) Chart {
	y := make([]float64, len(v))
	for i := range v {
		y[i] = float64(i+1) / float64(len(v))
	}
	x, y := LTTB(v, y, maxPoints)
	return Chart{ID: id, Title: title, XLabel: xl, YLabel: "fraction of " + of, Series: []Series{{Name: "CDF", X: x, Y: y}}}
}

// histogram counts sorted v in 40 bins from its minimum to its 99.9th
// percentile; the rest, if any, go in the last bin. of is what v counts.
func histogram(id, title, xl, of string, v []float64) Chart {
	const bins = 40
	lo, hi := v[0], v[min(len(v)-1, int(math.Ceil(0.999*float64(len(v))))-1)]
	if hi <= lo {
		hi = lo + 1
	}
	w := (hi - lo) / bins
	counts := make([]float64, bins)
	for _, x := range v {
		counts[min(bins-1, int((x-lo)/w))]++
	}
	xs := make([]float64, bins)
	for i := range xs {
		xs[i] = lo + float64(i)*w
	}
	return Chart{ID: id, Title: title, XLabel: xl, YLabel: of, Bars: true, Width: w,
		Series: []Series{{Name: "count", X: xs, Y: counts}}}
}

// overTime buckets the run: output tokens per second and requests in
// flight (the most at once in each bucket), TTFT against send time, and
// failures per bucket by kind.
func overTime(id string, recs []record.Record) []Chart {
	end := 0.0
	for i := range recs {
		end = math.Max(end, recs[i].Start+recs[i].Latency)
	}
	if end <= 0 {
		return nil
	}
	// About 200 buckets, at least 0.1 s each.
	bw := math.Max(0.1, end/200)
	nb := int(end/bw) + 1
	tokens := make([]float64, nb)
	inflight := make([]float64, nb+1)
	fails := map[string][]float64{}
	var sendX, sendY []float64
	type ev struct {
		t float64
		d int
	}
	var evs []ev
	for i := range recs {
		r := &recs[i]
		evs = append(evs, ev{r.Start, 1}, ev{r.Start + r.Latency, -1})
		// Requests cancelled on purpose are not failures (the run counts
		// them apart).
		if !r.Success && !r.Cancelled() {
			k := r.ErrorKind
			if k == "" {
				k = "other"
			}
			if fails[k] == nil {
				fails[k] = make([]float64, nb)
			}
			fails[k][min(nb-1, int((r.Start+r.Latency)/bw))]++
			continue
		}
		t := r.Start + r.TTFT
		tokens[min(nb-1, int(t/bw))]++
		for _, g := range r.Gaps.All() {
			t += g.Seconds()
			tokens[min(nb-1, int(t/bw))]++
		}
		sendX, sendY = append(sendX, r.Start), append(sendY, r.TTFT*1000)
	}
	sort.Slice(evs, func(a, b int) bool { return evs[a].t < evs[b].t || evs[a].t == evs[b].t && evs[a].d < evs[b].d })
	cur := 0
	for _, e := range evs {
		cur += e.d
		b := min(nb-1, int(e.t/bw))
		inflight[b] = math.Max(inflight[b], float64(cur))
	}
	// A bucket with no event holds the count it was left at.
	cur = 0
	k := 0
	for b := 0; b < nb; b++ {
		for k < len(evs) && int(evs[k].t/bw) <= b {
			cur += evs[k].d
			k++
		}
		inflight[b] = math.Max(inflight[b], float64(cur))
	}
	xs := make([]float64, nb)
	for b := range xs {
		xs[b] = float64(b) * bw
		tokens[b] /= bw
	}
	out := []Chart{
		{ID: id + "-throughput", Title: "Output throughput over time", XLabel: "time since the start (s)", YLabel: "output tokens/s",
			Series: []Series{{Name: "output tok/s", X: xs, Y: tokens}}},
		{ID: id + "-inflight", Title: "Requests in flight over time", XLabel: "time since the start (s)", YLabel: "requests in flight (most in the bucket)",
			Series: []Series{{Name: "in flight", X: xs, Y: inflight[:nb]}}},
	}
	if len(sendX) > 0 {
		idx := make([]int, len(sendX))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return sendX[idx[a]] < sendX[idx[b]] })
		sx, sy := make([]float64, len(idx)), make([]float64, len(idx))
		for i, j := range idx {
			sx[i], sy[i] = sendX[j], sendY[j]
		}
		sx, sy = LTTB(sx, sy, 2*maxPoints)
		out = append(out, Chart{ID: id + "-ttft-vs-send", Title: "TTFT against send time (queueing shows as a slope)", XLabel: "send time (s)", YLabel: "TTFT (ms)",
			Scatter: true, Series: []Series{{Name: "request", X: sx, Y: sy}}})
	}
	if len(fails) > 0 {
		c := Chart{ID: id + "-failures", Title: "Failures over time, by kind", XLabel: "time since the start (s)", YLabel: "failed requests per bucket"}
		kinds := make([]string, 0, len(fails))
		for k := range fails {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			c.Series = append(c.Series, Series{Name: k, X: xs, Y: fails[k]})
		}
		out = append(out, c)
	}
	return out
}
