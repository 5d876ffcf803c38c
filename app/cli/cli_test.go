package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	goflag "flag"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"benchserve/internal/py/argparse"
)

// The expected strings below were printed by CPython 3.11.7 running a copy
// of the reference cli_main's add_argument calls (serving.py at the spec's
// reference commit) plus our --no-keepalive, with parser.error overridden to
// return its message, then _validate_parsed_gsp_args, then print(repr(args))
// after replacing each --header item's value with ***.

// namespaceCases: a command line and Python's repr of the parsed Namespace.
var namespaceCases = []struct {
	args []string
	want string
}{
	{
		args: nil,
		want: "Namespace(backend='sglang', base_url=None, host='0.0.0.0', port=None, ready_check_timeout_sec=60, dataset_name='sharegpt', dataset_path='', dataset_offset=0, agentic_max_turns=None, speed_bench_category=None, speed_bench_output_len=512, model=None, served_model_name=None, tokenizer=None, num_prompts=1000, sharegpt_output_len=None, sharegpt_context_len=None, random_input_len=1024, random_output_len=1024, random_range_ratio=0.0, image_count=1, image_resolution='1080p', random_image_count=False, image_format='jpeg', image_content='random', request_rate=inf, use_trace_timestamps=False, max_concurrency=None, output_file=None, output_details=False, print_requests=False, disable_tqdm=False, disable_stream=False, return_logprob=False, top_logprobs_num=0, token_ids_logprob=None, logprob_start_len=-1, return_routed_experts=False, cache_report=False, seed=42, disable_ignore_eos=False, temperature=0.0, top_p=1.0, extra_request_body=None, apply_chat_template=False, profile=False, plot_throughput=False, profile_activities=['CPU', 'GPU'], profile_start_step=None, profile_steps=None, profile_num_steps=None, profile_by_stage=False, profile_stages=None, profile_output_dir=None, profile_prefix=None, lora_name=None, lora_request_distribution='uniform', lora_zipf_alpha=1.5, prompt_suffix='', pd_separated=False, profile_prefill_url=None, profile_decode_url=None, flush_cache=False, flush_cache_timeout=60.0, warmup_requests=1, tokenize_prompt=False, gsp_num_groups=64, gsp_prompts_per_group=16, gsp_system_prompt_len=2048, gsp_question_len=128, gsp_output_len=256, gsp_range_ratio=1.0, gsp_fast_prepare=False, gsp_send_routing_key=False, gsp_num_turns=1, gsp_ordered=False, gsp_group_distribution='uniform', gsp_zipf_alpha=None, mooncake_slowdown_factor=1.0, mooncake_num_rounds=1, mooncake_workload='conversation', fake_prefill=False, tag=None, header=None, no_keepalive=False, arrival='poisson', burstiness=1.0, request_timeout=None, connect_timeout=30.0, cacert=None, insecure=False, record_file=None, sim=False, sim_preset='h100-llama3-8b', duration=None, warmup_duration=None, ramp_up_strategy=None, ramp_up_start_rps=None, ramp_up_end_rps=None, concurrency_ramp_duration=None, goodput=None, percentile_metrics=None, metric_percentiles=None, threshold=None, server_metrics_interval=1.0, no_server_metrics=False, server_metrics_url=None, server_metrics_file=None, continuous_usage_stats=False, shard=None, start_at=None, start_in=None, request_cancellation_rate=None, request_cancellation_delay=None, steady_state_concurrency_ratio=None, soak=False, steady_state_output_file=None, url_strategy='round-robin', think_time='auto', think_time_scale=1.0, think_time_cap=None, max_sessions=None, session_turns=None, per_turn_input_len=None, consistency_probes=0, save_plan=None, replay_plan=None, metrics_addr=None, http2=False, h2c=False, rerank_docs=0, audio_duration_s='5', audio_sample_rate=16000)",
	},
	{
		args: []string{"--backend", "sglang-oai-chat", "--base-url", "http://h:1/", "--port", "8000", "--model", "it's", "--num-prompt=10", "--random-input", "1024", "--request-rate", "2.5", "--max-concurrency", "8", "--token-ids-logprob", "1", "-2", "--lora-name", "--profile-activities", "GPU", "MEM", "--profile-decode-url", "--gsp-group-distribution", "zipf", "--gsp-zipf-alpha", "1.2", "--extra-request-body", "{\"a\": \"b\"}", "--temperature", "-.5", "--header", "Authorization=Bearer s3cret", "X-Id=1", "NoValue", "--no-keepalive", "--flush-cache-timeout", "1e-3", "--seed", "-1", "--tag", "say \"hi\"", "--prompt-suffix", "tab\t\u00e9"},
		want: "Namespace(backend='sglang-oai-chat', base_url='http://h:1/', host='0.0.0.0', port=8000, ready_check_timeout_sec=60, dataset_name='sharegpt', dataset_path='', dataset_offset=0, agentic_max_turns=None, speed_bench_category=None, speed_bench_output_len=512, model=\"it's\", served_model_name=None, tokenizer=None, num_prompts=10, sharegpt_output_len=None, sharegpt_context_len=None, random_input_len=1024, random_output_len=1024, random_range_ratio=0.0, image_count=1, image_resolution='1080p', random_image_count=False, image_format='jpeg', image_content='random', request_rate=2.5, use_trace_timestamps=False, max_concurrency=8, output_file=None, output_details=False, print_requests=False, disable_tqdm=False, disable_stream=False, return_logprob=False, top_logprobs_num=0, token_ids_logprob=[1, -2], logprob_start_len=-1, return_routed_experts=False, cache_report=False, seed=-1, disable_ignore_eos=False, temperature=-0.5, top_p=1.0, extra_request_body='{\"a\": \"b\"}', apply_chat_template=False, profile=False, plot_throughput=False, profile_activities=['GPU', 'MEM'], profile_start_step=None, profile_steps=None, profile_num_steps=None, profile_by_stage=False, profile_stages=None, profile_output_dir=None, profile_prefix=None, lora_name=[], lora_request_distribution='uniform', lora_zipf_alpha=1.5, prompt_suffix='tab\\t\u00e9', pd_separated=False, profile_prefill_url=None, profile_decode_url=[], flush_cache=False, flush_cache_timeout=0.001, warmup_requests=1, tokenize_prompt=False, gsp_num_groups=64, gsp_prompts_per_group=16, gsp_system_prompt_len=2048, gsp_question_len=128, gsp_output_len=256, gsp_range_ratio=1.0, gsp_fast_prepare=False, gsp_send_routing_key=False, gsp_num_turns=1, gsp_ordered=False, gsp_group_distribution='zipf', gsp_zipf_alpha=1.2, mooncake_slowdown_factor=1.0, mooncake_num_rounds=1, mooncake_workload='conversation', fake_prefill=False, tag='say \"hi\"', header=['Authorization=***', 'X-Id=***', '***'], no_keepalive=True, arrival='poisson', burstiness=1.0, request_timeout=None, connect_timeout=30.0, cacert=None, insecure=False, record_file=None, sim=False, sim_preset='h100-llama3-8b', duration=None, warmup_duration=None, ramp_up_strategy=None, ramp_up_start_rps=None, ramp_up_end_rps=None, concurrency_ramp_duration=None, goodput=None, percentile_metrics=None, metric_percentiles=None, threshold=None, server_metrics_interval=1.0, no_server_metrics=False, server_metrics_url=None, server_metrics_file=None, continuous_usage_stats=False, shard=None, start_at=None, start_in=None, request_cancellation_rate=None, request_cancellation_delay=None, steady_state_concurrency_ratio=None, soak=False, steady_state_output_file=None, url_strategy='round-robin', think_time='auto', think_time_scale=1.0, think_time_cap=None, max_sessions=None, session_turns=None, per_turn_input_len=None, consistency_probes=0, save_plan=None, replay_plan=None, metrics_addr=None, http2=False, h2c=False, rerank_docs=0, audio_duration_s='5', audio_sample_rate=16000)",
	},
	{
		args: []string{"--dataset-name", "generated-shared-prefix", "--gsp-num-groups", "8", "--lora-name", "a", "b", "--profile-prefill-url", "u1", "u2", "--disable-stream", "--request-rate", "inf", "--random-range-ratio", "0.5", "--lora-zipf-alpha", "2", "--output-file", "out.jsonl", "--num-prompts", "5", "--num-prompts", "6", "--profile-stages", "prefill", "decode", "--speed-bench-category", "mixed", "--dataset-path", "/d/it's \"x\".jsonl"},
		want: "Namespace(backend='sglang', base_url=None, host='0.0.0.0', port=None, ready_check_timeout_sec=60, dataset_name='generated-shared-prefix', dataset_path='/d/it\\'s \"x\".jsonl', dataset_offset=0, agentic_max_turns=None, speed_bench_category='mixed', speed_bench_output_len=512, model=None, served_model_name=None, tokenizer=None, num_prompts=6, sharegpt_output_len=None, sharegpt_context_len=None, random_input_len=1024, random_output_len=1024, random_range_ratio=0.5, image_count=1, image_resolution='1080p', random_image_count=False, image_format='jpeg', image_content='random', request_rate=inf, use_trace_timestamps=False, max_concurrency=None, output_file='out.jsonl', output_details=False, print_requests=False, disable_tqdm=False, disable_stream=True, return_logprob=False, top_logprobs_num=0, token_ids_logprob=None, logprob_start_len=-1, return_routed_experts=False, cache_report=False, seed=42, disable_ignore_eos=False, temperature=0.0, top_p=1.0, extra_request_body=None, apply_chat_template=False, profile=False, plot_throughput=False, profile_activities=['CPU', 'GPU'], profile_start_step=None, profile_steps=None, profile_num_steps=None, profile_by_stage=False, profile_stages=['prefill', 'decode'], profile_output_dir=None, profile_prefix=None, lora_name=['a', 'b'], lora_request_distribution='uniform', lora_zipf_alpha=2.0, prompt_suffix='', pd_separated=False, profile_prefill_url=['u1', 'u2'], profile_decode_url=None, flush_cache=False, flush_cache_timeout=60.0, warmup_requests=1, tokenize_prompt=False, gsp_num_groups=8, gsp_prompts_per_group=16, gsp_system_prompt_len=2048, gsp_question_len=128, gsp_output_len=256, gsp_range_ratio=1.0, gsp_fast_prepare=False, gsp_send_routing_key=False, gsp_num_turns=1, gsp_ordered=False, gsp_group_distribution='uniform', gsp_zipf_alpha=None, mooncake_slowdown_factor=1.0, mooncake_num_rounds=1, mooncake_workload='conversation', fake_prefill=False, tag=None, header=None, no_keepalive=False, arrival='poisson', burstiness=1.0, request_timeout=None, connect_timeout=30.0, cacert=None, insecure=False, record_file=None, sim=False, sim_preset='h100-llama3-8b', duration=None, warmup_duration=None, ramp_up_strategy=None, ramp_up_start_rps=None, ramp_up_end_rps=None, concurrency_ramp_duration=None, goodput=None, percentile_metrics=None, metric_percentiles=None, threshold=None, server_metrics_interval=1.0, no_server_metrics=False, server_metrics_url=None, server_metrics_file=None, continuous_usage_stats=False, shard=None, start_at=None, start_in=None, request_cancellation_rate=None, request_cancellation_delay=None, steady_state_concurrency_ratio=None, soak=False, steady_state_output_file=None, url_strategy='round-robin', think_time='auto', think_time_scale=1.0, think_time_cap=None, max_sessions=None, session_turns=None, per_turn_input_len=None, consistency_probes=0, save_plan=None, replay_plan=None, metrics_addr=None, http2=False, h2c=False, rerank_docs=0, audio_duration_s='5', audio_sample_rate=16000)",
	},
}

