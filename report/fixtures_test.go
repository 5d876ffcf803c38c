package report

import (
	"math"
	"time"

	"benchserve/internal/py/pyjson"
	"benchserve/metrics"
	"benchserve/record"
)

// The fixtures below are repeated, number for number, in
// testdata/golden.py, which prints the goldens with the reference tool's
// format strings and json.dumps. Change both together.

func ptr[T any](v T) *T { return &v }

// completionsRun is a burst of sharegpt requests on an OpenAI completions
// backend, with no concurrency limit.
func completionsRun() (Run, metrics.Summary) {
	run := Run{
		Backend: "sglang-oai", DatasetName: "sharegpt",
		RequestRate: math.Inf(1), RandomInputLen: 1024, RandomOutputLen: 1024, RandomRangeRatio: 0.0,
		ServerInfo: []byte(`{"model_path":"meta-llama/Llama-3.1-8B-Instruct","tp_size":1,` +
			`"mem_fraction_static":0.88,"internal_states":[{"avg_spec_accept_length":null,"last_gen_throughput":1234.5}],` +
			`"version":"0.5.4-caf\u00e9","big":12345678901234567890,"huge":1e400,"neg":-0.0,"tp_size":2}`),
	}
	s := metrics.Summary{
		Duration:   61.23456789012345,
		Completed:  1000,
		TotalInput: 215268, TotalInputText: 215268,
		TotalOutput: 198343, TotalOutputRetokenized: 198001,
		RequestThroughput:           16.330864231086047,
		InputThroughput:             3515.4655555555557,
		OutputThroughput:            3239.0723,
		OutputThroughputRetokenized: 3233.4873,
		TotalThroughput:             6754.5378555555555,
		TotalThroughputRetokenized:  6748.95,
		E2E:                         metrics.Stats{Mean: 123456789.0, Median: 1.0 / 3, Std: 1e-05, P90: 0.125, P95: 2.675, P99: 0.005},
		TTFT:                        metrics.Stats{Mean: 1e-05, Median: 0, Std: 1e16, P90: 99.995, P95: math.Copysign(0, -1), P99: 1234.5},
		TPOT:                        metrics.Stats{Mean: 0.30000000000000004, Median: 12.5, Std: 3.75, P90: 20.000000000000004, P95: 21.5, P99: 30.25},
		ITL:                         metrics.Stats{Mean: 11.9, Median: 10.05, Std: 4.4, P90: 18.7, P95: 22.4, P99: 40.1, Max: 12345.678},
		Concurrency:                 987.6543210987654,
		MaxOutputTokensPerS:         4321.0,
		MaxConcurrentRequests:       1000,
	}
	return run, s
}

// embeddingRun has the embedding layout: no token, TTFT, TPOT or ITL lines.
func embeddingRun() (Run, metrics.Summary) {
	run := Run{
		Backend: "sglang-embedding", Embedding: true, DatasetName: "random",
		RequestRate: 8.0, MaxConcurrency: ptr(0), RandomInputLen: 256, RandomOutputLen: 1, RandomRangeRatio: 0.5,
	}
	s := metrics.Summary{
		Duration: 62.5, Completed: 500, TotalInput: 96000, TotalInputText: 96000,
		RequestThroughput: 8.0, InputThroughput: 1536.0,
		E2E:                   metrics.Stats{Mean: 15.25, Median: 14.999, Std: 2.0, P90: 19.995, P95: 21.005, P99: 30.0},
		Concurrency:           0.122,
		MaxConcurrentRequests: 3,
		OutputLens:            []int{0, 0},
	}
	return run, s
}

