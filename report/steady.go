package report

import (
	"io"
	"strconv"

	"benchserve/internal/py/pyjson"
	"benchserve/metrics"
)

// SteadyBlock writes SGLang's "Steady-State Result" block
// (steady_state_serving, spec §1.7): a blank line, the title rule, one
// "{:<40} {:<10}" line per figure and a closing rule. Without a window
// (no request succeeded) every figure but the ratio is "n/a", where SGLang
// raises.
func SteadyBlock(w io.Writer, st *metrics.Steady) error {
	b := []byte{'\n'}
	b = rule(b, " Steady-State Result ", '=')
	b = fixed(b, "Concurrency ratio:", st.Ratio)
	line := func(label, v string) {
		if !st.Found {
			v = "n/a"
		}
		b = text(b, label, v)
	}
	line("Measurement duration (s):", F(st.Duration))
	line("Minimum concurrency:", strconv.Itoa(st.Threshold))
	line("Completed requests:", strconv.Itoa(st.Completed))
	// SGLang prints "N/A" for the input of multi-turn runs, which it cannot
	// align with the outputs; every record here carries its own.
	line("Input tokens:", strconv.Itoa(st.TotalInput))
	line("Input token throughput (tok/s):", F(st.InputThroughput))
	line("Generated tokens:", F(st.TotalOutput))
	line("Output token throughput (tok/s):", F(st.OutputThroughput))
	line("Output throughput, retokenized (tok/s):", F(st.OutputThroughputRetokenized))
	line("Average concurrency:", F(st.AverageConcurrency))
	line("Peak concurrency:", strconv.Itoa(st.PeakConcurrency))
	line("Peak output throughput (tok/s):", F(st.PeakOutputThroughput))
	b = append(b, "==================================================\n"...)
	_, err := w.Write(b)
	return err
}

// SteadyObject is SGLang's 15 keys in its order (spec §1.8), nulls
// without a window. window_start and window_end are in the records'
// clock: seconds since the run's epoch.
func SteadyObject(st *metrics.Steady) *pyjson.Object {
	o := &pyjson.Object{}
	o.Set("concurrency_ratio", pyjson.Float(st.Ratio))
	f := func(k string, v float64) {
		if st.Found {
			o.Set(k, pyjson.Float(v))
		} else {
			o.Set(k, pyjson.Null)
		}
	}
	n := func(k string, v int) {
		if st.Found {
			o.Set(k, pyjson.Int(v))
		} else {
			o.Set(k, pyjson.Null)
		}
	}
	f("window_start", st.WindowStart)
	f("window_end", st.WindowEnd)
	f("duration", st.Duration)
	n("concurrency_threshold", st.Threshold)
	n("completed", st.Completed)
	n("total_input", st.TotalInput)
	f("input_throughput", st.InputThroughput)
	f("total_output", st.TotalOutput)
	f("total_output_retokenized", st.TotalOutputRetokenized)
	f("output_throughput", st.OutputThroughput)
	f("output_throughput_retokenized", st.OutputThroughputRetokenized)
	f("average_concurrency", st.AverageConcurrency)
	n("peak_concurrency", st.PeakConcurrency)
	f("peak_output_throughput", st.PeakOutputThroughput)
	return o
}

// SteadyLine is the line --steady-state-output-file gets: the object as
// Python's json.dumps writes it, and a newline.
func SteadyLine(st *metrics.Steady) []byte {
	return append(SteadyObject(st).Bytes(), '\n')
}

// steadyTitle is our section beside SGLang's block.
const steadyTitle = "Steady state: requests sent in the window"

// steadyRows are our figures over the window: the requests sent in it,
// their failures, their latencies, and the output counted per token.
func steadyRows(st *metrics.Steady) []Row {
	if !st.Found {
		return []Row{{"Requests sent in the window:", "n/a"}}
	}
	rows := []Row{
		{"Requests sent in the window:", strconv.Itoa(st.Started)},
		{"Failed requests sent in the window:", strconv.Itoa(st.Failed)},
	}
	for _, m := range []struct {
		name string
		s    metrics.Stats
	}{{"TTFT", st.TTFT}, {"ITL", st.ITL}, {"TPOT", st.TPOT}, {"E2E Latency", st.E2E}} {
		rows = append(rows, Row{"Mean " + m.name + " (ms):", F(m.s.Mean)}, Row{"Median " + m.name + " (ms):", F(m.s.Median)},
			Row{"P99 " + m.name + " (ms):", F(m.s.P99)})
	}
	if st.PerTokenOutput != nil {
		rows = append(rows, Row{"Output tokens, counted per token:", F(*st.PerTokenOutput)},
			Row{"  over requests with per-chunk counts:", strconv.Itoa(st.PerTokenRequests)})
	}
	return rows
}

// steadyKeys write the SGLang object under steady_state and ours under
// steady_state_sent (null figures without a window).
func steadyKeys(o *pyjson.Object, st *metrics.Steady) {
	o.Set("steady_state", SteadyObject(st).Bytes())
	ours := &pyjson.Object{}
	ours.Set("requests", intOrNull(st.Found, st.Started))
	ours.Set("failed", intOrNull(st.Found, st.Failed))
	for _, m := range []struct {
		name string
		s    metrics.Stats
	}{{"ttft", st.TTFT}, {"itl", st.ITL}, {"tpot", st.TPOT}, {"e2el", st.E2E}} {
		for _, k := range []struct {
			stat string
			v    float64
		}{{"mean", m.s.Mean}, {"median", m.s.Median}, {"p99", m.s.P99}} {
			if st.Found {
				ours.Set(k.stat+"_"+m.name+"_ms", pyjson.Float(k.v))
			} else {
				ours.Set(k.stat+"_"+m.name+"_ms", pyjson.Null)
			}
		}
	}
	if st.PerTokenOutput != nil {
		ours.Set("output_tokens_per_token", pyjson.Float(*st.PerTokenOutput))
		ours.Set("per_token_requests", pyjson.Int(st.PerTokenRequests))
	} else {
		ours.Set("output_tokens_per_token", pyjson.Null)
		ours.Set("per_token_requests", pyjson.Int(0))
	}
	o.Set("steady_state_sent", ours.Bytes())
}

func intOrNull(ok bool, v int) []byte {
	if !ok {
		return pyjson.Null
	}
	return pyjson.Int(v)
}

// SteadySection prints our section over the window alone, closed by a
// rule (benchserve report, where no other section follows).
func SteadySection(w io.Writer, st *metrics.Steady) error {
	return Section(w, map[string][]Row{steadyTitle: steadyRows(st)}, []string{steadyTitle})
}