func TestNamespaceMatchesPython(t *testing.T) {
	for _, c := range namespaceCases {
		cfg, _, err := parse(c.args, 80)
		if err != nil {
			t.Errorf("parse(%q): %v", c.args, err)
			continue
		}
		if got := Namespace(cfg); got != c.want {
			t.Errorf("Namespace after %q:\n got %s\nwant %s", c.args, got, c.want)
		}
	}
}

// errorCases: a command line and the message Python's argparse passed to
// error() (printed after "benchserve: error: ").
var errorCases = []struct {
	args []string
	want string
}{
	{[]string{"--random", "5"}, "ambiguous option: --random could match --random-input-len, --random-output-len, --random-range-ratio, --random-image-count"},
	{[]string{"--random=5"}, "ambiguous option: --random=5 could match --random-input-len, --random-output-len, --random-range-ratio, --random-image-count"},
	{[]string{"--gsp", "3"}, "ambiguous option: --gsp could match --gsp-num-groups, --gsp-prompts-per-group, --gsp-system-prompt-len, --gsp-question-len, --gsp-output-len, --gsp-range-ratio, --gsp-fast-prepare, --gsp-send-routing-key, --gsp-num-turns, --gsp-ordered, --gsp-group-distribution, --gsp-zipf-alpha"},
	{[]string{"--p"}, "ambiguous option: --p could match --port, --print-requests, --profile, --plot-throughput, --profile-activities, --profile-start-step, --profile-steps, --profile-num-steps, --profile-by-stage, --profile-stages, --profile-output-dir, --profile-prefix, --prompt-suffix, --pd-separated, --profile-prefill-url, --profile-decode-url, --percentile-metrics, --per-turn-input-len"},
	{[]string{"--he"}, "ambiguous option: --he could match --help, --header"},
	{[]string{"--pro", "x"}, "ambiguous option: --pro could match --profile, --profile-activities, --profile-start-step, --profile-steps, --profile-num-steps, --profile-by-stage, --profile-stages, --profile-output-dir, --profile-prefix, --prompt-suffix, --profile-prefill-url, --profile-decode-url"},
	{[]string{"--profile-p", "u"}, "ambiguous option: --profile-p could match --profile-prefix, --profile-prefill-url"},
	{[]string{"--lora", "a"}, "ambiguous option: --lora could match --lora-name, --lora-request-distribution, --lora-zipf-alpha"},
	{[]string{"--num-prompts", "abc"}, "argument --num-prompts: invalid int value: 'abc'"},
	{[]string{"--num-prompts"}, "argument --num-prompts: expected one argument"},
	{[]string{"--num-prompts", "-x"}, "argument --num-prompts: expected one argument"},
	{[]string{"--request-rate", "-inf"}, "argument --request-rate: expected one argument"},
	{[]string{"--request-rate", "fast"}, "argument --request-rate: invalid float value: 'fast'"},
	{[]string{"--header"}, "argument --header: expected at least one argument"},
	{[]string{"--token-ids-logprob"}, "argument --token-ids-logprob: expected at least one argument"},
	{[]string{"--token-ids-logprob", "1", "x"}, "argument --token-ids-logprob: invalid int value: 'x'"},
	{[]string{"--disable-stream=1"}, "argument --disable-stream: ignored explicit argument '1'"},
	{[]string{"--no-keepalive=yes"}, "argument --no-keepalive: ignored explicit argument 'yes'"},
	{[]string{"--backend", "openai"}, "argument --backend: invalid choice: 'openai' (choose from 'sglang', 'sglang-native', 'sglang-oai', 'sglang-oai-chat', 'sglang-embedding', 'vllm', 'vllm-chat', 'vllm-embedding', 'lmdeploy', 'lmdeploy-chat', 'trt', 'gserver', 'truss', 'openai-responses', 'anthropic-messages', 'openai-speech', 'vllm-rerank', 'sglang-rerank', 'vllm-score', 'tei-rerank', 'openai-transcription', 'vllm-classify', 'cohere-rerank')"},
	{[]string{"--dataset-name", "mooncake-conversation"}, "argument --dataset-name: invalid choice: 'mooncake-conversation' (choose from 'agentic-trace', 'sharegpt', 'custom', 'openai', 'random', 'random-ids', 'generated-shared-prefix', 'mmmu', 'image', 'mooncake', 'longbench_v2', 'speed-bench', 'mooncake-sessions', 'tracelab', 'audio')"},
	{[]string{"--use-trace-timestamps", "true"}, "unrecognized arguments: true"},
	{[]string{"--profile-activities", "CPU", "FOO"}, "argument --profile-activities: invalid choice: 'FOO' (choose from 'CPU', 'GPU', 'CUDA_PROFILER', 'XPU', 'MEM')"},
	{[]string{"--speed-bench-category", "x"}, "argument --speed-bench-category: invalid choice: 'x' (choose from 'low_entropy', 'mixed', 'high_entropy')"},
	{[]string{"--lora-request-distribution", "zipf"}, "argument --lora-request-distribution: invalid choice: 'zipf' (choose from 'uniform', 'distinct', 'skewed')"},
	{[]string{"--mooncake-workload", "x"}, "argument --mooncake-workload: invalid choice: 'x' (choose from 'mooncake', 'conversation', 'synthetic', 'toolagent')"},
	{[]string{"--gsp-group-distribution", "x"}, "argument --gsp-group-distribution: invalid choice: 'x' (choose from 'uniform', 'zipf')"},
	{[]string{"--profile-prefill-url", "a", "--profile-decode-url", "b"}, "argument --profile-decode-url: not allowed with argument --profile-prefill-url"},
	{[]string{"--profile-decode-url", "--profile-prefill-url"}, "argument --profile-prefill-url: not allowed with argument --profile-decode-url"},
	{[]string{"--flush-cache-timeout", "0"}, "argument --flush-cache-timeout: expected a finite float > 0, got '0'"},
	{[]string{"--flush-cache-timeout", "nan"}, "argument --flush-cache-timeout: expected a finite float > 0, got 'nan'"},
	{[]string{"--flush-cache-timeout", "-1"}, "argument --flush-cache-timeout: expected a finite float > 0, got '-1'"},
	{[]string{"--dataset-name", "generated-shared-prefix", "--gsp-zipf-alpha", "1"}, "--gsp-zipf-alpha is only meaningful with --gsp-group-distribution=zipf; remove --gsp-zipf-alpha or set --gsp-group-distribution=zipf"},
	{[]string{"--dataset-name", "generated-shared-prefix", "--gsp-group-distribution", "zipf"}, "--gsp-group-distribution=zipf requires --gsp-zipf-alpha (a finite float > 0)"},
	{[]string{"--gsp-group-distribution", "zipf", "--gsp-zipf-alpha", "inf"}, "argument --gsp-zipf-alpha: expected a finite float > 0, got 'inf'"},
	{[]string{"--gsp-zipf-alpha", "0", "--gsp-group-distribution", "zipf"}, "argument --gsp-zipf-alpha: expected a finite float > 0, got '0'"},
	{[]string{"--foo"}, "unrecognized arguments: --foo"},
	{[]string{"--foo=1", "bar"}, "unrecognized arguments: --foo=1 bar"},
	{[]string{"--", "x"}, "unrecognized arguments: -- x"},
	{[]string{"sim"}, "unrecognized arguments: sim"},
	{[]string{"-hx"}, "argument -h/--help: ignored explicit argument 'x'"},
	{[]string{"--port", "80.5"}, "argument --port: invalid int value: '80.5'"},
	{[]string{"--seed", ""}, "argument --seed: invalid int value: ''"},
	{[]string{"--temperature=", "1"}, "argument --temperature: invalid float value: ''"},
}

