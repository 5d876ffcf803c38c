package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchserve/internal/testenv"
	"benchserve/record"
)

// sloArgs is a short run against base: 40 requests of 8 output tokens, 4
// at a time.
func sloArgs(base, out string, more ...string) []string {
	return append([]string{"--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids",
		"--random-input-len", "16", "--random-output-len", "8", "--random-range-ratio", "1",
		"--num-prompts", "40", "--max-concurrency", "4", "--warmup-requests", "0", "--output-file", out}, more...)
}

// A TTFT bound well above the simulator's 20 ms makes (nearly) every
// request good, one below it none; the console shows the goodput right
// after the request throughput, where vLLM prints it.
func TestGoodputAgainstSim(t *testing.T) {
	t.Parallel()
	_, base := newSim(t, steadySim(20*time.Millisecond, 4*time.Millisecond))
	for _, c := range []struct {
		bound    string
		min, max float64
	}{{"ttft:250", 0.95, 1}, {"ttft:5", 0, 0.05}} {
		out := filepath.Join(t.TempDir(), "r.jsonl")
		code, stdout, stderr := run(t, nil, sloArgs(base, out, "--goodput", c.bound, "e2el:5000")...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", c.bound, code, stdout, stderr)
		}
		m := readLine(t, out)
		att := num(t, m, "slo_attainment")
		if att < c.min || att > c.max {
			t.Errorf("%s: slo_attainment %v, want in [%v, %v]", c.bound, att, c.min, c.max)
		}
		good := num(t, m, "good_requests")
		if want := math.Round(att * 40); good != want {
			t.Errorf("%s: good_requests %v, want attainment × 40 = %v", c.bound, good, want)
		}
		// request_goodput = good / duration, output_token_goodput = 8 × that.
		dur := num(t, m, "duration")
		if g := num(t, m, "request_goodput"); math.Abs(g-good/dur) > 1e-9 {
			t.Errorf("%s: request_goodput %v, want %v", c.bound, g, good/dur)
		}
		if g := num(t, m, "output_token_goodput"); math.Abs(g-8*good/dur) > 1e-9 {
			t.Errorf("%s: output_token_goodput %v, want %v", c.bound, g, 8*good/dur)
		}
		if got := string(mustJSON(t, m["goodput_slo_ms"])); got != `{"e2el":5000.0,"ttft":`+strings.TrimPrefix(c.bound, "ttft:")+`.0}` {
			t.Errorf("goodput_slo_ms %s", got)
		}
		lines := strings.Split(stdout, "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "Request throughput (req/s):") {
				if !strings.HasPrefix(lines[i+1], "Request goodput (req/s):") || !strings.HasPrefix(lines[i+3], "SLO attainment (%):") {
					t.Errorf("goodput lines not after the request throughput:\n%s", strings.Join(lines[i:i+4], "\n"))
				}
			}
		}
		if got, want := field(t, stdout, "SLO attainment (%):"), pct2(att*100); got != want {
			t.Errorf("console attainment %s, want %s", got, want)
		}
	}
}

