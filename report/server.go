package report

import (
	"fmt"
	"math"
	"strings"

	"benchserve/internal/py/pyjson"
	"benchserve/metrics"
)

// The engines' names for each figure of the server view (metrics.Engines
// is the one table of them).
var (
	runningNames   = metrics.Names(func(e metrics.Engine) string { return e.Running })
	waitingNames   = metrics.Names(func(e metrics.Engine) string { return e.Waiting })
	kvNames        = metrics.Names(func(e metrics.Engine) string { return e.KVUsage })
	preemptNames   = metrics.Names(func(e metrics.Engine) string { return e.Preemptions })
	hitNames       = metrics.Names(func(e metrics.Engine) string { return e.CacheHits })
	queryNames     = metrics.Names(func(e metrics.Engine) string { return e.CacheQueries })
	promptNames    = metrics.Names(func(e metrics.Engine) string { return e.PromptTokens })
	genNames       = metrics.Names(func(e metrics.Engine) string { return e.GenTokens })
	acceptedNames  = metrics.Names(func(e metrics.Engine) string { return e.Accepted })
	draftNames     = metrics.Names(func(e metrics.Engine) string { return e.Drafted })
	acceptLenNames = metrics.Names(func(e metrics.Engine) string { return e.AcceptLength })
	ttftNames      = metrics.Names(func(e metrics.Engine) string { return e.TTFT })
	itlNames       = metrics.Names(func(e metrics.Engine) string { return e.ITL })
	e2eNames       = metrics.Names(func(e metrics.Engine) string { return e.E2E })
	knownNames     = [][]string{runningNames, waitingNames, kvNames, preemptNames, hitNames, queryNames, promptNames, genNames,
		acceptedNames, draftNames, acceptLenNames, ttftNames, itlNames, e2eNames}
)

// ServerFamilies names the engines whose metric names the server view
// reads.
const ServerFamilies = "vLLM, SGLang, llama.cpp, TGI and TRT-LLM on Triton"

// TokensDisagree reports the server's generated-token count over the run
// and whether it differs from the client's total by more than 1%.
func TokensDisagree(v *metrics.ServerView, client int) (server float64, ok, disagree bool) {
	if v == nil {
		return 0, false, false
	}
	g, ok := v.First(genNames...)
	if !ok {
		return 0, false, false
	}
	n := g.Total()
	return n, true, math.Abs(n-float64(client)) > 0.01*math.Max(float64(client), 1)
}

// knownSeries reports whether the view has any series the server view
// reads.
func knownSeries(v *metrics.ServerView) bool {
	for _, names := range knownNames {
		if v.Known(names) {
			return true
		}
	}
	return false
}

