package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"benchserve/internal/py/argparse"
	"benchserve/internal/version"
	"benchserve/onebatch"
)

const (
	oneBatchProg        = "benchserve one-batch"
	oneBatchDescription = "Send one batch of prompts as one streamed request to a running server, for every " +
		"combination of --batch-size, --input-len and --output-len, and report its latency and throughput: a " +
		"drop-in for python -m sglang.bench_one_batch_server (it never launches a server). Ctrl-C or SIGTERM starts no new " +
		"case and lets the one in flight finish; a second cancels it; a third exits at once; signals within a second count as one."
)

// launchFlags are SGLang server flags that scripts pass to the reference
// tool, which would launch a server with them; here they are accepted and
// ignored with one warning.
var launchFlags = []argparse.Option{
	{Name: "--trust-remote-code", Action: argparse.StoreTrue},
	{Name: "--dp-size", Aliases: []string{"--dp", "--data-parallel-size"}, Type: argparse.Int},
	{Name: "--mem-fraction-static", Type: argparse.Float},
	{Name: "--context-length", Type: argparse.Int},
	{Name: "--max-running-requests", Type: argparse.Int},
	{Name: "--chunked-prefill-size", Type: argparse.Int},
	{Name: "--cuda-graph-max-bs", Type: argparse.Int},
	{Name: "--attention-backend"},
	{Name: "--quantization"},
	{Name: "--dtype"},
	{Name: "--kv-cache-dtype"},
	{Name: "--load-format"},
	{Name: "--served-model-name"},
	{Name: "--device"},
	{Name: "--disable-radix-cache", Action: argparse.StoreTrue},
	{Name: "--enable-dp-attention", Action: argparse.StoreTrue},
	{Name: "--disaggregation-mode"},
	{Name: "--disaggregation-transfer-backend"},
}

