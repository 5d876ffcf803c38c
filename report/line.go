package report

import (
	"math"
	"strconv"

	"benchserve/internal/py/pyjson"
	"benchserve/metrics"
	"benchserve/record"
)

// Line returns the result line, ending in "\n", as the reference writes it
// with json.dumps: the run's flags, server_info, the figures, cache_report
// with CacheReport, the per-request arrays of recs with OutputDetails, then
// run.Extra.
//
// A server_info body that is not valid JSON is written as null (the
// reference would crash parsing it), and so is a cached_tokens_details that
// is absent or not valid JSON.
func Line(run Run, s metrics.Summary, recs []record.Record) []byte {
	o := object{b: make([]byte, 0, sizeHint(run, recs))}
	o.b = append(o.b, '{')
	if run.Tag != nil {
		o.str("tag", *run.Tag)
	} else {
		o.null("tag")
	}
	o.str("backend", run.Backend)
	o.str("dataset_name", run.DatasetName)
	if run.Trace {
		o.str("request_rate", "trace")
	} else {
		o.float("request_rate", run.RequestRate)
	}
	o.intPtr("max_concurrency", run.MaxConcurrency)
	o.intPtr("sharegpt_output_len", run.SharegptOutputLen)
	o.int("random_input_len", run.RandomInputLen)
	o.int("random_output_len", run.RandomOutputLen)
	o.float("random_range_ratio", run.RandomRangeRatio)
	o.rawJSON("server_info", run.ServerInfo)

	o.float("duration", s.Duration)
	o.int("completed", s.Completed)
	o.int("total_input_tokens", s.TotalInput)
	o.int("total_input_text_tokens", s.TotalInputText)
	o.int("total_input_vision_tokens", s.TotalInputVision)
	o.int("total_output_tokens", s.TotalOutput)
	o.int("total_output_tokens_retokenized", s.TotalOutputRetokenized)
	o.float("request_throughput", s.RequestThroughput)
	o.float("input_throughput", s.InputThroughput)
	if run.RerankDocs > 0 {
		o.int("rerank_docs", run.RerankDocs)
		o.float("document_throughput", run.docThroughput(s))
	}
	o.float("output_throughput", s.OutputThroughput)
	o.float("total_throughput", s.TotalThroughput)
	o.stats("e2e_latency", s.E2E)
	o.stats("ttft", s.TTFT)
	o.stats("tpot", s.TPOT)
	o.stats("itl", s.ITL)
	o.float("concurrency", s.Concurrency)
	if s.AcceptLength != nil {
		o.float("accept_length", *s.AcceptLength)
	} else {
		o.null("accept_length")
	}
	o.float("max_output_tokens_per_s", s.MaxOutputTokensPerS)
	o.int("max_concurrent_requests", s.MaxConcurrentRequests)
	if run.CacheReport {
		o.cacheReport(cacheOf(s))
	}

	if run.OutputDetails {
		o.details(run, s, recs)
	}
	if run.Extra != nil {
		for _, k := range run.Extra.Keys() {
			v, _ := run.Extra.Get(k)
			o.key(k)
			o.b = append(o.b, v...)
		}
	}
	return append(o.b, "}\n"...)
}

func (o *object) cacheReport(c metrics.CacheReport) {
	o.key("cache_report")
	in := object{b: append(o.b, '{')}
	in.int("total_prompt_tokens", c.TotalPromptTokens)
	in.int("total_cached_tokens", c.TotalCached)
	in.float("cache_hit_rate_pct", round(c.HitRatePct, 2))
	if c.HasDetails {
		in.int("device_cached_tokens", c.Device)
		in.int("host_cached_tokens", c.Host)
	} else {
		in.null("device_cached_tokens")
		in.null("host_cached_tokens")
	}
	if c.Storage > 0 {
		in.int("storage_cached_tokens", c.Storage)
	} else {
		in.null("storage_cached_tokens")
	}
	if c.StorageBackend != "" {
		in.str("storage_backend", c.StorageBackend)
	} else {
		in.null("storage_backend")
	}
	o.b = append(in.b, '}')
}