// serverRows are the Server view section: the known figures, and the
// server's own latencies and token count beside the client's.
func serverRows(v *metrics.ServerView, note string, s metrics.Summary) []Row {
	if v == nil {
		return []Row{{"Server metrics:", note}}
	}
	var rows []Row
	add := func(label, value string) { rows = append(rows, Row{label, value}) }
	gauge := func(label string, names []string, scale float64) {
		if g, ok := v.First(names...); ok && g.Kind == metrics.Gauge {
			add(label, fmt.Sprintf("%s / %s", F(g.Mean*scale), F(g.Max*scale)))
		}
	}
	gauge("Running requests (mean / max):", runningNames, 1)
	gauge("Waiting requests (mean / max):", waitingNames, 1)
	gauge("KV cache usage (%, mean / max):", kvNames, 100)
	if p, ok := v.First(preemptNames...); ok {
		add("Preemptions:", F(p.Delta))
	}
	if h, ok := v.First(hitNames...); ok {
		if q, ok := v.First(queryNames...); ok && q.Delta > 0 {
			add("Prefix cache hit rate (%):", F(100*h.Delta/q.Delta))
		}
	}
	if p, ok := v.First(promptNames...); ok {
		val := fmt.Sprintf("%.0f (client %d)", p.Total(), s.TotalInput)
		if strings.HasPrefix(p.Name, "llamacpp:") {
			val += ": llama.cpp counts only the tokens not found in its cache"
		}
		add("Prompt tokens (server):", val)
	}
	if g, ok, bad := TokensDisagree(v, s.TotalOutput); ok {
		val := fmt.Sprintf("%.0f (client %d)", g, s.TotalOutput)
		if bad {
			val += ": differ by more than 1%"
		}
		add("Generated tokens (server):", val)
	}
	if a, ok := v.First(acceptedNames...); ok {
		if d, ok := v.First(draftNames...); ok && d.Delta > 0 {
			add("Speculative accept rate (%):", F(100*a.Delta/d.Delta))
		}
	} else if a, ok := v.First(acceptLenNames...); ok {
		add("Speculative accept length (mean):", F(a.Mean))
	}
	lat := func(name string, names []string, client metrics.Stats) {
		h, ok := v.First(names...)
		if !ok || h.Count <= 0 {
			return
		}
		mean := 1000 * h.Sum / h.Count
		add("Server "+name+" mean (ms):", fmt.Sprintf("%s (client %s, %+.2f)", F(mean), F(client.Mean), client.Mean-mean))
		add("Server "+name+" p99 (ms, buckets):", fmt.Sprintf("%s (client %s)", F(1000*h.P99), F(client.P99)))
	}
	lat("TTFT", ttftNames, s.TTFT)
	lat("ITL", itlNames, s.ITL)
	lat("E2E", e2eNames, s.E2E)
	resets := 0
	for _, x := range v.Series {
		if x.Reset {
			resets++
		}
	}
	if resets > 0 {
		add("Counter resets seen:", fmt.Sprintf("%d (the server restarted? deltas add what was counted after them)", resets))
	}
	if len(v.Series) > 0 && !knownSeries(v) {
		add("Server metrics:", fmt.Sprintf("%d series read, none with a name benchserve knows (it knows those of %s); they are in server_metrics", len(v.Series), ServerFamilies))
	}
	add("Metric reads (failed):", fmt.Sprintf("%d (%d)", v.Scrapes, v.Failed))
	return rows
}

// serverKeys write the server view: server_metrics (counters as their
// delta, gauges {mean, max, last}, histograms {count, sum, p50, p99}, in
// seconds as the server exposes them), the reconciled figures, and the
// resets.
func serverKeys(o *pyjson.Object, v *metrics.ServerView, note string, s metrics.Summary) {
	if v == nil {
		o.Set("server_metrics", pyjson.Null)
		o.Set("server_metrics_note", pyjson.String(note))
		return
	}
	m := &pyjson.Object{}
	var resets []string
	num := func(f float64) []byte {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return pyjson.Null
		}
		return pyjson.Float(f)
	}
	for _, x := range v.Series {
		switch x.Kind {
		case metrics.Counter:
			m.Set(x.Key, num(x.Delta))
		case metrics.Gauge:
			g := &pyjson.Object{}
			g.Set("mean", num(x.Mean))
			g.Set("max", num(x.Max))
			g.Set("last", num(x.Last))
			m.Set(x.Key, g.Bytes())
		default:
			h := &pyjson.Object{}
			h.Set("count", num(x.Count))
			h.Set("sum", num(x.Sum))
			if x.Kind == metrics.Histogram {
				h.Set("p50", num(x.P50))
				h.Set("p99", num(x.P99))
			}
			m.Set(x.Key, h.Bytes())
		}
		if x.Reset {
			resets = append(resets, x.Key)
		}
	}
	o.Set("server_metrics", m.Bytes())
	o.Set("server_metrics_reads", pyjson.Int(v.Scrapes))
	o.Set("server_metrics_failed_reads", pyjson.Int(v.Failed))
	o.Set("server_metrics_resets", pyjson.Strings(resets))
	if g, ok, bad := TokensDisagree(v, s.TotalOutput); ok {
		o.Set("server_generated_tokens", num(g))
		o.Set("server_tokens_disagree", pyjson.Bool(bad))
	}
	for _, l := range []struct {
		key   string
		names []string
	}{{"server_ttft_mean_ms", ttftNames}, {"server_itl_mean_ms", itlNames}, {"server_e2e_mean_ms", e2eNames}} {
		if h, ok := v.First(l.names...); ok && h.Count > 0 {
			o.Set(l.key, num(1000*h.Sum/h.Count))
		}
	}
}