// cacheRun has a speculative accept length and a cache report with details.
func cacheRun() (Run, metrics.Summary) {
	run := Run{
		Backend: "sglang", DatasetName: "generated-shared-prefix",
		RequestRate: 16.5, MaxConcurrency: ptr(64), Tag: ptr("gsp-cache"),
		RandomInputLen: 1024, RandomOutputLen: 1024, RandomRangeRatio: 0.0,
		ServerInfo:  []byte(`{"decode":[{"internal_states":[{"avg_spec_accept_length":3.141592653589793}]}]}`),
		CacheReport: true,
	}
	s := metrics.Summary{
		Duration: 100.0, Completed: 64, TotalInput: 20000, TotalInputText: 20000,
		TotalOutput: 16384, TotalOutputRetokenized: 16390,
		RequestThroughput: 0.64, InputThroughput: 200.0, OutputThroughput: 163.84, TotalThroughput: 363.84,
		E2E:                   metrics.Stats{Mean: 5000.5, Median: 4999.0, Std: 10.0, P90: 5100.0, P95: 5200.0, P99: 5300.0},
		TTFT:                  metrics.Stats{Mean: 50.0, Median: 45.0, Std: 5.0, P90: 60.0, P95: 65.0, P99: 70.0},
		TPOT:                  metrics.Stats{Mean: 4.5, Median: 4.4, Std: 0.5, P90: 5.0, P95: 5.5, P99: 6.0},
		ITL:                   metrics.Stats{Mean: 14.0, Median: 13.0, Std: 2.0, P90: 17.0, P95: 18.0, P99: 25.0, Max: 80.0},
		Concurrency:           3.2,
		MaxOutputTokensPerS:   256.0,
		MaxConcurrentRequests: 64,
		AcceptLength:          ptr(3.141592653589793),
		Cache: &metrics.CacheReport{
			TotalPromptTokens: 20000, TotalCached: 2469, HitRatePct: float64(2469) / float64(20000) * 100,
			HasDetails: true, Device: 2000, Host: 400, Storage: 69, StorageBackend: "hf3fs",
		},
	}
	return run, s
}

// imageRun shows the vision-token line and a very small request rate.
func imageRun() (Run, metrics.Summary) {
	run := Run{
		Backend: "vllm-chat", DatasetName: "image", Images: true,
		RequestRate: 1e-05, MaxConcurrency: ptr(8), RandomInputLen: 128, RandomOutputLen: 64,
		RandomRangeRatio: 1.0,
	}
	s := metrics.Summary{
		Duration: 12.0, Completed: 100, TotalInput: 180000, TotalInputText: 12800, TotalInputVision: 167200,
		TotalOutput: 6400, TotalOutputRetokenized: 6399,
		RequestThroughput: 8.333333333333334, InputThroughput: 15000.0, OutputThroughput: 533.3333333333334,
		TotalThroughput:       15533.333333333334,
		E2E:                   metrics.Stats{Mean: 900.0, Median: 880.0, Std: 40.0, P90: 950.0, P95: 980.0, P99: 1000.0},
		TTFT:                  metrics.Stats{Mean: 300.0, Median: 290.0, Std: 20.0, P90: 320.0, P95: 330.0, P99: 350.0},
		TPOT:                  metrics.Stats{Mean: 9.5, Median: 9.4, Std: 0.1, P90: 9.6, P95: 9.7, P99: 9.8},
		ITL:                   metrics.Stats{Mean: 9.5, Median: 9.4, Std: 0.1, P90: 9.6, P95: 9.7, P99: 9.8, Max: 15.0},
		Concurrency:           7.5,
		MaxOutputTokensPerS:   600.0,
		MaxConcurrentRequests: 8,
	}
	return run, s
}

// zeroRun has no successful request (the reference crashes there) and a
// cache report the metrics left out.
func zeroRun() (Run, metrics.Summary) {
	run := Run{
		Backend: "sglang", DatasetName: "random-ids",
		RequestRate: 4.0, RandomInputLen: 1024, RandomOutputLen: 1024, CacheReport: true,
	}
	s := metrics.Summary{Duration: 3.0000000000000004, Failed: 10, OutputLens: make([]int, 10)}
	return run, s
}

