package sim

import (
	"strconv"
	"sync/atomic"
	"time"
)

// histogram is a Prometheus histogram safe for concurrent observers.
type histogram struct {
	bounds []float64 // seconds, ascending
	counts []atomic.Uint64
	sum    atomic.Int64 // nanoseconds
}

func newHistogram(bounds ...float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

func (h *histogram) observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(h.bounds) && s > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sum.Add(int64(d))
}

// Bucket bounds as vLLM uses them (see the llm-d-inference-sim metrics
// fixture).
var (
	ttftBounds = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
	itlBounds  = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}
	e2eBounds  = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
)

// metrics are the server-side observations /metrics exports besides the
// engine's counters.
type metrics struct {
	ttft, itl, e2e *histogram
	finished       [finAbort + 1]atomic.Uint64
	faults         [numFaultKinds]atomic.Uint64
}

func newMetrics() *metrics {
	return &metrics{ttft: newHistogram(ttftBounds...), itl: newHistogram(itlBounds...), e2e: newHistogram(e2eBounds...)}
}

// appendMetrics writes the Prometheus text exposition (format 0.0.4).
func (s *Server) appendMetrics(b []byte) []byte {
	st := &s.eng.stats
	label := `{model_name=` + string(s.modelQ) + `}`
	counter := func(b []byte, name, help string, v uint64) []byte {
		b = metricHead(b, name, help, "counter")
		b = append(b, name...)
		b = append(b, label...)
		b = append(b, ' ')
		b = strconv.AppendUint(b, v, 10)
		return append(b, '\n')
	}
	gauge := func(b []byte, name, help string, v float64) []byte {
		b = metricHead(b, name, help, "gauge")
		b = append(b, name...)
		b = append(b, label...)
		b = append(b, ' ')
		b = appendFloat(b, v)
		return append(b, '\n')
	}
	// The engine's configuration, as vLLM exports its own (provenance).
	b = metricHead(b, "vllm:cache_config_info", "Information of the engine's cache configuration.", "gauge")
	b = append(b, `vllm:cache_config_info{block_size="`...)
	b = strconv.AppendInt(b, int64(s.cfg.PageSize), 10)
	b = append(b, `",num_gpu_blocks="`...)
	b = strconv.AppendInt(b, int64(s.cfg.KVTokens/max(1, s.cfg.PageSize)), 10)
	b = append(b, `"} 1`+"\n"...)
	b = s.met.e2e.append(b, "vllm:e2e_request_latency_seconds", "Histogram of end to end request latency in seconds.", label)
	b = counter(b, "vllm:generation_tokens_total", "Total number of generated tokens.", st.genTokens.Load())
	b = s.met.itl.append(b, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds (one observation per content chunk after the first).", label)
	b = gauge(b, "vllm:kv_cache_usage_perc", "Fraction of the KV-cache pool reserved by running requests (from 0 to 1).",
		float64(st.usedKV.Load())/float64(s.cfg.KVTokens))
	b = gauge(b, "vllm:num_requests_running", "Number of requests in the running batch.", float64(st.running.Load()))
	b = gauge(b, "vllm:num_requests_waiting", "Number of requests waiting in the queue.", float64(st.waiting.Load()))
	b = counter(b, "vllm:prefix_cache_hits_total", "Prompt tokens found in the prefix cache.", st.cachedTokens.Load())
	b = counter(b, "vllm:prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.", st.promptTokens.Load())
	b = counter(b, "vllm:prompt_tokens_total", "Total number of prompt tokens processed.", st.promptTokens.Load())
	b = metricHead(b, "vllm:request_success_total", "Count of finished requests by finish reason.", "counter")
	for _, f := range []finish{finLength, finStop, finAbort} {
		b = append(b, "vllm:request_success_total{finish_reason=\""...)
		b = append(b, f.String()...)
		b = append(b, `",model_name=`...)
		b = append(b, s.modelQ...)
		b = append(b, "} "...)
		b = strconv.AppendUint(b, s.met.finished[f].Load(), 10)
		b = append(b, '\n')
	}
	b = s.met.ttft.append(b, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds (server side: arrival to the first content chunk written).", label)
	// SGLang's names for what it exports of the same, which its own tools
	// (and SGLang users' dashboards) read.
	b = counter(b, "sglang:cached_tokens_total", "Prompt tokens found in the prefix cache.", st.cachedTokens.Load())
	b = counter(b, "sglang:generation_tokens_total", "Total number of generated tokens.", st.genTokens.Load())
	b = gauge(b, "sglang:num_queue_reqs", "Number of requests waiting in the queue.", float64(st.waiting.Load()))
	b = gauge(b, "sglang:num_running_reqs", "Number of requests in the running batch.", float64(st.running.Load()))
	b = counter(b, "sglang:prompt_tokens_total", "Total number of prompt tokens processed.", st.promptTokens.Load())
	b = gauge(b, "sglang:token_usage", "Fraction of the KV-cache pool in use (from 0 to 1).", float64(st.usedKV.Load())/float64(s.cfg.KVTokens))
	b = metricHead(b, "sim:faults_injected_total", "Faults the simulator injected, by kind (docs/sim.md).", "counter")
	for k := Fault429; k < numFaultKinds; k++ {
		b = append(b, `sim:faults_injected_total{kind="`...)
		b = append(b, k.String()...)
		b = append(b, `",model_name=`...)
		b = append(b, s.modelQ...)
		b = append(b, "} "...)
		b = strconv.AppendUint(b, s.met.faults[k].Load(), 10)
		b = append(b, '\n')
	}
	return b
}

func metricHead(b []byte, name, help, typ string) []byte {
	b = append(b, "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, help...)
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, typ...)
	return append(b, '\n')
}

func (h *histogram) append(b []byte, name, help, label string) []byte {
	b = metricHead(b, name, help, "histogram")
	lbl := label[:len(label)-1] // without the closing brace
	var cum uint64
	for i := range h.counts {
		cum += h.counts[i].Load()
		b = append(b, name...)
		b = append(b, "_bucket"...)
		b = append(b, lbl...)
		b = append(b, `,le="`...)
		if i < len(h.bounds) {
			b = appendFloat(b, h.bounds[i])
		} else {
			b = append(b, "+Inf"...)
		}
		b = append(b, `"} `...)
		b = strconv.AppendUint(b, cum, 10)
		b = append(b, '\n')
	}
	b = append(b, name...)
	b = append(b, "_sum"...)
	b = append(b, label...)
	b = append(b, ' ')
	b = appendFloat(b, time.Duration(h.sum.Load()).Seconds())
	b = append(b, '\n')
	b = append(b, name...)
	b = append(b, "_count"...)
	b = append(b, label...)
	b = append(b, ' ')
	b = strconv.AppendUint(b, cum, 10)
	return append(b, '\n')
}
