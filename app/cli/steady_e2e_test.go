package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"benchserve/metrics"
	"benchserve/record"
	"benchserve/report"
	"benchserve/sim"
)

// steadyKeys are SGLang's steady-state keys, in its order.
var steadyKeys = []string{"concurrency_ratio", "window_start", "window_end", "duration", "concurrency_threshold",
	"completed", "total_input", "input_throughput", "total_output", "total_output_retokenized", "output_throughput",
	"output_throughput_retokenized", "average_concurrency", "peak_concurrency", "peak_output_throughput"}

// keysInOrder reads the keys of a JSON object in their order.
func keysInOrder(t *testing.T, obj string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", obj)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// A run against the simulator with --steady-state-concurrency-ratio
// prints SGLang's block after the reference block and before our
// sections, appends the 15-key line to --steady-state-output-file, puts
// the same object under steady_state in the result line, and its figures
// are those of the run's own records (its --record-file).
func TestSteadyStateRun(t *testing.T) {
	_, base := newSim(t, steadySim(5*time.Millisecond, 2*time.Millisecond))
	dir := t.TempDir()
	out, ss, rec := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "steady.jsonl"), filepath.Join(dir, "rec.jsonl")
	code, stdout, stderr := run(t, nil, "--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids",
		"--random-input-len", "16", "--random-output-len", "10", "--num-prompts", "24", "--max-concurrency", "4",
		"--warmup-requests", "0", "--no-server-metrics", "--output-file", out, "--record-file", rec,
		"--steady-state-concurrency-ratio", "0.75", "--steady-state-output-file", ss)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	ref := strings.Index(stdout, "\n==================================================\n")
	block := strings.Index(stdout, "\n\n============== Steady-State Result ===============\n")
	ours := strings.Index(stdout, "Steady state: requests sent in the window")
	if ref < 0 || block != ref+len("\n==================================================") || ours < block {
		t.Fatalf("reference rule at %d, steady block at %d, our section at %d:\n%s", ref, block, ours, stdout)
	}
	labels := []string{"Concurrency ratio:", "Measurement duration (s):", "Minimum concurrency:", "Completed requests:", "Input tokens:",
		"Input token throughput (tok/s):", "Generated tokens:", "Output token throughput (tok/s):", "Output throughput, retokenized (tok/s):",
		"Average concurrency:", "Peak concurrency:", "Peak output throughput (tok/s):"}
	lines := strings.Split(stdout[block+2:], "\n")
	for i, l := range labels {
		if !strings.HasPrefix(lines[i+1], l) || len(lines[i+1]) < 51 {
			t.Errorf("line %d of the block %q, want %q", i+1, lines[i+1], l)
		}
	}
	if lines[len(labels)+1] != strings.Repeat("=", 50) || field(t, stdout, "Concurrency ratio:") != "0.75" {
		t.Errorf("block:\n%s", strings.Join(lines[:len(labels)+2], "\n"))
	}

	data, err := os.ReadFile(ss)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSuffix(string(data), "\n")
	if got := keysInOrder(t, line); strings.Join(got, ",") != strings.Join(steadyKeys, ",") {
		t.Errorf("keys %v, want %v", got, steadyKeys)
	}
	main, _ := os.ReadFile(out)
	if !strings.Contains(string(main), `, "steady_state": `+line+`, "steady_state_sent": {"requests": `) {
		t.Errorf("the result line has not the same steady_state object:\n%s\n%s", main, line)
	}

	// The figures are the records' (the file keeps times to the bit), in
	// dispatch order as the run sums them (the file has them as they ended).
	f, err := record.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(f.Records, func(a, b int) bool { return f.Records[a].Seq < f.Records[b].Seq })
	st := metrics.ComputeSteady(f.Records, 0.75, nil)
	if want := string(report.SteadyLine(&st)); string(data) != want {
		t.Errorf("line %s\nfrom the records %s", data, want)
	}
	if !st.Found || st.PeakConcurrency < 1 || st.PeakConcurrency > 4 || st.Completed == 0 || st.Duration <= 0 {
		t.Errorf("steady state %+v", st)
	}

	// benchserve report on the record file: the same block and line, and
	// the window stated and shaded on the page.
	ss2, html := filepath.Join(dir, "steady2.jsonl"), filepath.Join(dir, "page.html")
	code, rout, rerr := run(t, nil, "report", out, "--records", rec, "--steady-state-concurrency-ratio", "0.75",
		"--steady-state-output-file", ss2, "-o", html)
	var want bytes.Buffer
	if err := report.SteadyBlock(&want, &st); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, want.String()) {
		t.Errorf("the run's block is not the records':\n%s", want.String())
	}
	if code != 0 || !strings.Contains(rout, "Records of rec.jsonl:"+want.String()) {
		t.Fatalf("report: exit %d\n%s\n%s", code, rout, rerr)
	}
	if again, _ := os.ReadFile(ss2); string(again) != string(data) {
		t.Errorf("report's line %s, the run's %s", again, data)
	}
	pg, _ := os.ReadFile(html)
	if !strings.Contains(string(pg), `<p class="steady">Steady state at concurrency ratio 0.75`) || !strings.Contains(string(pg), `<rect class="band"`) {
		t.Errorf("the page states no window")
	}
}