// failuresRun replays a trace with some failures, an accept length of 0
// (not printed) and a cache report without details.
func failuresRun() (Run, metrics.Summary) {
	run := Run{
		Backend: "vllm", DatasetName: "custom",
		RequestRate: math.Inf(1), Trace: true, MaxConcurrency: ptr(128), Tag: ptr("nightly-é \"q\""),
		SharegptOutputLen: ptr(256), RandomInputLen: 1024, RandomOutputLen: 1024, RandomRangeRatio: 0.25,
		ServerInfo: []byte(`{"oops":`),
	}
	s := metrics.Summary{
		Duration: 2.5, Completed: 3, Failed: 1, TotalInput: 30, TotalInputText: 30,
		TotalOutput: 313, TotalOutputRetokenized: 310,
		RequestThroughput: 1.2, InputThroughput: 12.0, OutputThroughput: 125.2, TotalThroughput: 137.2,
		E2E:                   metrics.Stats{Mean: 1000.0 / 3, Median: 250.0, Std: 1e-05, P90: 400.0, P95: 450.0, P99: 490.0},
		TTFT:                  metrics.Stats{Mean: 20.0, Median: 20.0},
		TPOT:                  metrics.Stats{Mean: 1.5, Median: 1.5},
		ITL:                   metrics.Stats{Mean: 1.25, Median: 1.5, Max: 3.0},
		Concurrency:           0.4,
		MaxOutputTokensPerS:   300.0,
		MaxConcurrentRequests: 2,
		AcceptLength:          ptr(0.0),
		OutputLens:            []int{12, 0, 1, 300},
	}
	return run, s
}

// gaps holds the gaps secs, given in seconds, to the nanosecond (records
// keep whole nanoseconds).
func gaps(secs ...float64) record.Gaps {
	var g record.Gaps
	for _, x := range secs {
		g.Append(time.Duration(math.Round(x * 1e9)))
	}
	return g
}

// failuresRecords are failuresRun's records: a normal one, a failure with
// a multi-line error, one with a single token and no ITL, and one with
// non-ASCII text.
func failuresRecords() []record.Record {
	return []record.Record{
		{PromptLen: 10, Success: true, TTFT: 0.020000000000000018, Gaps: gaps(0.001, 0.333333333, 1e-05), Text: "Hello, world."},
		{PromptLen: 7, Error: "Traceback (most recent call last):\n  File \"x.py\", line 1\nConnectionResetError: [Errno 104] Connection reset by peer\n"},
		{PromptLen: 5, Success: true, TTFT: 0, Text: "\t"},
		{PromptLen: 15, Success: true, TTFT: 0.5, Gaps: gaps(123456789.0, 0.1), Text: "caf\u00e9 \u4e16\u754c \U0001F600 \"quoted\" back\\slash\n\x01"},
	}
}

// cacheRecords carry cached-token details: sglang's object, none, one that
// is not valid JSON, and one with a repeated key and a storage backend.
func cacheRecords() []record.Record {
	return []record.Record{
		{PromptLen: 300, Success: true, TTFT: 0.05, Gaps: gaps(0.014), Text: "a", CachedTokens: 128,
			CacheDetails: &record.CacheDetails{Device: 128, Raw: []byte(`{"device": 128, "host": 0, "storage": 0, "storage_backend": null}`)}},
		{PromptLen: 310, Success: true, TTFT: 0.045, Text: "b"},
		{PromptLen: 320, Error: "Service Unavailable: overloaded", CacheDetails: &record.CacheDetails{Raw: []byte(`{"device":`)}},
		{PromptLen: 330, Success: true, TTFT: 0.06, Gaps: gaps(), Text: "c", CachedTokens: 69,
			CacheDetails: &record.CacheDetails{Storage: 69, StorageBackend: "hf3fs",
				Raw: []byte(`{"device":1,"host":0,"storage":69,"storage_backend":"hf3fs","device":0}`)}},
	}
}

// cacheNoDetails is cacheRun's summary with a cache report whose requests
// sent no details and no storage hits.
func cacheNoDetails(s metrics.Summary) metrics.Summary {
	s.Cache = &metrics.CacheReport{TotalPromptTokens: 1234, TotalCached: 100, HitRatePct: float64(100) / float64(1234) * 100}
	s.OutputLens = []int{1, 1, 0, 1}
	return s
}

// extra is a key/value pair of our own, for the test of Run.Extra.
func extra() *pyjson.Object {
	o := &pyjson.Object{}
	o.Set("schedule_p99_ms", pyjson.Float(12.5))
	return o
}