// A breached threshold exits 4 and names itself on the console, in the
// error and in the line; a met one exits 0; a bad one is a usage error
// that lists the keys.
func TestThresholdsExit(t *testing.T) {
	t.Parallel()
	_, base := newSim(t, steadySim(20*time.Millisecond, 4*time.Millisecond))
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, stdout, stderr := run(t, nil, sloArgs(base, out, "--threshold", "p99_ttft_ms<1", "--threshold", "failed_rate<0.01", "--threshold=completed>=40")...)
	if code != 4 {
		t.Fatalf("exit %d, want 4\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "-------------------Thresholds-------------------") ||
		!strings.Contains(stdout, "p99_ttft_ms<1") || !strings.Contains(field(t, stdout, "p99_ttft_ms<1"), "FAIL (") {
		t.Errorf("console:\n%s", stdout)
	}
	if field(t, stdout, "failed_rate<0.01") != "pass (0)" || field(t, stdout, "completed>=40") != "pass (40)" {
		t.Errorf("console:\n%s", stdout)
	}
	if !strings.Contains(stderr, "1 of 3 thresholds failed: p99_ttft_ms<1") {
		t.Errorf("stderr: %s", stderr)
	}
	m := readLine(t, out)
	if m["thresholds_passed"] != false {
		t.Errorf("thresholds_passed %v", m["thresholds_passed"])
	}
	ts, _ := m["thresholds"].([]any)
	if len(ts) != 3 || ts[0].(map[string]any)["pass"] != false || ts[2].(map[string]any)["pass"] != true {
		t.Errorf("thresholds %v", m["thresholds"])
	}
	if num(t, m, "failed_rate") != 0 {
		t.Errorf("failed_rate %v", m["failed_rate"])
	}

	code, stdout, stderr = run(t, nil, sloArgs(base, out, "--threshold", "p99_ttft_ms<5000", "--metric-percentiles", "99.9", "--threshold", "p99.9_ttft_ms<5000")...)
	if code != 0 {
		t.Fatalf("met thresholds: exit %d\n%s\n%s", code, stdout, stderr)
	}

	for _, c := range []struct {
		arg, want string
	}{
		{"p99_ttft<5", `--threshold "p99_ttft<5": no numeric result key "p99_ttft"; keys: request_rate, max_concurrency,`},
		{"p99_ttft_ms", `--threshold "p99_ttft_ms": expected KEY OP NUMBER`},
		// Goodput's keys exist only with --goodput.
		{"slo_attainment>=0.9", `no numeric result key "slo_attainment"`},
	} {
		code, _, stderr := run(t, nil, sloArgs(base, out, "--threshold", c.arg)...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("--threshold %s: exit %d, stderr %q; want 2 and one line with %q", c.arg, code, stderr, c.want)
		}
	}
}

// The chosen percentiles are printed in their metric's group and written
// as vLLM's keys; the reference's keys stay, and none is written twice.
func TestChosenPercentiles(t *testing.T) {
	t.Parallel()
	_, base := newSim(t, steadySim(20*time.Millisecond, 4*time.Millisecond))
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, stdout, stderr := run(t, nil, sloArgs(base, out, "--percentile-metrics", "ttft,e2el,itl", "--metric-percentiles", "50,99,99.9")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	m := readLine(t, out)
	for _, k := range []string{"p50_ttft_ms", "p99.9_ttft_ms", "p50_e2el_ms", "p99_e2el_ms", "p99.9_e2el_ms", "p50_itl_ms", "p99.9_itl_ms", "p99_ttft_ms"} {
		num(t, m, k)
	}
	for _, k := range []string{"p50_tpot_ms", "p99.9_tpot_ms"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s written, but tpot was not chosen", k)
		}
	}
	if num(t, m, "p50_ttft_ms") != num(t, m, "median_ttft_ms") || num(t, m, "p50_e2el_ms") != num(t, m, "median_e2e_latency_ms") {
		t.Errorf("p50 differs from the median: %v %v", m["p50_ttft_ms"], m["median_ttft_ms"])
	}
	if num(t, m, "p99_e2el_ms") != num(t, m, "p99_e2e_latency_ms") {
		t.Errorf("p99_e2el_ms %v != p99_e2e_latency_ms %v", m["p99_e2el_ms"], m["p99_e2e_latency_ms"])
	}
	raw, _ := os.ReadFile(out)
	if n := strings.Count(string(raw), `"p99_ttft_ms"`); n != 1 {
		t.Errorf("p99_ttft_ms written %d times", n)
	}
	if got, want := field(t, stdout, "P99.9 TTFT (ms):"), pct2(num(t, m, "p99.9_ttft_ms")); got != want {
		t.Errorf("P99.9 TTFT %s, want %s", got, want)
	}
	if strings.Count(stdout, "P99 TTFT (ms):") != 1 || !strings.Contains(stdout, "P50 ITL (ms):") || strings.Contains(stdout, "P50 TPOT") {
		t.Errorf("console:\n%s", stdout)
	}
}

// --duration 4 at 20 req/s (constant arrival: exactly 80 planned, rows
// reused as there are only 30) sends for 4 s and completes 80; at the
// reference's Poisson arrival about 80; a closed loop by time sends
// nothing after its end.
func TestRunByDuration(t *testing.T) {
	testenv.Slow(t) // send counts and a run length against the wall clock
	_, base := newSim(t, steadySim(10*time.Millisecond, 2*time.Millisecond))
	args := func(out string, more ...string) []string {
		return append([]string{"--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids",
			"--random-input-len", "16", "--random-output-len", "4", "--random-range-ratio", "1",
			"--num-prompts", "30", "--warmup-requests", "0", "--output-details", "--output-file", out}, more...)
	}
	out := filepath.Join(t.TempDir(), "r.jsonl")
	start := time.Now()
	code, stdout, stderr := run(t, nil, args(out, "--duration", "4", "--request-rate", "20", "--arrival", "constant")...)
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	m := readLine(t, out)
	if c := num(t, m, "completed"); c != 80 {
		t.Errorf("completed %v, want 80", c)
	}
	if d := num(t, m, "duration"); d < 3.95 || d > 4.5 {
		t.Errorf("duration %v s, want about 4", d)
	}
	if took > 8*time.Second {
		t.Errorf("the run took %v", took)
	}
	if m["run_mode"] != "duration" || num(t, m, "duration_limit_s") != 4 || num(t, m, "not_sent_at_duration_end") != 0 {
		t.Errorf("mode keys: %v %v %v", m["run_mode"], m["duration_limit_s"], m["not_sent_at_duration_end"])
	}
	if num(t, m, "total_input_tokens") != 80*16 {
		t.Errorf("total_input_tokens %v, want 80 × 16", m["total_input_tokens"])
	}
	for _, s := range floatsOf(m["send_times"]) {
		if s >= 4 {
			t.Errorf("a request left at %v s, after the duration", s)
		}
	}

	code, stdout, stderr = run(t, nil, args(out, "--duration", "4", "--request-rate", "20")...)
	if code != 0 {
		t.Fatalf("poisson: exit %d\n%s\n%s", code, stdout, stderr)
	}
	m = readLine(t, out)
	// 80 expected; 4 standard deviations of a Poisson count are ±36.
	if c := num(t, m, "completed"); c < 44 || c > 116 {
		t.Errorf("poisson: completed %v, want about 80", c)
	}

	code, stdout, stderr = run(t, nil, args(out, "--duration", "1.5", "--max-concurrency", "3")...)
	if code != 0 {
		t.Fatalf("closed loop: exit %d\n%s\n%s", code, stdout, stderr)
	}
	m = readLine(t, out)
	sends := floatsOf(m["send_times"])
	if len(sends) < 30 {
		t.Errorf("closed loop: %d requests in 1.5 s at 3 in flight of ~20 ms each", len(sends))
	}
	for _, s := range sends {
		if s >= 1.5 {
			t.Errorf("closed loop: a request left at %v s", s)
		}
	}
	if num(t, m, "max_inflight_requests") > 3 {
		t.Errorf("closed loop: %v in flight", m["max_inflight_requests"])
	}
}

// A linear ramp from 2 to 18 req/s over a 4 s run, constant arrival: the
// rate at t is 2 + 4t, so second k expects ∫ = 4 + 4k sends: 4, 8, 12, 16.
func TestLinearRampSendCounts(t *testing.T) {
	testenv.Slow(t) // send counts per second of wall clock
	_, base := newSim(t, steadySim(5*time.Millisecond, time.Millisecond))
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, stdout, stderr := run(t, nil, "--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids",
		"--random-input-len", "16", "--random-output-len", "2", "--random-range-ratio", "1",
		"--num-prompts", "10", "--warmup-requests", "0", "--output-details", "--output-file", out,
		"--duration", "4", "--arrival", "constant", "--ramp-up-strategy", "linear", "--ramp-up-start-rps", "2", "--ramp-up-end-rps", "18")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	m := readLine(t, out)
	counts := make([]int, 4)
	for _, s := range floatsOf(m["send_times"]) {
		counts[min(int(s), 3)]++
	}
	for k, want := range []int{4, 8, 12, 16} {
		if d := counts[k] - want; d < -1 || d > 1 {
			t.Errorf("second %d: %d sends, want %d ± 1 (all: %v)", k, counts[k], want, counts)
		}
	}
	if m["ramp_up_strategy"] != "linear" || num(t, m, "ramp_up_duration_s") != 4 {
		t.Errorf("ramp keys %v %v", m["ramp_up_strategy"], m["ramp_up_duration_s"])
	}
	// The self-check's target is the ramp's mean rate (10), and the
	// planned rate is the drawn schedule's.
	if got := field(t, stdout, "Target request rate (req/s):"); got != "10.00" {
		t.Errorf("target rate %s, want the ramp's mean 10.00", got)
	}
	if got := field(t, stdout, "Traffic request rate:"); got != "linear 2-18" {
		t.Errorf("traffic request rate %q", got)
	}
}

// A concurrency ramp over 1.2 s to a cap of 4, every request at once:
// the cap is 1 until 0.4 s, 2 until 0.8 s, 3 until 1.2 s; requests of
// about 300 ms show it in their send times.
func TestConcurrencyRamp(t *testing.T) {
	t.Parallel()
	_, base := newSim(t, steadySim(5*time.Millisecond, 30*time.Millisecond))
	dir := t.TempDir()
	out, recPath := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "records.jsonl")
	code, stdout, stderr := run(t, nil, "--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids",
		"--random-input-len", "16", "--random-output-len", "10", "--random-range-ratio", "1",
		"--num-prompts", "12", "--warmup-requests", "0", "--output-file", out, "--record-file", recPath,
		"--max-concurrency", "4", "--concurrency-ramp-duration", "1.2")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	m := readLine(t, out)
	f, err := record.ReadFile(recPath)
	if err != nil {
		t.Fatal(err)
	}
	recs := f.Records
	sort.Slice(recs, func(a, b int) bool { return recs[a].Start < recs[b].Start })
	// The cap is 1 until 0.4 s into the run, then 2, 3 and 4 at 0.8 s: the
	// second request leaves when the first has ended or the cap has risen,
	// whichever comes first, and the third not before 0.4 s (each request
	// takes 10 tokens of 30 ms). Bounds of cause, not of time: a loaded
	// machine makes sends later, never earlier.
	const slack = 0.001
	end0 := recs[0].Start + recs[0].Latency
	if recs[1].Start < min(end0, 0.4)-slack || recs[2].Start < 0.4-slack {
		t.Errorf("sends at %.3f, %.3f, %.3f s, the first ending at %.3f s: want the second after the first ended or the cap rose at 0.4 s, the third after 0.4 s",
			recs[0].Start, recs[1].Start, recs[2].Start, end0)
	}
	if num(t, m, "concurrency_ramp_duration_s") != 1.2 || num(t, m, "max_inflight_requests") != 4 {
		t.Errorf("keys %v %v", m["concurrency_ramp_duration_s"], m["max_inflight_requests"])
	}
}

// --warmup-duration sends the run's traffic for that long before the
// measured run, and none of it is in the result.
func TestWarmupDuration(t *testing.T) {
	testenv.Slow(t) // a request count over 0.5 s of wall clock (exact: bench TestWarmupByTime)
	s, base := newSim(t, steadySim(5*time.Millisecond, time.Millisecond))
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, stdout, stderr := run(t, nil, "--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids",
		"--random-input-len", "16", "--random-output-len", "2", "--random-range-ratio", "1",
		"--num-prompts", "10", "--output-file", out, "--max-concurrency", "2", "--warmup-duration", "0.5")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "Starting warmup for 0.5 seconds...") {
		t.Errorf("stdout:\n%s", stdout)
	}
	n := 0
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "Warmup completed with ") {
			n = atoi(t, strings.Fields(l)[3])
		}
	}
	if n < 10 {
		t.Errorf("warmup sent %d requests in 0.5 s at 2 in flight of ~10 ms", n)
	}
	m := readLine(t, out)
	if num(t, m, "completed") != 10 || num(t, m, "warmup_duration_s") != 0.5 {
		t.Errorf("completed %v, warmup_duration_s %v", m["completed"], m["warmup_duration_s"])
	}
	if got := len(getJSON[simTruth](t, s.URL()+"/sim/truth").Requests); got != n+10 {
		t.Errorf("the simulator served %d requests, want %d warmup + 10", got, n)
	}
}

