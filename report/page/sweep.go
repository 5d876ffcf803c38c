package page

import (
	"sort"
	"strconv"
	"strings"
)

// sweepCharts are the load curves of several result lines (a sweep, or
// several runs): latency against achieved request rate and against
// output throughput, p50 and p99; the Pareto view (output tokens a second
// per user, 1000/mean TPOT, against the total); and, after a search, the
// SLO's figure against the configured load with the SLO as a line and the
// search's interval shaded.
func sweepCharts(lines []Line) []Chart {
	var pts []Line
	var search *Line
	for i := range lines {
		l := &lines[i]
		switch {
		case l.Has("search_result") || l.Has("search_high") || len(l.SLOs) > 0:
			search = l
		case l.Has("request_throughput") && l.Has("completed"):
			pts = append(pts, *l)
		}
	}
	if len(pts) < 2 {
		return nil
	}
	sort.SliceStable(pts, func(a, b int) bool { return pts[a].Num["request_throughput"] < pts[b].Num["request_throughput"] })
	series := func(x string, ys ...[2]string) []Series {
		var out []Series
		for _, y := range ys {
			s := Series{Name: y[1]}
			for _, p := range pts {
				if p.Has(x) && p.Has(y[0]) && p.Num["completed"] > 0 {
					s.X, s.Y = append(s.X, p.Num[x]), append(s.Y, p.Num[y[0]])
				}
			}
			out = append(out, s)
		}
		return out
	}
	refs := sloRefs(search)
	var out []Chart
	for _, m := range []struct{ key, name string }{{"ttft", "TTFT"}, {"itl", "ITL"}, {"e2e_latency", "E2E latency"}} {
		ys := [][2]string{{"median_" + m.key + "_ms", "p50"}, {"p99_" + m.key + "_ms", "p99"}}
		out = append(out,
			Chart{ID: "sweep-" + m.key + "-rate", Title: m.name + " against achieved request rate", XLabel: "achieved requests/s", YLabel: m.name + " (ms)",
				Series: series("request_throughput", ys...), HRefs: refs[m.key]},
			Chart{ID: "sweep-" + m.key + "-tokens", Title: m.name + " against output throughput", XLabel: "output tokens/s", YLabel: m.name + " (ms)",
				Series: series("output_throughput", ys...), HRefs: refs[m.key]})
	}
	pareto := Series{Name: "runs"}
	for _, p := range pts {
		if t := p.Num["mean_tpot_ms"]; t > 0 {
			pareto.X, pareto.Y = append(pareto.X, p.Num["output_throughput"]), append(pareto.Y, 1000/t)
		}
	}
	out = append(out, Chart{ID: "sweep-pareto", Title: "Per-user speed against total throughput (Pareto view)", XLabel: "output tokens/s (total)",
		YLabel: "output tokens/s per user (1000/mean TPOT)", Series: []Series{pareto}})
	if search != nil && len(search.SLOs) > 0 {
		if c, ok := searchChart(search, pts); ok {
			out = append(out, c)
		}
	}
	return out
}

// sloRefs are the search's SLO bounds on p99/median/mean latency keys,
// by the metric they bound.
func sloRefs(search *Line) map[string][]Ref {
	out := map[string][]Ref{}
	if search == nil {
		return out
	}
	for _, e := range search.SLOs {
		key, limit, ok := splitExpr(e)
		if !ok {
			continue
		}
		for _, m := range []string{"ttft", "itl", "e2e_latency"} {
			if strings.HasSuffix(key, "_"+m+"_ms") {
				out[m] = append(out[m], Ref{At: limit, Label: "SLO " + e})
			}
		}
	}
	return out
}

// searchChart is the search's first SLO figure against the configured
// load, with the SLO as a line and [search_low, search_high] shaded.
func searchChart(search *Line, pts []Line) (Chart, bool) {
	key, limit, ok := splitExpr(search.SLOs[0])
	if !ok {
		return Chart{}, false
	}
	axis := "request_rate"
	if search.Str["search_axis"] == "max_concurrency" {
		axis = "max_concurrency"
	}
	s := Series{Name: key}
	for _, p := range pts {
		if x, ok := p.Point[axis]; ok && p.Has(key) {
			s.X, s.Y = append(s.X, x), append(s.Y, p.Num[key])
		}
	}
	if len(s.X) == 0 {
		return Chart{}, false
	}
	idx := make([]int, len(s.X))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return s.X[idx[a]] < s.X[idx[b]] })
	sorted := Series{Name: s.Name}
	for _, i := range idx {
		sorted.X, sorted.Y = append(sorted.X, s.X[i]), append(sorted.Y, s.Y[i])
	}
	c := Chart{ID: "search", Title: "The search: " + key + " against the configured " + strings.ReplaceAll(axis, "_", " "),
		XLabel: strings.ReplaceAll(axis, "_", " "), YLabel: key, Scatter: true, Series: []Series{sorted},
		HRefs: []Ref{{At: limit, Label: "SLO " + search.SLOs[0]}}}
	if lo, hi := search.Num["search_low"], search.Num["search_high"]; search.Has("search_low") && search.Has("search_high") {
		c.Band = []float64{lo, hi}
		c.VRefs = []Ref{{At: lo, Label: "answer " + num(lo)}}
	}
	return c, true
}

// splitExpr splits "key<limit" (any of the threshold operators).
func splitExpr(e string) (string, float64, bool) {
	i := strings.IndexAny(e, "<>=!")
	if i <= 0 {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(strings.TrimLeft(strings.TrimSpace(e[i:]), "<>=! "), 64)
	return strings.TrimSpace(e[:i]), v, err == nil
}
