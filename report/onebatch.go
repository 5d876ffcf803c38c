package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"benchserve/internal/py/pyfmt"
	"benchserve/internal/py/pyjson"
)

// This file is every line and key of "benchserve one-batch" (one-batch spec
// §5): the per-case block, the result row, the --show-report table and the
// pydantic file.

// BatchCase is one measured case: the reference's BenchOneCaseResult.
type BatchCase struct {
	RunName                        string
	BatchSize, InputLen, OutputLen int
	// Seconds and tokens per second.
	Latency, LastTTFT                                    float64
	InputThroughput, OutputThroughput, OverallThroughput float64
	// LastGenThroughput and AccLength are the server's; nil when it did not
	// say (the reference's -1).
	LastGenThroughput, AccLength *float64
	TotalOutputTokens            int
	// NumEarlyStopped and the steady window are nil without a recorder
	// (vllm) or without a window.
	NumEarlyStopped           *int
	SteadyThroughput, SteadyS *float64
	CacheHitRate              *float64
	ProfileLink               string
	// EarlyStopLines: the run does not ignore EOS and read token counts
	// (sglang), so the block says how many stopped early.
	EarlyStopLines bool
	// KernelTimed: the stream's bytes were timed with the kernel's receive
	// times (ours; written after the reference's keys).
	KernelTimed bool
}

func orMinus1(v *float64) float64 {
	if v == nil {
		return -1
	}
	return *v
}

// PrintBatchCase prints the case's block as the reference does.
func PrintBatchCase(w io.Writer, c *BatchCase) {
	f2 := func(x float64) string { return pyfmt.Fixed(x, 2) }
	var b strings.Builder
	fmt.Fprintf(&b, "batch size: %d\ninput_len: %d\noutput_len: %d\n", c.BatchSize, c.InputLen, c.OutputLen)
	fmt.Fprintf(&b, "latency: %s s\ninput throughput: %s tok/s\n", f2(c.Latency), f2(c.InputThroughput))
	if c.OutputLen != 1 {
		fmt.Fprintf(&b, "output throughput: %s tok/s\n", f2(c.OutputThroughput))
	}
	fmt.Fprintf(&b, "last_ttft: %s s\nlast generation throughput: %s tok/s\n", f2(c.LastTTFT), f2(orMinus1(c.LastGenThroughput)))
	if c.AccLength != nil && *c.AccLength > 0 {
		fmt.Fprintf(&b, "acc_length: %s \n", f2(*c.AccLength))
	}
	if c.CacheHitRate != nil {
		fmt.Fprintf(&b, "cache hit rate: %s\n", pyfmt.Fixed(*c.CacheHitRate, 4))
	}
	if c.EarlyStopLines {
		stopped := 0
		if c.NumEarlyStopped != nil {
			stopped = *c.NumEarlyStopped
		}
		fmt.Fprintf(&b, "total output tokens: %d (requested %d)\n", c.TotalOutputTokens, c.BatchSize*c.OutputLen)
		fmt.Fprintf(&b, "early-stopped requests: %d/%d\n", stopped, c.BatchSize)
		if c.SteadyThroughput != nil {
			fmt.Fprintf(&b, "steady-state output throughput: %s tok/s over a %s s full-batch window\n", f2(*c.SteadyThroughput), f2(*c.SteadyS))
		} else {
			b.WriteString("WARNING: no steady-state full-batch window (a request finished before the last one started decoding); steady-state metrics are n/a.\n")
		}
	}
	io.WriteString(w, b.String())
}

// roundedOrMinus1 is round(x, n), or the integer -1 the reference writes
// for a figure the server did not give.
func roundedOrMinus1(v *float64, n int) []byte {
	if v == nil {
		return pyjson.Int(-1)
	}
	return pyjson.Float(round(*v, n))
}

func roundedOrNull(v *float64, n int) []byte {
	if v == nil {
		return pyjson.Null
	}
	return pyjson.Float(round(*v, n))
}