// Bad values of the new flags are one usage line naming the flag.
func TestLoadFlagErrors(t *testing.T) {
	_, base := newSim(t, steadySim(5*time.Millisecond, time.Millisecond))
	out := filepath.Join(t.TempDir(), "r.jsonl")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--duration", "0"}, "--duration: must be a number of seconds > 0, got 0"},
		{[]string{"--duration", "5"}, "--duration: with --request-rate inf every request leaves at once; give --max-concurrency"},
		{[]string{"--ramp-up-strategy", "linear", "--ramp-up-start-rps", "1"}, "give both --ramp-up-start-rps and --ramp-up-end-rps"},
		{[]string{"--ramp-up-strategy", "linear", "--ramp-up-start-rps", "1", "--ramp-up-end-rps", "5", "--request-rate", "3"}, "the ramp sets the request rate; remove --request-rate 3"},
		{[]string{"--ramp-up-strategy", "exponential", "--ramp-up-start-rps", "0", "--ramp-up-end-rps", "5"}, "--ramp-up-start-rps: must be > 0 for an exponential ramp"},
		{[]string{"--ramp-up-start-rps", "1"}, "need --ramp-up-strategy"},
		{[]string{"--concurrency-ramp-duration", "2"}, "give --max-concurrency"},
		{[]string{"--goodput", "ttft=50"}, `--goodput: "ttft=50"`},
		{[]string{"--goodput", "foo:5"}, `--goodput: unknown metric "foo"`},
		{[]string{"--metric-percentiles", "101"}, "--metric-percentiles"},
		{[]string{"--percentile-metrics", "ttft,bogus"}, "--percentile-metrics"},
		{[]string{"--warmup-duration", "1", "--warmup-requests", "3", "--max-concurrency", "2"}, "--warmup-requests"},
	} {
		args := append([]string{"--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids",
			"--num-prompts", "4", "--output-file", out}, c.args...)
		code, _, stderr := run(t, nil, args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, code, stderr, c.want)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pct2 is a value as the console's {:.2f} shows it.
func pct2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
