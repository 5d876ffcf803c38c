package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"benchserve/internal/py/pyjson"
	"benchserve/metrics"
	"benchserve/record"
)

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// sourcesText says where the output lengths came from: "server 100%",
// "retokenized 60%, requested 40%".
func sourcesText(r *metrics.SelfCheck) string {
	if r.OK == 0 {
		return "none"
	}
	var parts []string
	for _, s := range []record.OutputSource{record.OutputServer, record.OutputRetokenized, record.OutputRequested, record.OutputNone} {
		if n := r.Sources[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s%%", s, F(100*float64(n)/float64(r.OK))))
		}
	}
	return strings.Join(parts, ", ")
}

// checkRows are the console lines of the schedule-anchored and self-check
// sections. Embedding runs have no TTFT, as in the reference block.
func checkRows(r *metrics.SelfCheck, embedding bool) (map[string][]Row, []string) {
	f := F
	var a metrics.Anchored
	if r.Anchored != nil {
		a = *r.Anchored
	}
	val := func(v float64) string {
		if r.Anchored == nil {
			return "n/a"
		}
		return f(v)
	}
	var anchored []Row
	if !embedding {
		anchored = []Row{
			{Label: "Mean TTFT from schedule (ms):", Value: val(a.TTFT.Mean)},
			{Label: "Median TTFT from schedule (ms):", Value: val(a.TTFT.Median)},
			{Label: "P99 TTFT from schedule (ms):", Value: val(a.TTFT.P99)},
		}
	}
	anchored = append(anchored, []Row{
		{Label: "Mean E2E from schedule (ms):", Value: val(a.E2E.Mean)},
		{Label: "Median E2E from schedule (ms):", Value: val(a.E2E.Median)},
		{Label: "P99 E2E from schedule (ms):", Value: val(a.E2E.P99)},
		{Label: "Mean send lag (ms):", Value: val(a.Lag.Mean)},
		{Label: "P99 send lag (ms):", Value: val(a.Lag.P99)},
	}...)
	// No output tokens (embeddings, or nothing succeeded): no per-token
	// cost, rather than a cost of 0.
	perToken := "n/a"
	if !embedding && r.CPUPerToken > 0 {
		perToken = f(r.CPUPerToken)
	}
	check := []Row{
		{Label: "Target request rate (req/s):", Value: f(r.Target)},
		{Label: "Planned request rate (req/s):", Value: f(r.Planned)},
		{Label: "Achieved send rate (req/s):", Value: f(r.Achieved)},
		{Label: "Max requests in flight:", Value: fmt.Sprint(r.MaxInflight)},
		{Label: "Dispatch lag p99 (ms):", Value: f(r.LagP99 * 1000)},
		{Label: "Dispatch lag max (ms):", Value: f(r.LagMax * 1000)},
		{Label: "Send delay p99 (ms):", Value: f(ms(r.SendP99))},
		{Label: "Read delay p99 (ms):", Value: f(ms(r.ReadDelay.Quantile(0.99)))},
		{Label: "Read delay max (ms):", Value: f(ms(r.ReadDelay.Max()))},
		{Label: "Bunched chunks (%):", Value: f(r.BunchedPct())},
		{Label: "Bunched by late reads (%):", Value: f(r.LateBunchedPct())},
		{Label: "Client CPU time (s):", Value: f(r.CPU.Seconds())},
		{Label: "Client CPU per output token (us):", Value: perToken},
		{Label: "GC pause total (ms):", Value: f(float64(r.GCPause) / 1e6)},
		{Label: "Kernel-timed responses (%):", Value: f(r.KernelTimed)},
	}
	if !embedding {
		check = append(check, Row{Label: "Output token counts from:", Value: sourcesText(r)})
	}
	check = append(check, integrityRows(&r.Integrity)...)
	check = append(check, Row{Label: "Client verdict:", Value: r.Verdict})
	const t1, t2 = "Schedule-anchored latency", "Client self-check"
	return map[string][]Row{t1: anchored, t2: check}, []string{t1, t2}
}