// BatchLine is the case's result row, as dump_to_jsonl writes it, with
// benchserve's keys after the reference's; it ends in a newline.
func BatchLine(c *BatchCase, clientVersion string) []byte {
	o := &pyjson.Object{}
	o.Set("run_name", pyjson.String(c.RunName))
	o.Set("batch_size", pyjson.Int(c.BatchSize))
	o.Set("input_len", pyjson.Int(c.InputLen))
	o.Set("output_len", pyjson.Int(c.OutputLen))
	o.Set("latency", pyjson.Float(round(c.Latency, 4)))
	o.Set("input_throughput", pyjson.Float(round(c.InputThroughput, 2)))
	o.Set("output_throughput", pyjson.Float(round(c.OutputThroughput, 2)))
	o.Set("overall_throughput", pyjson.Float(round(c.OverallThroughput, 2)))
	o.Set("last_ttft", pyjson.Float(round(c.LastTTFT, 4)))
	o.Set("last_gen_throughput", roundedOrMinus1(c.LastGenThroughput, 2))
	o.Set("acc_length", roundedOrMinus1(c.AccLength, 2))
	o.Set("total_output_tokens", pyjson.Int(c.TotalOutputTokens))
	if c.NumEarlyStopped != nil {
		o.Set("num_early_stopped", pyjson.Int(*c.NumEarlyStopped))
	} else {
		o.Set("num_early_stopped", pyjson.Null)
	}
	o.Set("steady_state_output_throughput", roundedOrNull(c.SteadyThroughput, 2))
	o.Set("steady_state_window_s", roundedOrNull(c.SteadyS, 4))
	o.Set("cache_hit_rate", roundedOrNull(c.CacheHitRate, 4))
	o.Set("kernel_timed", pyjson.Bool(c.KernelTimed))
	o.Set("client_version", pyjson.String(clientVersion))
	return append(o.Bytes(), '\n')
}

// ReportOptions are the flags the --show-report table depends on.
type ReportOptions struct {
	// InputLens and OutputLens are the flags' values as Python shows the
	// parsed sequences: a list when given, the default tuple otherwise.
	InputLens, OutputLens string
	CacheHitRate          float64
	DisableIgnoreEOS      bool
	Profile               bool
	// HourlyCost is dollars per GPU-hour times --tp-size.
	HourlyCost float64
}

// PyIntSeq is Python's repr of a list of ints, or of a tuple when tuple.
func PyIntSeq(v []int, tuple bool) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.Itoa(x)
	}
	if tuple {
		if len(v) == 1 {
			return "(" + parts[0] + ",)"
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// BatchReport is the reference's get_report_summary: a line of the lengths,
// then the results, sorted by input length, in tabulate's github table.
// The result is printed with a newline after it.
func BatchReport(cases []*BatchCase, o ReportOptions) string {
	summary := "\nInput lens: " + o.InputLens + ". Output lens: " + o.OutputLens + "."
	if o.CacheHitRate > 0 {
		summary += " Cache hit rate: " + pyfmt.Fixed(o.CacheHitRate*100, 1) + "%."
	}
	summary += "\n"
	sorted := append([]*BatchCase(nil), cases...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].InputLen < sorted[j].InputLen })
	headers := []string{"batch size", "input len", "latency (s)", "input throughput (tok/s)",
		"output throughput (tok/s)", "acc length", "ITL (ms)", "input cost ($/1M)", "output cost ($/1M)", "cache hit rate"}
	if o.DisableIgnoreEOS {
		headers = append(headers, "steady output throughput (tok/s)", "steady ITL (ms)", "early stops")
	}
	if o.Profile {
		headers = append(headers, "profile")
	}
	const inputUtil = 0.7
	f2 := func(x float64) string { return pyfmt.Fixed(x, 2) }
	rows := make([][]any, 0, len(sorted))
	for _, c := range sorted {
		acc := "n/a"
		if c.AccLength != nil && *c.AccLength > 0 {
			acc = f2(*c.AccLength)
		}
		itl, outCost := "n/a", "n/a"
		if c.OutputThroughput > 0 {
			itl = f2(1000 * float64(c.BatchSize) / c.OutputThroughput)
			outCost = f2(1e6 / c.OutputThroughput / 3600 * o.HourlyCost)
		}
		inCost := 1e6 / (c.InputThroughput * inputUtil) / 3600 * o.HourlyCost
		hit := "n/a"
		if c.CacheHitRate != nil {
			hit = pyfmt.Fixed(*c.CacheHitRate, 4)
		}
		row := []any{c.BatchSize, c.InputLen, f2(c.Latency), f2(c.InputThroughput), f2(c.OutputThroughput),
			acc, itl, f2(inCost), outCost, hit}
		if o.DisableIgnoreEOS {
			st, sitl := "n/a", "n/a"
			if c.SteadyThroughput != nil {
				st = f2(*c.SteadyThroughput)
				sitl = f2(1000 * float64(c.BatchSize) / *c.SteadyThroughput)
			}
			stopped := 0
			if c.NumEarlyStopped != nil {
				stopped = *c.NumEarlyStopped
			}
			row = append(row, st, sitl, fmt.Sprintf("%d/%d", stopped, c.BatchSize))
		}
		if o.Profile {
			if c.ProfileLink != "" {
				row = append(row, "[Profile]("+c.ProfileLink+")")
			} else {
				row = append(row, "n/a")
			}
		}
		rows = append(rows, row)
	}
	return summary + GithubTable(headers, rows) + "\n"
}

