package cli

import (
	"strings"
	"testing"
)

// A given flag the configuration would not use is accepted, as by the
// reference, with a note naming it and why it has no effect; a flag that
// is used passes without one.
func TestUnusedFlags(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		note string // "" for none
	}{
		{args: []string{"--dataset-name", "mooncake", "--random-output-len", "10"},
			note: "--random-output-len: --dataset-name mooncake ignores it (output lengths come from the trace)"},
		{args: []string{"--dataset-name", "sharegpt", "--random-input-len", "10"},
			note: "--random-input-len: --dataset-name sharegpt ignores it (its prompts come from the ShareGPT conversations)"},
		{args: []string{"--dataset-name", "mmmu", "--random-output-len", "10"}},
		{args: []string{"--dataset-name", "mmmu", "--random-range-ratio", "1"},
			note: "--random-range-ratio: --dataset-name mmmu ignores it (it draws no random lengths)"},
		{args: []string{"--dataset-name", "generated-shared-prefix", "--random-range-ratio", "1"},
			note: "--random-range-ratio: --dataset-name generated-shared-prefix ignores it (its lengths use --gsp-range-ratio)"},
		{args: []string{"--dataset-name", "random", "--random-range-ratio", "0.5", "--dataset-path", "sg.json"}},
		{args: []string{"--dataset-name", "random-ids", "--dataset-path", "sg.json"},
			note: "--dataset-path: --dataset-name random-ids ignores it (its prompts come from consecutive token ids)"},
		{args: []string{"--dataset-name", "random", "--apply-chat-template"},
			note: "--apply-chat-template: --dataset-name random ignores it (its prompts are random token text, sent as is)"},
		{args: []string{"--dataset-name", "sharegpt", "--apply-chat-template"}},
		{args: []string{"--dataset-name", "image", "--apply-chat-template"}},
		{args: []string{"--dataset-name", "random", "--sharegpt-output-len", "8"},
			note: "--sharegpt-output-len: --dataset-name random ignores it (output lengths come from --random-output-len)"},
		{args: []string{"--dataset-name", "longbench_v2", "--sharegpt-output-len", "8", "--sharegpt-context-len", "9000"}},
		{args: []string{"--dataset-name", "openai", "--sharegpt-context-len", "9000"},
			note: "--sharegpt-context-len: --dataset-name openai ignores it (it drops no requests by length)"},
		{args: []string{"--dataset-name", "random", "--image-count", "2"},
			note: "--image-count: --dataset-name random ignores it (only the image dataset generates images)"},
		{args: []string{"--dataset-name", "openai", "--prompt-suffix", "x"},
			note: "--prompt-suffix: --dataset-name openai ignores it (only sharegpt and custom append it)"},
		{args: []string{"--dataset-name", "mooncake", "--tokenize-prompt"},
			note: "--tokenize-prompt: --dataset-name mooncake ignores it (only random and random-ids send token ids)"},
		{args: []string{"--dataset-name", "random", "--gsp-num-groups", "4"},
			note: "--gsp-num-groups: --dataset-name random ignores it (only generated-shared-prefix reads the --gsp-* flags)"},
		{args: []string{"--dataset-name", "random", "--gsp-group-distribution", "zipf", "--gsp-zipf-alpha", "1.2"},
			note: "--gsp-group-distribution: --dataset-name random ignores it (only generated-shared-prefix reads the --gsp-* flags)\n" +
				"--gsp-zipf-alpha: --dataset-name random ignores it (only generated-shared-prefix reads the --gsp-* flags)"},
		{args: []string{"--dataset-name", "random", "--gsp-zipf-alpha", "1.2"}, // the reference refuses alpha with uniform
			note: "--gsp-zipf-alpha: --dataset-name random ignores it (only generated-shared-prefix reads the --gsp-* flags)"},
		{args: []string{"--dataset-name", "random", "--mooncake-num-rounds", "2"},
			note: "--mooncake-num-rounds: --dataset-name random ignores it (only mooncake replays a trace)"},
		{args: []string{"--dataset-name", "mooncake", "--mooncake-workload", "toolagent", "--dataset-path", "t.jsonl"},
			note: "--mooncake-workload: not used with --dataset-path, which names the trace to read"},
		{args: []string{"--dataset-name", "random", "--use-trace-timestamps"},
			note: "--use-trace-timestamps: --dataset-name random ignores it (it has no timestamps)"},
		{args: []string{"--dataset-name", "agentic-trace", "--dataset-offset", "3", "--agentic-max-turns", "2"}},
		{args: []string{"--dataset-name", "random-ids", "--session-turns", "2-4", "--per-turn-input-len", "8", "--think-time", "exp:10", "--max-sessions", "2"}},
		{args: []string{"--dataset-name", "random-ids", "--per-turn-input-len", "8"},
			note: "--per-turn-input-len: has no effect without --session-turns"},
		{args: []string{"--dataset-name", "sharegpt", "--session-turns", "3", "--per-turn-input-len", "8"},
			note: "--session-turns: --dataset-name sharegpt ignores it (only random and random-ids make synthetic sessions)\n" +
				"--per-turn-input-len: --dataset-name sharegpt ignores it (only random and random-ids make synthetic sessions)"},
		{args: []string{"--dataset-name", "sharegpt", "--speed-bench-output-len", "64"},
			note: "--speed-bench-output-len: --dataset-name sharegpt ignores it (output lengths are the completions', or --sharegpt-output-len)"},
		{args: []string{"--dataset-name", "generated-shared-prefix", "--gsp-num-groups", "4", "--num-prompts", "100"},
			note: "--num-prompts: not used by --dataset-name generated-shared-prefix, which sends --gsp-num-groups × --gsp-prompts-per-group = 64 requests"},
		{args: []string{"--max-concurrency", "0"}, note: "--max-concurrency: 0 sets no limit on requests in flight, as in the reference"},
		{args: []string{"--max-concurrency", "8"}},
		{args: []string{"--warmup-requests", "-1"}, note: "--warmup-requests: -1 sends no warmup, as 0 does (as in the reference)"},
		{args: []string{"--warmup-requests", "0"}},
		{args: []string{"--warmup-requests", "1", "--warmup-duration", "5"}, note: "--warmup-requests: --warmup-duration replaces it"},
		{args: []string{"--warmup-requests", "3", "--warmup-duration", "5"}}, // refused with the load flags
		{args: []string{"--burstiness", "2"}, note: "--burstiness: not used with --request-rate inf, which sends every request at once"},
		{args: []string{"--arrival", "constant", "--request-rate", "4"}},
		{args: []string{"--dataset-name", "mooncake", "--burstiness", "2", "--request-rate", "4"},
			note: "--burstiness: not used by --dataset-name mooncake, which sends each request at its trace time"},
		{args: []string{"--backend", "vllm", "--flush-cache", "--flush-cache-timeout", "5"},
			note: "--flush-cache-timeout: not used with --backend vllm (only sglang's /flush_cache takes a timeout)"},
		{args: []string{"--flush-cache-timeout", "5"}, note: "--flush-cache-timeout: not used without --flush-cache"},
		{args: []string{"--flush-cache-timeout", "5"}, env: map[string]string{"SGLANG_IS_IN_CI": "true"}},
		{args: []string{"--backend", "vllm", "--temperature", "0.7"},
			note: "--temperature: --backend vllm ignores it (only the native /generate backends sglang and sglang-native send it; for others use --extra-request-body)"},
		{args: []string{"--backend", "sglang-native", "--temperature", "0.7", "--top-p", "0.9", "--return-routed-experts"}},
		{args: []string{"--backend", "vllm", "--return-logprob"},
			note: "--return-logprob: --backend vllm asks for logprobs only with both --return-logprob and --top-logprobs-num > 0"},
		{args: []string{"--backend", "vllm", "--return-logprob", "--top-logprobs-num", "3"}},
		{args: []string{"--backend", "vllm-chat", "--top-logprobs-num", "3"},
			note: "--top-logprobs-num: --backend vllm-chat ignores it (it sends no logprob fields)"},
		{args: []string{"--backend", "trt", "--disable-stream"},
			note: "--disable-stream: not used with --backend trt, which always streams (as in the reference)"},
		{args: []string{"--backend", "vllm-embedding", "--disable-ignore-eos"},
			note: "--disable-ignore-eos: --backend vllm-embedding ignores it (embeddings generate no tokens)"},
		{args: []string{"--backend", "truss", "--lora-name", "a"},
			note: "--lora-name: --backend truss ignores it (trt, truss, openai-speech, tei-rerank and openai-transcription requests name no adapter)"},
		{args: []string{"--backend", "trt", "--header", "X-A=1"},
			note: "--header: --backend trt ignores it (trt requests carry no headers, as in the reference)"},
		{args: []string{"--lora-request-distribution", "distinct"}, note: "--lora-request-distribution: not used without --lora-name"},
		{args: []string{"--lora-name", "a", "b", "--lora-zipf-alpha", "2"},
			note: "--lora-zipf-alpha: only --lora-name with --lora-request-distribution skewed uses it"},
		{args: []string{"--base-url", "http://h:1", "--port", "8000"}, note: "--port: not used with --base-url, which names the server"},
		{args: []string{"--insecure"}, note: "--insecure: not used with an http:// server (only https servers are verified)"},
		{args: []string{"--base-url", "https://h", "--insecure"}},
		{args: []string{"--sim-preset", "instant"}, note: "--sim-preset: only --sim starts the simulator"},
		{args: []string{"--profile-output-dir", "/tmp/p"}, note: "--profile-output-dir: not used without --profile"},
		{args: []string{"--profile", "--profile-decode-url", "http://d:1"}, note: "--profile-decode-url: not used without --pd-separated"},
		{args: []string{"--profile", "--profile-steps", "3", "--profile-num-steps", "5"},
			note: "--profile-num-steps: not used with --profile-steps, which replaces num_steps in the request"},
		{args: []string{"--profile", "--pd-separated", "--profile-prefill-url", "http://p:1", "--profile-output-dir", "/tmp/p"}},
	}
	for _, c := range cases {
		cfg, given, err := parse(c.args, 80)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		notes := checkGiven(cfg, given, func(k string) string { return c.env[k] })
		if note := strings.Join(notes, "\n"); note != c.note {
			t.Errorf("%q: note %q, want %q", c.args, note, c.note)
		}
	}
}

// Every rule names a real flag, once.
func TestUnusedFlagsAreFlags(t *testing.T) {
	known := map[string]bool{}
	for _, f := range flags {
		known[f.opt.Name] = true
	}
	seen := map[string]bool{}
	for _, u := range unusedFlags {
		if !known[u.flag] || seen[u.flag] {
			t.Errorf("rule for %s: unknown or repeated flag", u.flag)
		}
		seen[u.flag] = true
	}
}

// A sweep over finite rates uses --arrival and --burstiness even when the
// base --request-rate is inf: no note says otherwise.
func TestSweepRatesUseArrival(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"--search", "request-rate", "--slo", "p99_ttft_ms<100"}, true},
		{[]string{"--sweep-profile", "auto"}, true},
		{[]string{"--request-rate", "inf", "10"}, true},
		{[]string{"--request-rate", "inf"}, false},
		{[]string{"--max-concurrency", "1", "2"}, false},
	} {
		sc, _, err := parseSweep(append([]string{"--dataset-name", "random-ids", "--arrival", "constant"}, c.args...), 80)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if got := sweepsRates(sc); got != c.want {
			t.Errorf("%v: sweepsRates %v, want %v", c.args, got, c.want)
		}
	}
}