// details writes the --output-details arrays, one entry per record.
func (o *object) details(run Run, s metrics.Summary, recs []record.Record) {
	o.key("input_lens")
	o.list(len(recs), func(i int) { o.b = strconv.AppendInt(o.b, int64(recs[i].PromptLen), 10) })
	o.key("output_lens")
	o.list(len(s.OutputLens), func(i int) { o.b = strconv.AppendInt(o.b, int64(s.OutputLens[i]), 10) })
	o.key("ttfts")
	o.list(len(recs), func(i int) { o.b = pyjson.AppendFloat(o.b, recs[i].TTFT) })
	o.key("itls")
	var itl []float64
	o.list(len(recs), func(i int) {
		itl = recs[i].Gaps.AppendSeconds(itl[:0])
		o.list(len(itl), func(j int) { o.b = pyjson.AppendFloat(o.b, itl[j]) })
	})
	o.key("generated_texts")
	o.list(len(recs), func(i int) { o.b = pyjson.AppendString(o.b, recs[i].Text) })
	o.key("errors")
	o.list(len(recs), func(i int) { o.b = pyjson.AppendString(o.b, recs[i].Error) })
	if !run.CacheReport {
		return
	}
	o.key("cached_tokens")
	o.list(len(recs), func(i int) { o.b = strconv.AppendInt(o.b, int64(recs[i].CachedTokens), 10) })
	o.key("cached_tokens_details")
	o.list(len(recs), func(i int) {
		var raw []byte
		if d := recs[i].CacheDetails; d != nil {
			raw = d.Raw
		}
		o.b = appendJSON(o.b, raw)
	})
}

// sizeHint guesses the line's length, so that a details line of many
// megabytes is not copied over and over while it grows.
func sizeHint(run Run, recs []record.Record) int {
	n := 4096 + len(run.ServerInfo)
	if !run.OutputDetails {
		return n
	}
	for i := range recs {
		n += 64 + len(recs[i].Text) + len(recs[i].Error) + 24*recs[i].Gaps.Len()
	}
	return n
}

// object appends the members of a JSON object in json.dumps layout.
type object struct {
	b []byte
	n int
}

func (o *object) key(k string) {
	if o.n > 0 {
		o.b = append(o.b, ", "...)
	}
	o.n++
	o.b = pyjson.AppendString(o.b, k)
	o.b = append(o.b, ": "...)
}

func (o *object) str(k, v string) {
	o.key(k)
	o.b = pyjson.AppendString(o.b, v)
}

func (o *object) float(k string, v float64) {
	o.key(k)
	o.b = pyjson.AppendFloat(o.b, v)
}

func (o *object) int(k string, v int) {
	o.key(k)
	o.b = strconv.AppendInt(o.b, int64(v), 10)
}

func (o *object) null(k string) {
	o.key(k)
	o.b = append(o.b, pyjson.Null...)
}

func (o *object) intPtr(k string, v *int) {
	if v == nil {
		o.null(k)
		return
	}
	o.int(k, *v)
}

func (o *object) rawJSON(k string, raw []byte) {
	o.key(k)
	o.b = appendJSON(o.b, raw)
}

// stats writes the six keys of one latency; the max is not written.
func (o *object) stats(name string, st metrics.Stats) {
	o.float("mean_"+name+"_ms", st.Mean)
	o.float("median_"+name+"_ms", st.Median)
	o.float("std_"+name+"_ms", st.Std)
	o.float("p90_"+name+"_ms", st.P90)
	o.float("p95_"+name+"_ms", st.P95)
	o.float("p99_"+name+"_ms", st.P99)
}

// list writes a JSON array of n items, item(i) appending the i-th.
func (o *object) list(n int, item func(i int)) {
	o.b = append(o.b, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			o.b = append(o.b, ", "...)
		}
		item(i)
	}
	o.b = append(o.b, ']')
}

// appendJSON appends raw re-encoded as json.dumps(json.loads(raw)), or null
// when raw is empty or not valid JSON.
func appendJSON(dst, raw []byte) []byte {
	if len(raw) == 0 {
		return append(dst, pyjson.Null...)
	}
	out, err := pyjson.Reformat(dst, raw)
	if err != nil {
		return append(dst, pyjson.Null...)
	}
	return out
}

// round is Python's round(x, ndigits) for a float: the correctly rounded
// decimal (ties to even on the exact binary value) read back as a float.
func round(x float64, ndigits int) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', ndigits, 64), 64)
	if err != nil {
		return x
	}
	return r
}