// PydanticCase is one entry of --pydantic-result-filename.
type PydanticCase struct {
	*BatchCase
	// ProfileExtend and ProfileDecode are trace files of the case's
	// profile, "" for none.
	ProfileExtend, ProfileDecode string
}

// PydanticFile is the JSON array save_results_as_pydantic_models writes
// (json.dump with indent=2, ensure_ascii=False). modelPath nil is null;
// serverArgs nil is null.
func PydanticFile(cases []PydanticCase, modelPath *string, serverArgs []string) []byte {
	str := func(s string) []byte { return pyjson.AppendQuoted(nil, s, false) }
	opt := func(s string) []byte {
		if s == "" {
			return pyjson.Null
		}
		return str(s)
	}
	if len(cases) == 0 {
		return []byte("[]")
	}
	var b []byte
	b = append(b, "[\n"...)
	for i, c := range cases {
		if i > 0 {
			b = append(b, ",\n"...)
		}
		type kv struct {
			k string
			v []byte
		}
		mp := pyjson.Null
		if modelPath != nil {
			mp = str(*modelPath)
		}
		sa := pyjson.Null
		if serverArgs != nil {
			sa = []byte("[]")
			if len(serverArgs) > 0 {
				sa = []byte("[\n")
				for j, a := range serverArgs {
					if j > 0 {
						sa = append(sa, ",\n"...)
					}
					sa = append(sa, "      "...)
					sa = append(sa, str(a)...)
				}
				sa = append(sa, "\n    ]"...)
			}
		}
		fields := []kv{{"model_path", mp}, {"run_name", str(c.RunName)}, {"batch_size", pyjson.Int(c.BatchSize)},
			{"input_len", pyjson.Int(c.InputLen)}, {"output_len", pyjson.Int(c.OutputLen)},
			{"latency", pyjson.Float(c.Latency)}, {"input_throughput", pyjson.Float(c.InputThroughput)},
			{"output_throughput", pyjson.Float(c.OutputThroughput)}, {"overall_throughput", pyjson.Float(c.OverallThroughput)},
			{"last_ttft", pyjson.Float(c.LastTTFT)}, {"last_gen_throughput", floatOrMinus1(c.LastGenThroughput)},
			{"acc_length", floatOrMinus1(c.AccLength)}, {"profile_link_extend", opt(c.ProfileExtend)},
			{"profile_link_decode", opt(c.ProfileDecode)}, {"server_args", sa}}
		b = append(b, "  {\n"...)
		for j, f := range fields {
			if j > 0 {
				b = append(b, ",\n"...)
			}
			b = append(b, "    "...)
			b = append(b, str(f.k)...)
			b = append(b, ": "...)
			b = append(b, f.v...)
		}
		b = append(b, "\n  }"...)
	}
	return append(b, "\n]"...)
}

func floatOrMinus1(v *float64) []byte {
	if v == nil {
		return pyjson.Int(-1)
	}
	return pyjson.Float(*v)
}