func newOneBatchParser() *argparse.Parser {
	p := argparse.New(oneBatchProg, oneBatchDescription)
	str, integ, float := argparse.Str, argparse.Int, argparse.Float
	srv := p.Group("server (connect only)")
	srv.Add(argparse.Option{Name: "--model-path", Aliases: []string{"--model"}, Help: "Only written to --pydantic-result-filename (the reference requires it; here it is optional)."})
	srv.Add(argparse.Option{Name: "--tokenizer-path", Help: "Tokenizer when --local-tokenizer-path is not given: a Hub id, a directory, a tokenizer.json, or o200k_base/cl100k_base (default: the server's)."})
	srv.Add(argparse.Option{Name: "--tp-size", Aliases: []string{"--tp", "--tensor-parallel-size"}, Type: integ, Default: 1, Help: "GPUs per server, for the report's cost columns."})
	srv.Add(argparse.Option{Name: "--host", Type: str, Default: "127.0.0.1", Help: "Server host when --base-url is not given."})
	srv.Add(argparse.Option{Name: "--port", Type: integ, Default: 30000, Help: "Server port when --base-url is not given."})
	ig := p.Group("server launch flags (accepted and ignored: benchserve never launches a server)")
	for _, o := range launchFlags {
		o.Help = "ignored"
		ig.Add(o)
	}

	b := p.Group("benchmark")
	b.Add(argparse.Option{Name: "--run-name", Default: "default", Help: "Copied into every result row."})
	b.Add(argparse.Option{Name: "--batch-size", Type: integ, Nargs: argparse.OneOrMore, Default: []any{1}, Help: "Batch sizes to sweep."})
	b.Add(argparse.Option{Name: "--input-len", Type: integ, Nargs: argparse.OneOrMore, Default: []any{1024}, Help: "Input lengths to sweep."})
	b.Add(argparse.Option{Name: "--output-len", Type: integ, Nargs: argparse.OneOrMore, Default: []any{16}, Help: "Output lengths to sweep."})
	b.Add(argparse.Option{Name: "--input-len-step-percentage", Type: float, Default: 0.0, Help: "Accepted for compatibility; it has no effect (nor in the reference)."})
	b.Add(argparse.Option{Name: "--skip-warmup", Action: argparse.StoreTrue, Help: "Skip the warmup batches."})
	b.Add(argparse.Option{Name: "--enable-multi-batch", Action: argparse.StoreTrue, Help: "Let batch sizes exceed the server's running cap (the server serves them in waves)."})
	b.Add(argparse.Option{Name: "--seed", Type: integ, Default: 42, Help: "Seeds the prompt generators once for the run."})
	b.Add(argparse.Option{Name: "--base-url", Default: "", Help: "The server's URL; else a server already running at --host:--port."})
	b.Add(argparse.Option{Name: "--backend", Choices: []string{"sglang", "vllm"}, Default: "sglang", Help: "sglang: /generate; vllm: /v1/completions."})
	b.Add(argparse.Option{Name: "--local-tokenizer-path", Default: "", Help: "Tokenizer to use instead of the one the server names."})
	b.Add(argparse.Option{Name: "--temperature", Type: float, Default: 0.0, Help: "Sampling temperature."})
	b.Add(argparse.Option{Name: "--disable-ignore-eos", Action: argparse.StoreTrue, Help: "Let requests stop at EOS, and report early stops and the steady-state window (sglang)."})
	b.Add(argparse.Option{Name: "--return-logprob", Action: argparse.StoreTrue, Help: "Ask for log probabilities."})
	b.Add(argparse.Option{Name: "--client-stream-interval", Type: integ, Default: 1, Help: "Sent as sampling_params.stream_interval (sglang)."})
	b.Add(argparse.Option{Name: "--parallel-batch", Action: argparse.StoreTrue, Help: "Add \"parallel_batch\": true to the body (sglang)."})
	b.Add(argparse.Option{Name: "--fake-prefill", Action: argparse.StoreTrue, Help: "Decode-only runs against a PD decode server with the fake transfer backend: sends bootstrap_host 2.2.2.2, bootstrap_room 0 and skip_cache_insert."})
	b.Add(argparse.Option{Name: "--lora-name", Nargs: argparse.ZeroOrMore, Help: "LoRA adapters: one for every prompt, or several drawn per prompt (sglang)."})
	b.Add(argparse.Option{Name: "--lora-request-distribution", Choices: []string{"uniform", "distinct", "skewed"}, Default: "uniform", Help: "How several --lora-name are drawn."})
	b.Add(argparse.Option{Name: "--lora-zipf-alpha", Type: float, Default: 1.1, Help: "skewed: weight of adapter i is alpha^-i; must be > 1."})
	b.Add(argparse.Option{Name: "--dataset-name", Choices: []string{"mmmu", "random", "random-ids", "generated-shared-prefix", "sharegpt", "custom"}, Default: "random", Help: "Where prompts come from."})
	b.Add(argparse.Option{Name: "--dataset-path", Default: "", Help: "ShareGPT JSON (random, sharegpt) or a JSONL file (custom)."})
	b.Add(argparse.Option{Name: "--fixed-prompt-file", Default: "", Help: "One prompt file for every request (instead of --dataset-name)."})
	b.Add(argparse.Option{Name: "--apply-chat-template", Action: argparse.StoreTrue, Help: "Wrap the fixed prompt or the replayed prompts in the tokenizer's chat template."})
	b.Add(argparse.Option{Name: "--gsp-num-groups", Type: integ, Default: 1, Help: "generated-shared-prefix: groups."})
	b.Add(argparse.Option{Name: "--gsp-system-prompt-len", Type: integ, Default: 2048, Help: "generated-shared-prefix: shared prefix tokens."})
	b.Add(argparse.Option{Name: "--gsp-question-len", Type: integ, Default: 128, Help: "generated-shared-prefix: question tokens."})
	b.Add(argparse.Option{Name: "--gsp-output-len", Type: integ, Default: 256, Help: "generated-shared-prefix: output tokens (replaces --output-len)."})
	b.Add(argparse.Option{Name: "--cache-hit-rate", Type: float, Default: 0.0, Help: "Fraction of each prompt put in the prefix cache before the batch, 0 to 1."})
	b.Add(argparse.Option{Name: "--result-filename", Default: "result.jsonl", Help: "JSONL file each case's row is appended to; \"\" writes none."})
	b.Add(argparse.Option{Name: "--pydantic-result-filename", Help: "Also write the results as a JSON array here (overwritten)."})
	b.Add(argparse.Option{Name: "--no-append-to-github-summary", Dest: "append_to_github_summary", Action: argparse.StoreTrue,
		Help: "Do not append the report to $GITHUB_STEP_SUMMARY when SGLANG_IS_IN_CI is set."})
	b.Add(argparse.Option{Name: "--show-report", Action: argparse.StoreTrue, Help: "Print the summary table."})
	b.Add(argparse.Option{Name: "--server-args-for-metrics", Nargs: argparse.ZeroOrMore, Help: "Copied into --pydantic-result-filename."})
	b.Add(argparse.Option{Name: "--profile", Action: argparse.StoreTrue, Help: "Run every case again with the server's profiler on."})
	b.Add(argparse.Option{Name: "--profile-activities", Nargs: argparse.OneOrMore, Choices: []string{"CPU", "GPU", "XPU"}, Default: []any{"CPU", "GPU"}, Help: "What the profiler records."})
	b.Add(argparse.Option{Name: "--profile-start-step", Type: integ, Help: "Forward step the profiler starts at."})
	b.Add(argparse.Option{Name: "--profile-steps", Type: integ, Default: 5, Help: "Forward steps to profile."})
	b.Add(argparse.Option{Name: "--profile-by-stage", Action: argparse.StoreTrue, Help: "Profile prefill and decode separately."})
	b.Add(argparse.Option{Name: "--profile-prefix", Help: "Trace file prefix (bs-N-il-M is appended)."})
	b.Add(argparse.Option{Name: "--profile-output-dir", Help: "Trace directory (default $SGLANG_TORCH_PROFILER_DIR, else /tmp)."})
	ours := p.Group("benchserve")
	ours.Add(argparse.Option{Name: "--hourly-cost-per-gpu", Type: float, Default: 2.0, Help: "Dollars per GPU-hour for the report's cost columns (the reference uses 4 on a Blackwell client, else 2)."})
	ours.Add(argparse.Option{Name: "--request-timeout", Type: float, Default: 600.0, Help: "Seconds to wait for a connection or for the next bytes of a reply (not for the whole stream)."})
	return p
}

