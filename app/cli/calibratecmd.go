package cli

import (
	"context"
	"os"
	"time"

	"benchserve/app/calibrate"
	"benchserve/backend"
	"benchserve/internal/exit"
	"benchserve/internal/py/argparse"
)

// calibrateBackends are calibrate's --backend choices: of the SGLang and
// the vLLM backends, the first of each request function that generates
// tokens (sglang-native sends what sglang does), in the table's order.
func calibrateBackends() []string {
	type fn struct {
		sglang   bool
		protocol string
	}
	seen := map[fn]bool{}
	return backend.NamesOf(func(s backend.Spec) bool {
		k := fn{s.SGLang, s.Protocol()}
		if !s.SGLang && !s.VLLM || seen[k] || s.Embedding {
			return false
		}
		seen[k] = true
		return true
	})
}

// optInts is an optional list of ints (nil when not given).
func optInts(v any) []int {
	l, _ := v.([]any)
	var out []int
	for _, x := range l {
		out = append(out, x.(int))
	}
	return out
}

// calibrateDefault is vLLM's completions backend.
func calibrateDefault() string {
	return backend.NamesOf(func(s backend.Spec) bool { return s.VLLM && !s.Chat && !s.Embedding })[0]
}

// CalibrateMain runs "benchserve calibrate": the client against the
// simulator's truth, each in its own process.
func CalibrateMain(ctx context.Context, args []string, pio IO) int {
	p := argparse.New("benchserve calibrate", "Measure benchserve's own error against the simulator's truth, and its cost.")
	g := p.Group("Calibration")
	g.Add(argparse.Option{Name: "--backend", Type: argparse.Str, Default: calibrateDefault(), Choices: calibrateBackends(), Help: "Client backend (API) to measure."})
	g.Add(argparse.Option{Name: "--concurrency", Type: argparse.Int, Nargs: argparse.OneOrMore, Default: []any{1, 10, 100, 500, 1000}, Help: "Concurrency levels of the matrix."})
	g.Add(argparse.Option{Name: "--ttft-ms", Type: argparse.Float, Default: 50.0, Help: "The simulator's time to first token."})
	g.Add(argparse.Option{Name: "--itl-ms", Type: argparse.Float, Default: 10.0, Help: "The simulator's time between tokens."})
	g.Add(argparse.Option{Name: "--output-len", Type: argparse.Int, Default: 100, Help: "Tokens per request."})
	g.Add(argparse.Option{Name: "--per-stream", Type: argparse.Int, Default: 2, Help: "Requests per concurrency slot (at least 10 requests in all)."})
	g.Add(argparse.Option{Name: "--scale-streams", Type: argparse.Int, Nargs: argparse.OneOrMore, Default: []any{1000, 10000}, Help: "Concurrent streams of the scale points, each a run of its own after the matrix against its simulator; the per-stream memory is the slope from the fewest to the most (0 skips them)."})
	g.Add(argparse.Option{Name: "--scale-output-len", Type: argparse.Int, Default: 32, Help: "Tokens per request of the scale points."})
	g.Add(argparse.Option{Name: "--throughput-requests", Type: argparse.Int, Default: 2500, Help: "Requests of the throughput run (0 skips it)."})
	g.Add(argparse.Option{Name: "--throughput-concurrency", Type: argparse.Int, Default: 256, Help: "Concurrency of the throughput run."})
	g.Add(argparse.Option{Name: "--throughput-output-len", Type: argparse.Int, Default: 96, Help: "Output tokens per request of the throughput run."})
	g.Add(argparse.Option{Name: "--throughput-procs", Type: argparse.Int, Nargs: argparse.OneOrMore, Metavar: "N",
		Help: "Run the throughput run once per N, the client's GOMAXPROCS, and print the scaling across cores (e.g. 1 2)."})
	ns, err := parseArgs(p, args, pio.columns())
	if err != nil {
		code, _ := parseOutcome(err, pio)
		return code
	}
	exe, err := os.Executable()
	if err != nil {
		return exitCode(&exit.Error{Code: exit.Failure, Msg: "calibrate: cannot find the benchserve binary: " + err.Error()}, pio.Stderr)
	}
	ints := func(k string) []int {
		var out []int
		for _, v := range ns.Get(k).([]any) {
			out = append(out, v.(int))
		}
		return out
	}
	ms := func(k string) time.Duration { return time.Duration(ns.Get(k).(float64) * float64(time.Millisecond)) }
	opts := calibrate.Options{
		Exe: exe, Backend: ns.Get("backend").(string),
		TTFT: ms("ttft_ms"), ITL: ms("itl_ms"), OutputLen: ns.Get("output_len").(int),
		Concurrency: ints("concurrency"), PerStream: ns.Get("per_stream").(int),
		ScaleStreams:          ints("scale_streams"),
		ScaleOutputLen:        ns.Get("scale_output_len").(int),
		ThroughputRequests:    ns.Get("throughput_requests").(int),
		ThroughputConcurrency: ns.Get("throughput_concurrency").(int),
		ThroughputOutputLen:   ns.Get("throughput_output_len").(int),
		ThroughputProcs:       optInts(ns.Get("throughput_procs")),
		Out:                   pio.Stdout,
	}
	if err := opts.Check(); err != nil {
		return exitCode(&exit.Error{Code: exit.Usage, Msg: "calibrate: " + err.Error()}, pio.Stderr)
	}
	if err := calibrate.Run(ctx, opts); err != nil {
		return exitCode(&exit.Error{Code: exit.Failure, Msg: "calibrate: " + err.Error()}, pio.Stderr)
	}
	return exit.OK
}