func TestErrorsMatchPython(t *testing.T) {
	for _, c := range errorCases {
		_, _, err := parse(c.args, 80)
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("parse(%q) = %v, want UsageError %q", c.args, err, c.want)
			continue
		}
		if ue.Msg != c.want {
			t.Errorf("parse(%q)\n got %s\nwant %s", c.args, ue.Msg, c.want)
		}
		if ue.Error() != ue.Msg {
			t.Errorf("Error() = %q, want the message", ue.Error())
		}
	}
}

func TestDefaults(t *testing.T) {
	c := Defaults()
	if c.Backend != "sglang" || c.Host != "0.0.0.0" || c.NumPrompts != 1000 || c.Seed != 42 ||
		c.ReadyCheckTimeoutSec != 60 || c.LogprobStartLen != -1 || c.FlushCacheTimeout != 60 ||
		c.GSPRangeRatio != 1 || c.LoraZipfAlpha != 1.5 || c.MooncakeWorkload != "conversation" {
		t.Errorf("defaults: %+v", c)
	}
	if !math.IsInf(c.RequestRate, 1) {
		t.Errorf("RequestRate = %v, want +Inf", c.RequestRate)
	}
	if c.Port != nil || c.Model != nil || c.GSPZipfAlpha != nil || c.LoraName != nil || c.Header != nil || c.TokenIDsLogprob != nil {
		t.Errorf("None defaults are not nil: %+v", c)
	}
	if !reflect.DeepEqual(c.ProfileActivities, []string{"CPU", "GPU"}) {
		t.Errorf("ProfileActivities = %q", c.ProfileActivities)
	}
	// Each parse gets its own default list.
	c.ProfileActivities[0] = "MEM"
	if Defaults().ProfileActivities[0] != "CPU" {
		t.Error("the default --profile-activities list is shared between parses")
	}
}