// checkKeys writes the same figures as JSONL keys, after the
// reference's, with the count and the share of failed requests (of the
// total sent).
func checkKeys(o *pyjson.Object, r *metrics.SelfCheck, failed, total int) {
	// Closed loop: null, as there is no schedule to measure from.
	stats := func(prefix string, s metrics.Stats) { setStats(o, prefix, s, r.Anchored != nil) }
	var a metrics.Anchored
	if r.Anchored != nil {
		a = *r.Anchored
	}
	stats("ttft_from_schedule", a.TTFT)
	stats("e2e_latency_from_schedule", a.E2E)
	stats("send_lag", a.Lag)
	o.Set("failed", pyjson.Int(failed))
	rate := 0.0
	if total > 0 {
		rate = float64(failed) / float64(total)
	}
	o.Set("failed_rate", pyjson.Float(rate))
	o.Set("planned_request_rate", pyjson.Float(r.Planned))
	o.Set("achieved_request_rate", pyjson.Float(r.Achieved))
	o.Set("max_inflight_requests", pyjson.Int(r.MaxInflight))
	o.Set("dispatch_lag_p99_ms", pyjson.Float(r.LagP99*1000))
	o.Set("dispatch_lag_max_ms", pyjson.Float(r.LagMax*1000))
	o.Set("send_delay_p50_ms", pyjson.Float(ms(r.SendP50)))
	o.Set("send_delay_p99_ms", pyjson.Float(ms(r.SendP99)))
	o.Set("send_delay_max_ms", pyjson.Float(ms(r.SendMax)))
	o.Set("read_delay_p50_ms", pyjson.Float(ms(r.ReadDelay.Quantile(0.5))))
	o.Set("read_delay_p99_ms", pyjson.Float(ms(r.ReadDelay.Quantile(0.99))))
	o.Set("read_delay_max_ms", pyjson.Float(ms(r.ReadDelay.Max())))
	o.Set("bunched_chunks_pct", pyjson.Float(r.BunchedPct()))
	o.Set("late_bunched_chunks_pct", pyjson.Float(r.LateBunchedPct()))
	o.Set("client_cpu_s", pyjson.Float(r.CPU.Seconds()))
	o.Set("client_cpu_us_per_output_token", pyjson.Float(r.CPUPerToken))
	o.Set("client_gc_pause_ms", pyjson.Float(float64(r.GCPause)/1e6))
	o.Set("kernel_timed_pct", pyjson.Float(r.KernelTimed))
	src := &pyjson.Object{}
	for _, s := range []record.OutputSource{record.OutputServer, record.OutputRetokenized, record.OutputRequested} {
		src.Set(s.String(), pyjson.Int(r.Sources[s]))
	}
	o.Set("output_tokens_source", src.Bytes())
	o.Set("client_verdict", pyjson.String(r.Verdict))
	integrityKeys(o, &r.Integrity)
}

// integrityRows are the stream integrity lines: one when every stream
// is whole, else one per problem found.
func integrityRows(s *metrics.StreamIntegrity) []Row {
	if s.Flawed == 0 {
		v := fmt.Sprintf("all %d streams complete", s.Streams)
		if s.Streams == 0 {
			v = "no streams"
		}
		return []Row{{Label: "Stream integrity:", Value: v}}
	}
	var rows []Row
	for _, b := range record.IntegrityProblems {
		if n := s.Count(b); n > 0 {
			rows = append(rows, Row{Label: capital(metrics.IntegrityLabel(b)) + ":", Value: fmt.Sprintf("%d of %d", n, s.Streams)})
		}
	}
	return rows
}

// integrityKeys are the same as the stream_integrity object, with the
// streams that had any problem as a number of its own for --threshold.
func integrityKeys(o *pyjson.Object, s *metrics.StreamIntegrity) {
	in := &pyjson.Object{}
	in.Set("streams", pyjson.Int(s.Streams))
	for _, b := range record.IntegrityProblems {
		in.Set(b.Name(), pyjson.Int(s.Count(b)))
	}
	o.Set("stream_integrity", in.Bytes())
	o.Set("flawed_streams", pyjson.Int(s.Flawed))
}

