package metrics

import (
	"strings"
	"testing"
)

// Every figure's names come in the table's order, each engine's first,
// and no engine's name stands in another's column twice.
func TestEngineNames(t *testing.T) {
	kv := Names(func(e Engine) string { return e.KVUsage })
	want := "vllm:kv_cache_usage_perc vllm:gpu_cache_usage_perc sglang:token_usage llamacpp:kv_cache_usage_ratio " +
		`nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="fraction"}`
	if got := strings.Join(kv, " "); got != want {
		t.Errorf("KV names %s, want %s", got, want)
	}
	running := Names(func(e Engine) string { return e.Running })
	if len(running) != 5 || running[3] != "tgi_batch_current_size" {
		t.Errorf("running names %q: want vLLM, SGLang, llama.cpp, TGI and Triton's", running)
	}
	for _, e := range Engines {
		if e.Name == "" {
			t.Errorf("an engine without a name: %+v", e)
		}
	}
}