func TestParseForms(t *testing.T) {
	cases := []struct {
		args  []string
		check func(c *cfg) bool
	}{
		{[]string{"--num-prompt=10"}, func(c *cfg) bool { return c.NumPrompts == 10 }},
		{[]string{"--random-input", "1024", "--random-output", "7"}, func(c *cfg) bool { return c.RandomInputLen == 1024 && c.RandomOutputLen == 7 }},
		{[]string{"--num-prompts", "5", "--num-prompts=6"}, func(c *cfg) bool { return c.NumPrompts == 6 }},
		{[]string{"--profile"}, func(c *cfg) bool { return c.Profile && c.ProfileActivities != nil }},
		{[]string{"--lora-name"}, func(c *cfg) bool { return c.LoraName != nil && len(c.LoraName) == 0 }},
		{[]string{"--lora-name", "a", "b", "--disable-stream"}, func(c *cfg) bool {
			return reflect.DeepEqual(c.LoraName, []string{"a", "b"}) && c.DisableStream
		}},
		{[]string{"--lora-name=a", "--lora-name", "b"}, func(c *cfg) bool { return reflect.DeepEqual(c.LoraName, []string{"b"}) }},
		{[]string{"--token-ids-logprob", "1", "-2", "3"}, func(c *cfg) bool { return reflect.DeepEqual(c.TokenIDsLogprob, []int{1, -2, 3}) }},
		{[]string{"--temperature", "-.5", "--logprob-start-len", "-1"}, func(c *cfg) bool { return c.Temperature == -0.5 && c.LogprobStartLen == -1 }},
		{[]string{"--request-rate", "INF"}, func(c *cfg) bool { return math.IsInf(c.RequestRate, 1) }},
		{[]string{"--request-rate", " 1_0.5 "}, func(c *cfg) bool { return c.RequestRate == 10.5 }},
		{[]string{"--port", "+8_000"}, func(c *cfg) bool { return *c.Port == 8000 }},
		{[]string{"--header", "A=1", "B=2=3"}, func(c *cfg) bool { return reflect.DeepEqual(c.Header, []string{"A=1", "B=2=3"}) }},
		{[]string{"--model=--"}, func(c *cfg) bool { return *c.Model == "--" }},
		{[]string{"--gsp-group-distribution", "zipf", "--gsp-zipf-alpha", "0.8"}, func(c *cfg) bool { return *c.GSPZipfAlpha == 0.8 }},
		{[]string{"--no-keep"}, func(c *cfg) bool { return c.NoKeepalive }},
		{[]string{"--profile-prefill-url"}, func(c *cfg) bool { return c.ProfilePrefillURL != nil && c.ProfileDecodeURL == nil }},
	}
	for _, tc := range cases {
		c, err := Parse(tc.args)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.args, err)
			continue
		}
		if !tc.check(c) {
			t.Errorf("Parse(%q) gave %+v", tc.args, c)
		}
	}
}

