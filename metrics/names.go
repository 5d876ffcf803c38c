package metrics

// Engine is one inference engine's names for the figures the server view
// reads from its /metrics ("" where it exports none). llm-d serves through
// vLLM, whose names its model servers export.
type Engine struct {
	Name string
	// Gauges: requests running and waiting, the KV cache's usage (0–1).
	Running, Waiting, KVUsage string
	// Counters: preemptions, prefix-cache hits and queries (in tokens),
	// prompt and generated tokens (TGI counts tokens in histograms, whose
	// sum is the tokens), speculative decoding's accepted and draft tokens.
	Preemptions, CacheHits, CacheQueries, PromptTokens, GenTokens, Accepted, Drafted string
	// AcceptLength is SGLang's mean accepted length, a gauge.
	AcceptLength string
	// Histograms of latency, in seconds.
	TTFT, ITL, E2E string
}

// Engines is the table of engines' names, in the order they are tried: a
// figure is read under the first name the server exports. A name with
// labels matches that series only.
var Engines = []Engine{
	{Name: "vLLM", Running: "vllm:num_requests_running", Waiting: "vllm:num_requests_waiting", KVUsage: "vllm:kv_cache_usage_perc",
		Preemptions: "vllm:num_preemptions_total", CacheHits: "vllm:prefix_cache_hits_total", CacheQueries: "vllm:prefix_cache_queries_total",
		PromptTokens: "vllm:prompt_tokens_total", GenTokens: "vllm:generation_tokens_total",
		Accepted: "vllm:spec_decode_num_accepted_tokens_total", Drafted: "vllm:spec_decode_num_draft_tokens_total",
		TTFT: "vllm:time_to_first_token_seconds", ITL: "vllm:inter_token_latency_seconds", E2E: "vllm:e2e_request_latency_seconds"},
	{Name: "vLLM, older names", KVUsage: "vllm:gpu_cache_usage_perc", Preemptions: "vllm:num_preemptions",
		CacheHits: "vllm:prefix_cache_hits", CacheQueries: "vllm:prefix_cache_queries", ITL: "vllm:time_per_output_token_seconds"},
	{Name: "SGLang", Running: "sglang:num_running_reqs", Waiting: "sglang:num_queue_reqs", KVUsage: "sglang:token_usage",
		CacheHits: "sglang:cached_tokens_total", CacheQueries: "sglang:prompt_tokens_total",
		PromptTokens: "sglang:prompt_tokens_total", GenTokens: "sglang:generation_tokens_total", AcceptLength: "sglang:spec_accept_length",
		TTFT: "sglang:time_to_first_token_seconds", ITL: "sglang:inter_token_latency_seconds", E2E: "sglang:e2e_request_latency_seconds"},
	{Name: "SGLang, older names", ITL: "sglang:time_per_output_token_seconds"},
	{Name: "llama.cpp (llama-server --metrics)", Running: "llamacpp:requests_processing", Waiting: "llamacpp:requests_deferred",
		KVUsage: "llamacpp:kv_cache_usage_ratio", PromptTokens: "llamacpp:prompt_tokens_total", GenTokens: "llamacpp:tokens_predicted_total"},
	{Name: "TGI", Running: "tgi_batch_current_size", Waiting: "tgi_queue_size",
		PromptTokens: "tgi_request_input_length", GenTokens: "tgi_request_generated_tokens", E2E: "tgi_request_duration"},
	{Name: "TensorRT-LLM on Triton", Running: `nv_trt_llm_request_metrics{request_type="active"}`,
		Waiting: "nv_inference_pending_request_count", KVUsage: `nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="fraction"}`},
}

// Names are the engines' names for one figure, in the table's order.
func Names(figure func(Engine) string) []string {
	var out []string
	for _, e := range Engines {
		if n := figure(e); n != "" {
			out = append(out, n)
		}
	}
	return out
}