// setStats writes st as {mean,median,std,p90,p95,p99}_<name>_ms, or
// those keys as null when !known.
func setStats(o *pyjson.Object, name string, st metrics.Stats, known bool) {
	vals := []float64{st.Mean, st.Median, st.Std, st.P90, st.P95, st.P99}
	for i, k := range []string{"mean", "median", "std", "p90", "p95", "p99"} {
		if known {
			o.Set(k+"_"+name+"_ms", pyjson.Float(vals[i]))
		} else {
			o.Set(k+"_"+name+"_ms", pyjson.Null)
		}
	}
}

// latencyRows are a group's TTFT and E2E lines (mean / median / P99),
// as the Per turn and Per URL sections print them.
func latencyRows(ttft, e2e metrics.Stats) []Row {
	return []Row{
		{"  TTFT mean / median / P99 (ms):", F(ttft.Mean) + " / " + F(ttft.Median) + " / " + F(ttft.P99)},
		{"  E2E mean / median / P99 (ms):", F(e2e.Mean) + " / " + F(e2e.Median) + " / " + F(e2e.P99)},
	}
}

// latencyKeys are the same figures as keys: mean_ttft_ms, median_ttft_ms,
// p99_ttft_ms, then e2e_latency's.
func latencyKeys(o *pyjson.Object, ttft, e2e metrics.Stats) {
	for _, m := range []struct {
		name string
		st   metrics.Stats
	}{{"ttft", ttft}, {"e2e_latency", e2e}} {
		o.Set("mean_"+m.name+"_ms", pyjson.Float(m.st.Mean))
		o.Set("median_"+m.name+"_ms", pyjson.Float(m.st.Median))
		o.Set("p99_"+m.name+"_ms", pyjson.Float(m.st.P99))
	}
}

// commonErrors is a section of the n most common error texts of the failed
// requests, with their counts and kinds, most frequent first.
func commonErrors(errs []metrics.ErrorCount, n int) []Row {
	type entry struct {
		text, kind string
		count      int
		first      int
		varied     bool // texts that differ in their numbers were grouped
	}
	by := map[string]*entry{}
	for i, r := range errs {
		if r.Text == "" {
			continue // past a soak's bound: counted by kind only
		}
		// Errors that differ only in numbers (token counts, lengths,
		// ports) are one error: grouped with their digits ignored, the
		// first shown.
		key := r.Kind + "\x00" + withoutDigits(r.Text)
		e := by[key]
		if e == nil {
			e = &entry{text: r.Text, kind: r.Kind, first: i}
			by[key] = e
		}
		e.varied = e.varied || r.Text != e.text
		e.count += r.N
	}
	all := make([]*entry, 0, len(by))
	for _, e := range by {
		all = append(all, e)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].count != all[j].count {
			return all[i].count > all[j].count
		}
		return all[i].first < all[j].first
	})
	var rows []Row
	for _, e := range all[:min(n, len(all))] {
		text := e.text
		if len(text) > 300 {
			cut := 300
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			text = text[:cut] + "..."
		}
		kind := e.kind
		if kind == "" {
			kind = record.KindOther
		}
		if e.varied {
			text = "e.g. " + text
		}
		rows = append(rows, Row{Label: strconv.Itoa(e.count) + " requests, " + kind + ":", Value: text})
	}
	return rows
}

// withoutDigits is s with each run of digits as one '#'.
func withoutDigits(s string) string {
	digit := func(c byte) bool { return c >= '0' && c <= '9' }
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch {
		case !digit(s[i]):
			b = append(b, s[i])
		case i == 0 || !digit(s[i-1]):
			b = append(b, '#')
		}
	}
	return string(b)
}

// capital is s with its first letter in upper case (ASCII).
func capital(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