func TestParseGiven(t *testing.T) {
	_, given, err := ParseGiven([]string{"--num-prompt", "1000", "--flush-cache", "--lora-name"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"--num-prompts": true, "--flush-cache": true, "--lora-name": true}
	if !reflect.DeepEqual(given, want) {
		t.Errorf("given = %v, want %v", given, want)
	}
}

// Every bench.Config field is bound to exactly one flag. The fields of the
// embedded dataset.Params count as Config's, but for the two the run fills
// in (Name and Path; its Model is hidden by Config's own).
func TestEveryFieldHasAFlag(t *testing.T) {
	var fields []reflect.StructField
	for _, f := range reflect.VisibleFields(reflect.TypeOf(cfg{})) {
		if f.Anonymous || len(f.Index) > 1 && (f.Name == "Name" || f.Name == "Path") {
			continue
		}
		fields = append(fields, f)
	}
	if len(flags) != len(fields) {
		t.Errorf("%d flags for %d Config fields", len(flags), len(fields))
	}
	seen := map[string]string{}
	for _, f := range flags {
		c := new(cfg)
		f.bind.set(c, sample(f))
		v := reflect.ValueOf(c).Elem()
		changed := ""
		for _, field := range fields {
			if !v.FieldByIndex(field.Index).IsZero() {
				changed += field.Name
			}
		}
		if changed == "" || seen[changed] != "" {
			t.Errorf("%s sets field %q (already set by %q)", f.opt.Name, changed, seen[changed])
		}
		seen[changed] = f.opt.Name
	}
}

// sample is a non-zero value of the flag's type.
func sample(f flag) any {
	var one any
	switch f.opt.Type.Name {
	case "int":
		one = 7
	case "float", "_finite_positive_float":
		one = 0.5
	default:
		one = "x"
	}
	switch {
	case f.opt.Action == argparse.StoreTrue:
		return true
	case f.opt.Nargs != 0 || f.opt.Action == argparse.Append:
		return []any{one}
	}
	return one
}

func TestHelp(t *testing.T) {
	_, _, err := parse([]string{"--num-prompts", "3", "-h", "--bogus"}, 100)
	var h *HelpRequested
	if !errors.As(err, &h) || !errors.Is(err, ErrHelp) {
		t.Fatalf("err = %v, want HelpRequested", err)
	}
	if !strings.HasPrefix(h.Text, "usage: benchserve [-h] [--version]\n                  [--backend {sglang,") {
		t.Errorf("help starts %q", h.Text[:60])
	}
	// Which section each option line is in.
	section := map[string]string{}
	var titles []string
	cur := ""
	for _, line := range strings.Split(h.Text, "\n") {
		if strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "usage") {
			cur = strings.TrimSuffix(line, ":")
			titles = append(titles, cur)
		}
		if strings.HasPrefix(line, "  -h, --help") {
			section["--help"] = cur
		}
		if name, ok := strings.CutPrefix(line, "  --"); ok {
			name, _, _ = strings.Cut(name, " ")
			section["--"+name] = cur
		}
	}
	wantTitles := []string{"options", "Target", "Dataset", "Traffic", "SLOs and gates", "Request content", "Output", "Profiling"}
	if !reflect.DeepEqual(titles, wantTitles) {
		t.Errorf("sections %q, want %q", titles, wantTitles)
	}
	if section["--help"] != "options" || section["--version"] != "options" {
		t.Errorf("--help is in %q, --version in %q", section["--help"], section["--version"])
	}
	for _, f := range flags {
		if section[f.opt.Name] != f.group {
			t.Errorf("%s is in section %q, want %q", f.opt.Name, section[f.opt.Name], f.group)
		}
	}
	flat := strings.Join(strings.Fields(h.Text), " ")
	for _, s := range []string{"(default: 1000)", "(default: inf)", "(default: CPU GPU)", "--extra-request-body JSON", "--lora-name [LORA_NAME ...]"} {
		if !strings.Contains(flat, s) {
			t.Errorf("help lacks %q", s)
		}
	}
	// Help text is wrapped to the width; only the usage lines and option
	// headings, which argparse never breaks, may overflow.
	_, body, _ := strings.Cut(h.Text, "\n\n")
	for _, line := range strings.Split(body, "\n") {
		if len(line) > 98 && !strings.HasPrefix(line, "  --") {
			t.Errorf("line longer than 98: %q", line)
		}
	}
}

