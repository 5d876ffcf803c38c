package backend

import (
	"testing"

	"benchserve/internal/py/pyjson"
)

// opt is the default options with the two flags most cases vary.
func opt(stream, ignoreEOS bool) Options {
	return Options{Stream: stream, IgnoreEOS: ignoreEOS, TopP: 1.0, LogprobStartLen: -1}
}

func extra(t *testing.T, s string) *pyjson.Object {
	t.Helper()
	o, err := pyjson.ParseObject([]byte(s))
	if err != nil {
		t.Fatalf("extra %s: %v", s, err)
	}
	return o
}

// TestBodies checks bodies byte for byte. The expected strings are what
// CPython's json.dumps prints for the payloads the reference tool builds,
// but for the one key we add: streamed completions and chat ask for usage
// (stream_options.include_usage, as the reference does for multi-turn
// rounds) so that output lengths are the server's counts.
func TestBodies(t *testing.T) {
	images := []string{"data:image/png;base64,AAAA", "data:image/jpeg;base64,BBBB"}
	cases := []struct {
		name, backend string
		opt           Options
		in            Input
		want          string
	}{
		{"native/plain", "sglang", opt(true, true), Input{Text: "Hi \"there\"\n é😀", OutputLen: 16},
			`{"text": "Hi \"there\"\n \u00e9\ud83d\ude00", "sampling_params": {"temperature": 0.0, "max_new_tokens": 16, "ignore_eos": true}, "stream": true, "lora_path": null, "return_logprob": false, "return_routed_experts": false, "logprob_start_len": -1}`},
		{"native/extra-lora-topp", "sglang-native", func() Options { o := opt(false, false); o.Temperature = 0.3; o.TopP = 0.9; return o }(), Input{Text: "p", OutputLen: 8, LoRA: "adapter-1", Extra: extra(t, `{"sampling_params": {"temperature": 0.7, "max_new_tokens": 5}, "top_k": 5, "stream": false}`)},
			`{"text": "p", "sampling_params": {"temperature": 0.7, "max_new_tokens": 5}, "stream": false, "lora_path": "adapter-1", "return_logprob": false, "return_routed_experts": false, "logprob_start_len": -1, "top_k": 5}`},
		{"native/ids-logprobs-images", "sglang", func() Options {
			o := opt(true, true)
			o.ReturnLogprob = true
			o.ReturnRoutedExperts = true
			o.LogprobStartLen = 0
			o.TopLogprobsNum = 5
			o.TokenIDsLogprob = []int{7, 8}
			return o
		}(), Input{IDs: []int{1, 2, 3}, OutputLen: 4, Images: images, Extra: extra(t, `{"return_logprob": true, "image_data": "x"}`)},
			`{"input_ids": [1, 2, 3], "sampling_params": {"temperature": 0.0, "max_new_tokens": 4, "ignore_eos": true}, "stream": true, "lora_path": null, "return_logprob": true, "return_routed_experts": true, "logprob_start_len": 0, "image_data": ["data:image/png;base64,AAAA", "data:image/jpeg;base64,BBBB"], "top_logprobs_num": 5, "token_ids_logprob": [7, 8]}`},
		{"native/topp", "sglang", func() Options { o := opt(true, true); o.TopP = 0.95; return o }(), Input{Text: "p", OutputLen: 8},
			`{"text": "p", "sampling_params": {"temperature": 0.0, "max_new_tokens": 8, "ignore_eos": true, "top_p": 0.95}, "stream": true, "lora_path": null, "return_logprob": false, "return_routed_experts": false, "logprob_start_len": -1}`},
		{"native/empty-tokenids", "sglang", func() Options { o := opt(true, true); o.TokenIDsLogprob = []int{}; return o }(), Input{Text: "p", OutputLen: 1},
			`{"text": "p", "sampling_params": {"temperature": 0.0, "max_new_tokens": 1, "ignore_eos": true}, "stream": true, "lora_path": null, "return_logprob": false, "return_routed_experts": false, "logprob_start_len": -1, "token_ids_logprob": []}`},
		{"completions/plain", "sglang-oai", opt(true, true), Input{Text: "Hello", OutputLen: 32, Model: "m"},
			`{"model": "m", "prompt": "Hello", "best_of": 1, "max_tokens": 32, "stream": true, "temperature": 0.0, "ignore_eos": true, "stream_options": {"include_usage": true}}`},
		{"completions/extra-lora-images-logprobs", "vllm", func() Options { o := opt(false, false); o.ReturnLogprob = true; o.TopLogprobsNum = 3; return o }(), Input{Text: "Hello", OutputLen: 32, Model: "m", LoRA: "lora-a", Images: images, Extra: extra(t, `{"temperature": 0.5, "top_k": -1, "max_tokens": 3, "model": "over"}`)},
			`{"model": "lora-a", "prompt": "Hello", "best_of": 1, "max_tokens": 3, "stream": false, "ignore_eos": false, "logprobs": 3, "temperature": 0.5, "top_k": -1, "lora_path": "lora-a", "image_data": ["data:image/png;base64,AAAA", "data:image/jpeg;base64,BBBB"]}`},
		{"completions/eos-in-extra", "lmdeploy", func() Options { o := opt(true, true); o.ReturnLogprob = true; return o }(), Input{Text: "Hello", OutputLen: 32, Model: "m", Extra: extra(t, `{"ignore_eos": false, "lora_path": "z"}`)},
			`{"model": "m", "prompt": "Hello", "best_of": 1, "max_tokens": 32, "stream": true, "temperature": 0.0, "ignore_eos": false, "lora_path": "z", "stream_options": {"include_usage": true}}`},
		{"chat/plain", "sglang-oai-chat", opt(true, true), Input{Text: "Say hello", OutputLen: 8, Model: "m"},
			`{"model": "m", "messages": [{"role": "user", "content": "Say hello"}], "max_completion_tokens": 8, "stream": true, "temperature": 0.0, "ignore_eos": true, "stream_options": {"include_usage": true}}`},
		{"chat/images-lora-extra", "vllm-chat", opt(true, true), Input{Text: "Describe", OutputLen: 8, Model: "m", LoRA: "lora-b", Images: images, Extra: extra(t, `{"temperature": 1.0, "lora_path": "first", "return_cached_tokens_details": true}`)},
			`{"model": "lora-b", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}, {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,BBBB"}}, {"type": "text", "text": "Describe"}]}], "max_completion_tokens": 8, "stream": true, "ignore_eos": true, "temperature": 1.0, "lora_path": "lora-b", "return_cached_tokens_details": true, "stream_options": {"include_usage": true}}`},
		{"chat/messages", "lmdeploy-chat", opt(false, false), Input{Messages: []byte(`[{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]`), OutputLen: 8, Model: "m"},
			`{"model": "m", "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}], "max_completion_tokens": 8, "stream": false, "temperature": 0.0, "ignore_eos": false}`},
		{"chat/usage-options-kept", "vllm-chat", opt(true, true), Input{Text: "u", OutputLen: 8, Model: "m", Extra: extra(t, `{"stream_options": {"continuous_usage_stats": true}, "top_k": 1}`)},
			`{"model": "m", "messages": [{"role": "user", "content": "u"}], "max_completion_tokens": 8, "stream": true, "temperature": 0.0, "ignore_eos": true, "stream_options": {"continuous_usage_stats": true, "include_usage": true}, "top_k": 1}`},
		{"chat/usage-false-kept", "vllm-chat", opt(true, true), Input{Text: "u", OutputLen: 8, Model: "m", Extra: extra(t, `{"stream_options": {"include_usage": false}}`)},
			`{"model": "m", "messages": [{"role": "user", "content": "u"}], "max_completion_tokens": 8, "stream": true, "temperature": 0.0, "ignore_eos": true, "stream_options": {"include_usage": false}}`},
		{"completions/usage-null-opts-out", "vllm", opt(true, true), Input{Text: "u", OutputLen: 8, Model: "m", Extra: extra(t, `{"stream_options": null}`)},
			`{"model": "m", "prompt": "u", "best_of": 1, "max_tokens": 8, "stream": true, "temperature": 0.0, "ignore_eos": true, "stream_options": null}`},
		{"embeddings/plain", "sglang-embedding", opt(true, true), Input{Text: "text to embed", OutputLen: 5, Model: "e5"},
			`{"input": "text to embed", "model": "e5"}`},
		{"embeddings/lora-extra", "vllm-embedding", opt(true, true), Input{Text: "t", Model: "e5", LoRA: "lo", Extra: extra(t, `{"model": "x", "encoding_format": "float"}`)},
			`{"input": "t", "model": "x", "lora_path": "lo", "encoding_format": "float"}`},
		{"trt/plain", "trt", opt(true, true), Input{Text: "Hello", OutputLen: 64, Model: "m"},
			`{"accumulate_tokens": true, "text_input": "Hello", "temperature": 1e-06, "top_p": 1.0, "max_tokens": 64, "stream": true, "min_length": 64, "end_id": 1048576}`},
		{"trt/extra-noeos", "trt", opt(true, false), Input{Text: "Hello", OutputLen: 64, Model: "m", Extra: extra(t, `{"end_id": 2, "beam_width": 1}`)},
			`{"accumulate_tokens": true, "text_input": "Hello", "temperature": 1e-06, "top_p": 1.0, "max_tokens": 64, "stream": true, "beam_width": 1}`},
		{"truss/plain", "truss", opt(true, true), Input{Text: "Hello", OutputLen: 10, Model: "m"},
			`{"model": "m", "prompt": "Hello", "temperature": 0.0, "best_of": 1, "max_tokens": 10, "stream": true, "ignore_eos": true}`},
		{"truss/extra", "truss", opt(false, false), Input{Text: "Hello", OutputLen: 10, Model: "m", Extra: extra(t, `{"temperature": 0.9, "top_p": 0.5}`)},
			`{"model": "m", "prompt": "Hello", "temperature": 0.9, "best_of": 1, "max_tokens": 10, "stream": false, "ignore_eos": false, "top_p": 0.5}`},
	}
	for _, c := range cases {
		cl, err := New(c.backend, "http://h", c.opt, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		in := c.in
		if got := string(cl.Body(&in)); got != c.want {
			t.Errorf("%s (%s):\n got  %s\n want %s", c.name, c.backend, got, c.want)
		}
	}
}

// TestBodyDoesNotChangeExtra checks that the shared extra body is not
// modified by building a body from it.
func TestBodyDoesNotChangeExtra(t *testing.T) {
	e := extra(t, `{"min_length": 3, "end_id": 2}`)
	cl, err := New("trt", "http://h", opt(true, false), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		cl.Body(&Input{Text: "x", OutputLen: 4, Extra: e})
	}
	if got := string(e.Bytes()); got != `{"min_length": 3, "end_id": 2}` {
		t.Errorf("extra body changed to %s", got)
	}
}