// parseOneBatch parses the arguments after "benchserve one-batch". Errors
// are *UsageError or *HelpRequested; ignored names the launch flags given.
func parseOneBatch(args []string, cols int) (cfg *onebatch.Config, ignored []string, err error) {
	ns, err := parseArgs(newOneBatchParser(), args, cols)
	if ue, ok := err.(*UsageError); ok && strings.HasPrefix(ue.Msg, "unrecognized arguments: -") {
		// Most likely a flag of the server the reference would launch.
		ue.Msg += " (benchserve never launches a server: start it with python -m sglang.launch_server and its flags, " +
			"then point --base-url or --host/--port at it)"
	}
	if err != nil {
		return nil, nil, err
	}
	s := func(d string) string { v, _ := ns.Get(d).(string); return v }
	sp := func(d string) *string {
		if v, ok := ns.Get(d).(string); ok {
			return &v
		}
		return nil
	}
	i := func(d string) int { return ns.Get(d).(int) }
	f := func(d string) float64 { return ns.Get(d).(float64) }
	bo := func(d string) bool { return ns.Get(d).(bool) }
	ints := func(d string) []int {
		var out []int
		for _, v := range ns.Get(d).([]any) {
			out = append(out, v.(int))
		}
		return out
	}
	strs := func(d string) []string {
		l, ok := ns.Get(d).([]any)
		if !ok {
			return nil
		}
		out := []string{}
		for _, v := range l {
			out = append(out, v.(string))
		}
		return out
	}
	c := &onebatch.Config{
		BaseURL: s("base_url"), Host: s("host"), Port: i("port"),
		Backend: s("backend"), ModelPath: sp("model_path"), TokenizerPath: s("tokenizer_path"),
		LocalTokenizerPath: s("local_tokenizer_path"), TPSize: i("tp_size"), HourlyCostPerGPU: f("hourly_cost_per_gpu"),
		RunName: s("run_name"), BatchSizes: ints("batch_size"), InputLens: ints("input_len"), OutputLens: ints("output_len"),
		InputLensSet: ns.Given("input_len"), OutputLenSet: ns.Given("output_len"),
		SkipWarmup: bo("skip_warmup"), EnableMultiBatch: bo("enable_multi_batch"), Seed: i("seed"),
		Temperature: f("temperature"), DisableIgnoreEOS: bo("disable_ignore_eos"), ReturnLogprob: bo("return_logprob"),
		StreamInterval: i("client_stream_interval"), ParallelBatch: bo("parallel_batch"), FakePrefill: bo("fake_prefill"),
		LoraNames: strs("lora_name"), LoraDistribution: s("lora_request_distribution"), LoraZipfAlpha: f("lora_zipf_alpha"),
		DatasetName: s("dataset_name"), DatasetPath: s("dataset_path"), FixedPromptFile: s("fixed_prompt_file"),
		ApplyChatTemplate: bo("apply_chat_template"), GSPNumGroups: i("gsp_num_groups"), GSPSystemLen: i("gsp_system_prompt_len"),
		GSPQuestionLen: i("gsp_question_len"), GSPOutputLen: i("gsp_output_len"), CacheHitRate: f("cache_hit_rate"),
		ResultFilename: s("result_filename"), PydanticResultFilename: sp("pydantic_result_filename"),
		AppendGithubSummary: !bo("append_to_github_summary"), ShowReport: bo("show_report"),
		ServerArgsForMetrics: strs("server_args_for_metrics"),
		Profile:              bo("profile"), ProfileActivities: strs("profile_activities"), ProfileSteps: i("profile_steps"),
		ProfileByStage: bo("profile_by_stage"), ProfilePrefix: sp("profile_prefix"), ProfileOutputDir: sp("profile_output_dir"),
	}
	if v, ok := ns.Get("profile_start_step").(int); ok {
		c.ProfileStartStep = &v
	}
	t := f("request_timeout")
	if !(t > 0) {
		return nil, nil, &UsageError{Msg: fmt.Sprintf("argument --request-timeout: must be positive, got %v", t)}
	}
	c.Idle = time.Duration(t * float64(time.Second))
	for _, o := range launchFlags {
		if ns.Given(strings.ReplaceAll(o.Name[2:], "-", "_")) {
			ignored = append(ignored, o.Name)
		}
	}
	return c, ignored, nil
}

// OneBatchMain runs "benchserve one-batch" and returns the exit code: 0,
// 1 when a case failed (the rows of the cases before it are kept), 2 for a
// bad command line or no server to measure, 130 when interrupted.
func OneBatchMain(ctx context.Context, args []string, pio IO) int {
	if pio.Getenv == nil {
		pio.Getenv = os.Getenv
	}
	cfg, ignored, err := parseOneBatch(args, pio.columns())
	if code, done := parseOutcome(err, pio); done {
		return code
	}
	if len(ignored) > 0 {
		fmt.Fprintf(pio.Stderr, "%s: note: %s: no effect here: benchserve never launches a server, it measures the one at --base-url\n",
			oneBatchProg, strings.Join(ignored, ", "))
	}
	// The first signal lets the case in flight finish and starts no other;
	// the second cancels it; the third exits at once.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop, cut := interrupts(ctx, pio)
	err = onebatch.Run(ctx, cfg, onebatch.Env{Stdout: pio.Stdout, Stderr: pio.Stderr, Getenv: pio.Getenv, Version: version.String(),
		Interrupt: stop, Cut: cut})
	return exitCode(err, pio.Stderr)
}