// testdata/usage_80.txt is Python's format_usage() at COLUMNS=80 for the
// same copy of the reference parser as above, with --extra-request-body's
// metavar set to JSON like ours.
func TestUsageMatchesPython(t *testing.T) {
	want, err := os.ReadFile("testdata/usage_80.txt")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("COLUMNS", "80")
	if got := Usage(); got != string(want) {
		t.Errorf("Usage():\n%s\nwant:\n%s", got, want)
	}
}

func TestColumns(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	if n := (IO{Getenv: env("123")}).columns(); n != 123 {
		t.Errorf("columns() = %d with COLUMNS=123", n)
	}
	if n := (IO{Getenv: env("wide")}).columns(); n != 80 {
		t.Errorf("columns() = %d with a bad COLUMNS and no terminal, want 80", n)
	}
	if n := (IO{}).columns(); n != 80 {
		t.Errorf("columns() = %d with no environment and no terminal, want 80", n)
	}
}

var dumpFlags = goflag.String("dump-flags", "", "write the flag table as JSON to this file (for testdata/usage.py)")

// TestDumpFlags writes the flag table for testdata/usage.py when asked.
func TestDumpFlags(t *testing.T) {
	if *dumpFlags == "" {
		return
	}
	type f struct {
		Name    string   `json:"name"`
		Action  string   `json:"action"`
		Nargs   string   `json:"nargs"`
		Choices []string `json:"choices"`
		Metavar string   `json:"metavar"`
	}
	var out []f
	for _, fl := range flags {
		x := f{Name: fl.opt.Name, Choices: fl.opt.Choices, Metavar: fl.opt.Metavar}
		switch fl.opt.Action {
		case argparse.StoreTrue:
			x.Action = "store_true"
		case argparse.Append:
			x.Action = "append"
		}
		switch fl.opt.Nargs {
		case argparse.OneOrMore:
			x.Nargs = "+"
		case argparse.ZeroOrMore:
			x.Nargs = "*"
		}
		out = append(out, x)
	}
	data, _ := json.Marshal(out)
	if err := os.WriteFile(*dumpFlags, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// BENCHSERVE_RECEIVE names the receiver of plain-HTTP responses; a value
// it does not know is a usage error, named, before any connection.
func TestReceiveEnv(t *testing.T) {
	var out, errb bytes.Buffer
	getenv := func(k string) string {
		if k == receiveEnv {
			return "epoll"
		}
		return ""
	}
	code := Main(context.Background(), []string{"--base-url", "http://127.0.0.1:1"}, IO{Stdout: &out, Stderr: &errb, Getenv: getenv})
	want := `BENCHSERVE_RECEIVE: unknown receiver "epoll" (choose auto, uring, events or poller)`
	if code != 2 || !strings.Contains(errb.String(), want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, errb.String(), want)
	}
}