// A merge of the record set split into 2 shards finds the window one
// process found, and writes the same line.
func TestSteadyStateMergedShards(t *testing.T) {
	_, base := newSim(t, steadySim(5*time.Millisecond, 2*time.Millisecond))
	dir := t.TempDir()
	ss, rec := filepath.Join(dir, "steady.jsonl"), filepath.Join(dir, "rec.jsonl")
	code, stdout, stderr := run(t, nil, "--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids",
		"--random-input-len", "16", "--random-output-len", "8", "--num-prompts", "20", "--request-rate", "200",
		"--warmup-requests", "0", "--no-server-metrics", "--output-file", filepath.Join(dir, "out.jsonl"), "--record-file", rec,
		"--steady-state-concurrency-ratio", "0.5", "--steady-state-output-file", ss)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	f, err := record.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	startAt := f.Records[0].RunStart
	var files []string
	for i := range 2 {
		path := filepath.Join(dir, "shard"+string(rune('0'+i))+".rec")
		w, err := record.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w.WriteHeader(&record.Header{Shard: string(rune('0'+i)) + "/2", StartAt: startAt, Backend: "sglang", DatasetName: "random-ids",
			RequestRate: 200, RandomInputLen: 16, RandomOutputLen: 8})
		w.StartRun(time.Unix(0, int64(startAt*1e9)))
		n := 0
		for k := range f.Records {
			if f.Records[k].Seq%2 == i {
				w.Write(&f.Records[k])
				n++
			}
		}
		w.WriteEnd(&record.End{Start: startAt, Records: n})
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	mss := filepath.Join(dir, "merged-steady.jsonl")
	code, stdout, stderr = run(t, nil, append([]string{"merge", "--output-file", filepath.Join(dir, "merged.jsonl"),
		"--steady-state-concurrency-ratio", "0.5", "--steady-state-output-file", mss}, files...)...)
	if code != 0 || !strings.Contains(stdout, "= Steady-State Result =") || !strings.Contains(stdout, "-Steady state: requests sent in the window-") {
		t.Fatalf("merge: exit %d\n%s\n%s", code, stdout, stderr)
	}
	one, _ := os.ReadFile(ss)
	merged, _ := os.ReadFile(mss)
	if len(one) == 0 || string(merged) != string(one) {
		t.Errorf("merged line\n%s\none process\n%s", merged, one)
	}
}

// A ratio outside (0, 1], or the file flag alone, is a usage error before
// any network call (no server listens at the URL), on a run, a merge and
// a report.
func TestSteadyStateFlags(t *testing.T) {
	const msg = "--steady-state-concurrency-ratio must be in (0, 1]"
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--steady-state-concurrency-ratio", "0"}, msg},
		{[]string{"--steady-state-concurrency-ratio", "1.5"}, msg},
		{[]string{"--steady-state-concurrency-ratio", "-0.1"}, msg},
		{[]string{"--steady-state-concurrency-ratio", "nan"}, msg},
		{[]string{"--steady-state-output-file", "x.jsonl"}, "--steady-state-output-file: give --steady-state-concurrency-ratio too"},
	} {
		code, _, stderr := run(t, nil, append([]string{"--base-url", "http://127.0.0.1:9", "--num-prompts", "1"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.msg) || strings.Contains(stderr, "127.0.0.1") {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, stderr)
		}
		for _, sub := range []string{"merge", "report"} {
			code, _, stderr = run(t, nil, append([]string{sub, "none.jsonl"}, c.args...)...)
			if code != 2 || !strings.Contains(stderr, c.msg) {
				t.Errorf("%s %v: exit %d, stderr %q", sub, c.args, code, stderr)
			}
		}
	}
}

// With every request failed the block says n/a, the line holds nulls,
// and the run's exit code is the all-failed one, as without the flag.
func TestSteadyStateAllFailed(t *testing.T) {
	_, base := newFaultSim(t, sim.FaultRate{Fault: sim.Fault{Kind: sim.Fault503}, Rate: 1})
	dir := t.TempDir()
	ss := filepath.Join(dir, "steady.jsonl")
	args := []string{"--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids", "--random-input-len", "8",
		"--random-output-len", "4", "--num-prompts", "3", "--warmup-requests", "0", "--no-server-metrics",
		"--output-file", filepath.Join(dir, "out.jsonl")}
	plain, _, _ := run(t, nil, args...)
	code, stdout, stderr := run(t, nil, append(args, "--steady-state-concurrency-ratio", "1", "--steady-state-output-file", ss)...)
	if code != plain || code == 0 || field(t, stdout, "Measurement duration (s):") != "n/a" {
		t.Fatalf("exit %d (%d without the flag)\n%s\n%s", code, plain, stdout, stderr)
	}
	data, _ := os.ReadFile(ss)
	want := `{"concurrency_ratio": 1.0` + strings.Repeat(`, "x": null`, 14) + "}\n"
	got := string(data)
	for _, k := range steadyKeys[1:] {
		got = strings.Replace(got, `"`+k+`"`, `"x"`, 1)
	}
	if got != want {
		t.Errorf("line %s", data)
	}
}

// A sweep with the flags writes each point's steady state: under
// steady_state in its result line and as a line of the output file.
func TestSteadyStateSweep(t *testing.T) {
	_, base := newSim(t, steadySim(5*time.Millisecond, 2*time.Millisecond))
	dir := t.TempDir()
	out, ss := filepath.Join(dir, "sweep.jsonl"), filepath.Join(dir, "steady.jsonl")
	code, stdout, stderr := run(t, nil, "sweep", "--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids",
		"--random-input-len", "8", "--random-output-len", "6", "--num-prompts", "8", "--warmup-requests", "0", "--sweep-pause", "0",
		"--no-server-metrics", "--request-rate", "50,100", "--output-file", out,
		"--steady-state-concurrency-ratio", "1", "--steady-state-output-file", ss)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	data, _ := os.ReadFile(ss)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	main, _ := os.ReadFile(out)
	if len(lines) != 2 {
		t.Fatalf("%d steady-state lines:\n%s", len(lines), data)
	}
	for _, l := range lines {
		if got := keysInOrder(t, l); len(got) != 15 || !strings.Contains(string(main), `"steady_state": `+l) {
			t.Errorf("line %s (keys %v) not in the sweep's lines", l, got)
		}
	}
}
