package cli

import (
	"math"

	"benchserve/backend"
	"benchserve/bench"
	"benchserve/dataset"
	"benchserve/internal/py/argparse"
	"benchserve/sim"
)

// Help sections, in the order the help prints them.
const (
	gTarget   = "Target"
	gDataset  = "Dataset"
	gTraffic  = "Traffic"
	gContent  = "Request content"
	gOutput   = "Output"
	gProfile  = "Profiling"
	gSLO      = "SLOs and gates"
	numGroups = 7
)

var groupOrder = [numGroups]string{gTarget, gDataset, gTraffic, gSLO, gContent, gOutput, gProfile}

type flag struct {
	group string
	opt   argparse.Option
	bind  binding
}

type cfg = bench.Config

var (
	str   = argparse.Str
	integ = argparse.Int
	float = argparse.Float
)

// flags is every option in the order the reference's cli_main adds them:
// that order decides the Namespace repr and the list in an "ambiguous
// option" message. Ours (--no-keepalive and the rest) come last, then the
// flags a dataset declares that the table does not place (withDatasets).
var flags = withDatasets([]flag{
	{gTarget, argparse.Option{Name: "--backend", Type: str, Choices: backend.Names(), Default: backend.DefaultName,
		Help: "Server kind; decides the endpoint, the request body and the default port."},
		val(func(c *cfg) *string { return &c.Backend })},
	{gTarget, argparse.Option{Name: "--base-url", Type: str, Action: argparse.Append,
		Help: "Server base URL; overrides --host and --port. Repeat it, or give a comma-separated list, for several replicas of one deployment (see --url-strategy)."},
		joined(func(c *cfg) **string { return &c.BaseURL })},
	{gTarget, argparse.Option{Name: "--host", Type: str, Default: "0.0.0.0",
		Help: "Server host."},
		val(func(c *cfg) *string { return &c.Host })},
	{gTarget, argparse.Option{Name: "--port", Type: integ,
		Help: "Server port. Default: the backend's usual port."},
		ptr(func(c *cfg) **int { return &c.Port })},
	{gTarget, argparse.Option{Name: "--ready-check-timeout-sec", Type: integ, Default: 60,
		Help: "Seconds to wait for the server to answer /v1/models before starting; 0 skips the check."},
		val(func(c *cfg) *int { return &c.ReadyCheckTimeoutSec })},
	{gDataset, argparse.Option{Name: "--dataset-name", Type: str, Choices: dataset.Names(), Default: dataset.DefaultName,
		Help: "Dataset to build the requests from."},
		val(func(c *cfg) *string { return &c.DatasetName })},
	{gDataset, argparse.Option{Name: "--dataset-path", Type: str, Default: "",
		Help: "Path of the dataset file."},
		val(func(c *cfg) *string { return &c.DatasetPath })},
	datasetFlag("--dataset-offset"),
	datasetFlag("--agentic-max-turns"),
	datasetFlag("--speed-bench-category"),
	datasetFlag("--speed-bench-output-len"),
	{gTarget, argparse.Option{Name: "--model", Type: str,
		Help: "Model name or path. Default: the first model the server lists at /v1/models."},
		ptr(func(c *cfg) **string { return &c.Model })},
	{gTarget, argparse.Option{Name: "--served-model-name", Type: str,
		Help: "Model name sent in requests. Default: --model."},
		ptr(func(c *cfg) **string { return &c.ServedModelName })},
	{gTarget, argparse.Option{Name: "--tokenizer", Type: str,
		Help: "Tokenizer name or path. Default: the server's /model_info, else --model."},
		ptr(func(c *cfg) **string { return &c.Tokenizer })},
	{gDataset, argparse.Option{Name: "--num-prompts", Type: integ, Default: 1000,
		Help: "Number of requests to send (ignored by generated-shared-prefix)."},
		val(func(c *cfg) *int { return &c.NumPrompts })},
	{gDataset, argparse.Option{Name: "--sharegpt-output-len", Type: integ,
		Help: "Output tokens per request, replacing the dataset's (sharegpt, custom, openai, agentic-trace, longbench_v2)."},
		ptr(func(c *cfg) **int { return &c.SharegptOutputLen })},
	{gDataset, argparse.Option{Name: "--sharegpt-context-len", Type: integ,
		Help: "Drop requests longer than this context length (sharegpt, custom, longbench_v2)."},
		ptr(func(c *cfg) **int { return &c.SharegptContextLen })},
	{gDataset, argparse.Option{Name: "--random-input-len", Type: integ, Default: 1024,
		Help: "Input tokens per request (random, random-ids, image)."},
		val(func(c *cfg) *int { return &c.RandomInputLen })},
	{gDataset, argparse.Option{Name: "--random-output-len", Type: integ, Default: 1024,
		Help: "Output tokens per request (random, random-ids, image, mmmu)."},
		val(func(c *cfg) *int { return &c.RandomOutputLen })},
	{gDataset, argparse.Option{Name: "--random-range-ratio", Type: float, Default: 0.0,
		Help: "Lengths are drawn from [len*ratio, len] (random, random-ids, image)."},
		val(func(c *cfg) *float64 { return &c.RandomRangeRatio })},
	datasetFlag("--image-count"),
	datasetFlag("--image-resolution"),
	datasetFlag("--random-image-count"),
	datasetFlag("--image-format"),
	datasetFlag("--image-content"),
	{gTraffic, argparse.Option{Name: "--request-rate", Type: float, Default: math.Inf(1),
		Help: "Requests per second, as a Poisson process; inf sends every request at once."},
		val(func(c *cfg) *float64 { return &c.RequestRate })},
	{gTraffic, argparse.Option{Name: "--use-trace-timestamps", Action: argparse.StoreTrue,
		Help: "mooncake: report the request rate as \"trace\"; as in the reference tool, scheduling is unchanged."},
		val(func(c *cfg) *bool { return &c.UseTraceTimestamps })},
	{gTraffic, argparse.Option{Name: "--max-concurrency", Type: integ,
		Help: "At most this many requests in flight; the rate may then fall below --request-rate."},
		ptr(func(c *cfg) **int { return &c.MaxConcurrency })},
	{gOutput, argparse.Option{Name: "--output-file", Type: str,
		Help: "JSONL file the result line is appended to. Default: a name made from the run's settings."},
		ptr(func(c *cfg) **string { return &c.OutputFile })},
	{gOutput, argparse.Option{Name: "--output-details", Action: argparse.StoreTrue,
		Help: "Add per-request details to the result line."},
		val(func(c *cfg) *bool { return &c.OutputDetails })},
	{gOutput, argparse.Option{Name: "--print-requests", Action: argparse.StoreTrue,
		Help: "Print each request and its answer as it completes (sglang-oai-chat)."},
		val(func(c *cfg) *bool { return &c.PrintRequests })},
	{gOutput, argparse.Option{Name: "--disable-tqdm", Action: argparse.StoreTrue,
		Help: "No progress bar."},
		val(func(c *cfg) *bool { return &c.DisableTqdm })},
	{gContent, argparse.Option{Name: "--disable-stream", Action: argparse.StoreTrue,
		Help: "Ask for whole answers instead of streams."},
		val(func(c *cfg) *bool { return &c.DisableStream })},
	{gContent, argparse.Option{Name: "--return-logprob", Action: argparse.StoreTrue,
		Help: "Ask for logprobs."},
		val(func(c *cfg) *bool { return &c.ReturnLogprob })},
	{gContent, argparse.Option{Name: "--top-logprobs-num", Type: integ, Default: 0,
		Help: "Top logprobs per token, with --return-logprob."},
		val(func(c *cfg) *int { return &c.TopLogprobsNum })},
	{gContent, argparse.Option{Name: "--token-ids-logprob", Type: integ, Nargs: argparse.OneOrMore,
		Help: "Token ids whose logprobs to return, with --return-logprob."},
		list(func(c *cfg) *[]int { return &c.TokenIDsLogprob })},
	{gContent, argparse.Option{Name: "--logprob-start-len", Type: integ, Default: -1,
		Help: "First input position to return logprobs for; -1: none, 0: all. With --return-logprob."},
		val(func(c *cfg) *int { return &c.LogprobStartLen })},
	{gContent, argparse.Option{Name: "--return-routed-experts", Action: argparse.StoreTrue,
		Help: "Ask for the routed experts."},
		val(func(c *cfg) *bool { return &c.ReturnRoutedExperts })},
	{gOutput, argparse.Option{Name: "--cache-report", Action: argparse.StoreTrue,
		Help: "Report prefix-cache hits after the run (sglang backends)."},
		val(func(c *cfg) *bool { return &c.CacheReport })},
	{gTraffic, argparse.Option{Name: "--seed", Type: integ, Default: 42,
		Help: "Random seed."},
		val(func(c *cfg) *int { return &c.Seed })},
	{gContent, argparse.Option{Name: "--disable-ignore-eos", Action: argparse.StoreTrue,
		Help: "Let the server stop at end of sequence."},
		val(func(c *cfg) *bool { return &c.DisableIgnoreEOS })},
	{gContent, argparse.Option{Name: "--temperature", Type: float, Default: 0.0,
		Help: "Sampling temperature (sglang native backend)."},
		val(func(c *cfg) *float64 { return &c.Temperature })},
	{gContent, argparse.Option{Name: "--top-p", Type: float, Default: 1.0,
		Help: "Nucleus sampling top_p, sent when below 1 (sglang native backend)."},
		val(func(c *cfg) *float64 { return &c.TopP })},
	{gContent, argparse.Option{Name: "--extra-request-body", Type: str, Metavar: "JSON",
		Help: `JSON object merged into every request body, e.g. '{"top_k": 20}'.`},
		ptr(func(c *cfg) **string { return &c.ExtraRequestBody })},
	{gDataset, argparse.Option{Name: "--apply-chat-template", Action: argparse.StoreTrue,
		Help: "Apply the tokenizer's chat template to the prompts."},
		val(func(c *cfg) *bool { return &c.ApplyChatTemplate })},
	{gProfile, argparse.Option{Name: "--profile", Action: argparse.StoreTrue,
		Help: "Run the server's torch profiler during the benchmark (server needs SGLANG_TORCH_PROFILER_DIR)."},
		val(func(c *cfg) *bool { return &c.Profile })},
	{gOutput, argparse.Option{Name: "--plot-throughput", Action: argparse.StoreTrue,
		Help: "Plot tokens per second and concurrent requests over time."},
		val(func(c *cfg) *bool { return &c.PlotThroughput })},
	{gProfile, argparse.Option{Name: "--profile-activities", Type: str, Nargs: argparse.OneOrMore,
		Choices: []string{"CPU", "GPU", "CUDA_PROFILER", "XPU", "MEM"}, Default: []any{"CPU", "GPU"},
		Help: "What the profiler records."},
		list(func(c *cfg) *[]string { return &c.ProfileActivities })},
	{gProfile, argparse.Option{Name: "--profile-start-step", Type: integ,
		Help: "Start profiling after this many forward steps."},
		ptr(func(c *cfg) **int { return &c.ProfileStartStep })},
	{gProfile, argparse.Option{Name: "--profile-steps", Type: integ,
		Help: "Profile this many steps; the server then stops on its own."},
		ptr(func(c *cfg) **int { return &c.ProfileSteps })},
	{gProfile, argparse.Option{Name: "--profile-num-steps", Type: integ,
		Help: "Steps the server profiles (num_steps); it then stops on its own."},
		ptr(func(c *cfg) **int { return &c.ProfileNumSteps })},
	{gProfile, argparse.Option{Name: "--profile-by-stage", Action: argparse.StoreTrue,
		Help: "Profile the prefill and decode stages separately (num_steps defaults to 5)."},
		val(func(c *cfg) *bool { return &c.ProfileByStage })},
	{gProfile, argparse.Option{Name: "--profile-stages", Type: str, Nargs: argparse.OneOrMore,
		Help: "Stages to profile."},
		list(func(c *cfg) *[]string { return &c.ProfileStages })},
	{gProfile, argparse.Option{Name: "--profile-output-dir", Type: str,
		Help: "Directory for the traces. Default: $SGLANG_TORCH_PROFILER_DIR, else /tmp."},
		ptr(func(c *cfg) **string { return &c.ProfileOutputDir })},
	{gProfile, argparse.Option{Name: "--profile-prefix", Type: str,
		Help: "File name prefix for the profiler's traces."},
		ptr(func(c *cfg) **string { return &c.ProfilePrefix })},
	{gContent, argparse.Option{Name: "--lora-name", Type: str, Nargs: argparse.ZeroOrMore,
		Help: "LoRA adapter names to spread the requests over."},
		list(func(c *cfg) *[]string { return &c.LoraName })},
	{gContent, argparse.Option{Name: "--lora-request-distribution", Type: str, Choices: []string{"uniform", "distinct", "skewed"}, Default: "uniform",
		Help: "How requests pick an adapter: uniform at random, distinct (a new one each request) or skewed (Zipf)."},
		val(func(c *cfg) *string { return &c.LoraDistribution })},
	{gContent, argparse.Option{Name: "--lora-zipf-alpha", Type: float, Default: 1.5,
		Help: "Zipf exponent for skewed; must be above 1."},
		val(func(c *cfg) *float64 { return &c.LoraZipfAlpha })},
	{gDataset, argparse.Option{Name: "--prompt-suffix", Type: str, Default: "",
		Help: "Text added to the end of every user prompt."},
		val(func(c *cfg) *string { return &c.PromptSuffix })},
	{gProfile, argparse.Option{Name: "--pd-separated", Action: argparse.StoreTrue,
		Help: "PD-disaggregated server: profile the workers named by --profile-prefill-url or --profile-decode-url."},
		val(func(c *cfg) *bool { return &c.PDSeparated })},
	{gProfile, argparse.Option{Name: "--profile-prefill-url", Type: str, Nargs: argparse.ZeroOrMore,
		Help: "Prefill worker URLs to profile (PD mode); not with --profile-decode-url."},
		list(func(c *cfg) *[]string { return &c.ProfilePrefillURL })},
	{gProfile, argparse.Option{Name: "--profile-decode-url", Type: str, Nargs: argparse.ZeroOrMore,
		Help: "Decode worker URLs to profile (PD mode); not with --profile-prefill-url."},
		list(func(c *cfg) *[]string { return &c.ProfileDecodeURL })},
	{gTraffic, argparse.Option{Name: "--flush-cache", Action: argparse.StoreTrue,
		Help: "Flush the server's cache after warmup."},
		val(func(c *cfg) *bool { return &c.FlushCache })},
	{gTraffic, argparse.Option{Name: "--flush-cache-timeout", Type: argparse.FinitePositive, Default: 60.0,
		Help: "Seconds an sglang server may take to go idle before the flush."},
		val(func(c *cfg) *float64 { return &c.FlushCacheTimeout })},
	{gTraffic, argparse.Option{Name: "--warmup-requests", Type: integ, Default: 1,
		Help: "Requests sent before the measured run."},
		val(func(c *cfg) *int { return &c.WarmupRequests })},
	{gDataset, argparse.Option{Name: "--tokenize-prompt", Action: argparse.StoreTrue,
		Help: "Send token ids instead of text, for exact prompt lengths (sglang backend)."},
		val(func(c *cfg) *bool { return &c.TokenizePrompt })},
	datasetFlag("--gsp-num-groups"),
	datasetFlag("--gsp-prompts-per-group"),
	datasetFlag("--gsp-system-prompt-len"),
	datasetFlag("--gsp-question-len"),
	datasetFlag("--gsp-output-len"),
	datasetFlag("--gsp-range-ratio"),
	datasetFlag("--gsp-fast-prepare"),
	datasetFlag("--gsp-send-routing-key"),
	datasetFlag("--gsp-num-turns"),
	datasetFlag("--gsp-ordered"),
	datasetFlag("--gsp-group-distribution"),
	datasetFlag("--gsp-zipf-alpha"),
	datasetFlag("--mooncake-slowdown-factor"),
	datasetFlag("--mooncake-num-rounds"),
	datasetFlag("--mooncake-workload"),
	{gContent, argparse.Option{Name: "--fake-prefill", Action: argparse.StoreTrue,
		Help: "Decode-only benchmark against a decode server with a fake transfer backend."},
		val(func(c *cfg) *bool { return &c.FakePrefill })},
	{gOutput, argparse.Option{Name: "--tag", Type: str,
		Help: "Tag written into the result line."},
		ptr(func(c *cfg) **string { return &c.Tag })},
	{gTarget, argparse.Option{Name: "--header", Type: str, Nargs: argparse.OneOrMore,
		Help: "Extra HTTP headers, as Key=Value items."},
		list(func(c *cfg) *[]string { return &c.Header })},
	{gTarget, argparse.Option{Name: "--no-keepalive", Action: argparse.StoreTrue,
		Help: "Open a new connection for every request, as the Python tool does."},
		val(func(c *cfg) *bool { return &c.NoKeepalive })},
	{gTraffic, argparse.Option{Name: "--arrival", Type: str, Choices: []string{"poisson", "constant"}, Default: "poisson",
		Help: "How request times are spread at a finite --request-rate: poisson (the reference's; gamma with --burstiness) or constant (exactly 1/rate apart)."},
		val(func(c *cfg) *string { return &c.Arrival })},
	{gTraffic, argparse.Option{Name: "--burstiness", Type: float, Default: 1.0,
		Help: "As vLLM: gaps follow a gamma distribution of this shape (1 is Poisson; below 1 burstier, above 1 more even)."},
		val(func(c *cfg) *float64 { return &c.Burstiness })},
	{gTarget, argparse.Option{Name: "--request-timeout", Type: float,
		Help: "Fail a request that takes longer than this many seconds. Default: the reference's 6 hours."},
		ptr(func(c *cfg) **float64 { return &c.RequestTimeout })},
	{gTarget, argparse.Option{Name: "--connect-timeout", Type: float, Default: 30.0,
		Help: "Fail a request whose connection (TCP and TLS) takes longer than this many seconds; 0 waits as long as --request-timeout."},
		val(func(c *cfg) *float64 { return &c.ConnectTimeout })},
	{gTarget, argparse.Option{Name: "--cacert", Type: str,
		Help: "PEM file of CA certificates to trust for https servers, besides the system's."},
		ptr(func(c *cfg) **string { return &c.CACert })},
	{gTarget, argparse.Option{Name: "--insecure", Action: argparse.StoreTrue,
		Help: "Do not verify https servers' certificates."},
		val(func(c *cfg) *bool { return &c.Insecure })},
	{gOutput, argparse.Option{Name: "--record-file", Type: str,
		Help: "Append one JSON line per request to this file as each request ends (timings, gaps, lengths, error), so a long run's per-request data is on disk as it goes."},
		ptr(func(c *cfg) **string { return &c.RecordFile })},
	{gTarget, argparse.Option{Name: "--sim", Action: argparse.StoreTrue,
		Help: "Benchmark the built-in simulated server, started in-process on a free loopback port (no GPU, no model). Alone (or with only --sim-preset), runs a short demo: --dataset-name random-ids --num-prompts 200 --random-input-len 256 --random-output-len 128; with any other flag, the usual defaults apply."},
		val(func(c *cfg) *bool { return &c.Sim })},
	{gTarget, argparse.Option{Name: "--sim-preset", Type: str, Choices: sim.Presets, Default: sim.Presets[0],
		Help: "The simulator's engine profile with --sim (see benchserve sim --help)."},
		val(func(c *cfg) *string { return &c.SimPreset })},
	{gTraffic, argparse.Option{Name: "--duration", Type: float,
		Help: "Send for this many seconds on the planned schedule, reusing the rows in turn, then let the requests in flight finish (instead of a count). With --request-rate inf it is a closed loop of --max-concurrency requests."},
		ptr(func(c *cfg) **float64 { return &c.Duration })},
	{gTraffic, argparse.Option{Name: "--warmup-duration", Type: float,
		Help: "Warm up for this many seconds with the run's own traffic (instead of --warmup-requests); nothing of it is measured."},
		ptr(func(c *cfg) **float64 { return &c.WarmupDuration })},
	{gTraffic, argparse.Option{Name: "--ramp-up-strategy", Type: str, Choices: []string{"linear", "exponential"},
		Help: "As vLLM: raise the request rate from --ramp-up-start-rps to --ramp-up-end-rps over the run (over --duration, or over the time the requests are expected to take), then hold it. Replaces --request-rate."},
		ptr(func(c *cfg) **string { return &c.RampUpStrategy })},
	{gTraffic, argparse.Option{Name: "--ramp-up-start-rps", Type: float,
		Help: "The ramp's first rate, requests per second."},
		ptr(func(c *cfg) **float64 { return &c.RampUpStartRPS })},
	{gTraffic, argparse.Option{Name: "--ramp-up-end-rps", Type: float,
		Help: "The ramp's last rate, requests per second."},
		ptr(func(c *cfg) **float64 { return &c.RampUpEndRPS })},
	{gTraffic, argparse.Option{Name: "--concurrency-ramp-duration", Type: float,
		Help: "Raise the concurrency cap from 1 to --max-concurrency evenly over this many seconds from the start."},
		ptr(func(c *cfg) **float64 { return &c.ConcurrencyRampDuration })},
	{gSLO, argparse.Option{Name: "--goodput", Type: str, Nargs: argparse.OneOrMore,
		Help: "As vLLM: KEY:VALUE bounds in milliseconds (ttft, tpot, itl, e2el); a request that succeeded within every bound is good. Reports request goodput, token goodput and SLO attainment."},
		list(func(c *cfg) *[]string { return &c.Goodput })},
	{gSLO, argparse.Option{Name: "--percentile-metrics", Type: str,
		Help: "As vLLM: comma-separated metrics (ttft, tpot, itl, e2el) to report --metric-percentiles of. Default with --metric-percentiles: ttft,tpot,itl."},
		ptr(func(c *cfg) **string { return &c.PercentileMetrics })},
	{gSLO, argparse.Option{Name: "--metric-percentiles", Type: str,
		Help: "As vLLM: comma-separated percentiles (e.g. 50,90,99,99.9), printed and written as p{P}_{metric}_ms. Default with --percentile-metrics: 99."},
		ptr(func(c *cfg) **string { return &c.MetricPercentiles })},
	{gSLO, argparse.Option{Name: "--threshold", Type: str, Action: argparse.Append,
		Help: "KEY OP NUMBER over a numeric result key (p99_ttft_ms<500, slo_attainment>=0.99, failed_rate<0.01); repeatable. Any failure exits 4."},
		list(func(c *cfg) *[]string { return &c.Threshold })},
	{gOutput, argparse.Option{Name: "--server-metrics-interval", Type: float, Default: 1.0,
		Help: "Seconds between reads of the server's Prometheus /metrics during the run (read once before and once after too)."},
		val(func(c *cfg) *float64 { return &c.ServerMetricsInterval })},
	{gOutput, argparse.Option{Name: "--no-server-metrics", Action: argparse.StoreTrue,
		Help: "Do not read the server's /metrics."},
		val(func(c *cfg) *bool { return &c.NoServerMetrics })},
	{gOutput, argparse.Option{Name: "--server-metrics-url", Type: str,
		Help: "Where the server's Prometheus metrics are, when not at its /metrics (a separate port)."},
		ptr(func(c *cfg) **string { return &c.ServerMetricsURL })},
	{gOutput, argparse.Option{Name: "--server-metrics-file", Type: str,
		Help: "Append every read of the server's metrics to this file, one JSON line each (seconds since the start, then each gauge's and counter's value), for benchserve report."},
		ptr(func(c *cfg) **string { return &c.ServerMetricsFile })},
	{gContent, argparse.Option{Name: "--continuous-usage-stats", Action: argparse.StoreTrue,
		Help: "Ask streamed OpenAI completions and chat requests for the usage in every chunk (stream_options.continuous_usage_stats, as vLLM and SGLang serve it), so that each chunk says how many tokens it carried: adds the per-token ITL."},
		val(func(c *cfg) *bool { return &c.ContinuousUsageStats })},
	{gTraffic, argparse.Option{Name: "--shard", Type: str, Metavar: "I/N",
		Help: "Send shard I (from 0) of N of the planned requests (every Nth, conversations whole), from the common --start-at, so that N processes with the same seed together send the single-process plan; merge their --record-files with benchserve merge."},
		ptr(func(c *cfg) **string { return &c.Shard })},
	{gTraffic, argparse.Option{Name: "--start-at", Type: float, Metavar: "UNIX_TIME",
		Help: "Start the measured run at this wall-clock time (Unix seconds), the shards' shared clock."},
		ptr(func(c *cfg) **float64 { return &c.StartAt })},
	{gTraffic, argparse.Option{Name: "--start-in", Type: float, Metavar: "SECONDS",
		Help: "Start the measured run this many seconds from now (instead of --start-at)."},
		ptr(func(c *cfg) **float64 { return &c.StartIn })},
	{gTarget, argparse.Option{Name: "--url-strategy", Type: str, Choices: bench.URLStrategies, Default: bench.URLRoundRobin,
		Help: "With several --base-url: round-robin sends the request at plan position i to URL i mod N (a conversation stays on one URL); random draws each position's URL from --seed."},
		val(func(c *cfg) *string { return &c.URLStrategy })},
})

// datasetFlag places a flag a dataset declares (package dataset, in the
// dataset's file) at its position in the reference's order.
func datasetFlag(name string) flag {
	for _, f := range dataset.Flags() {
		if f.Opt.Name == name {
			return flag{gDataset, f.Opt, bound(argparse.Within(f.Bind, func(c *cfg) *dataset.Params { return &c.Params }))}
		}
	}
	panic("cli: no dataset declares " + name)
}

// withDatasets adds the flags the datasets declare that table does not
// place, in the Dataset group: a new dataset's flags need no row here.
func withDatasets(table []flag) []flag {
	placed := map[string]bool{}
	for _, f := range table {
		placed[f.opt.Name] = true
	}
	for _, f := range dataset.Flags() {
		if !placed[f.Opt.Name] {
			table = append(table, datasetFlag(f.Opt.Name))
		}
	}
	return table
}
