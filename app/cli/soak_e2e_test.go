package cli

import (
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"benchserve/internal/testenv"
	"benchserve/metrics"
	"benchserve/record"
	"benchserve/sim"
)

// A soak against the simulator: its result line says the percentiles
// came from sketches, and each is within the sketch's error of the exact
// figure over the same requests, read back from its --record-file (which
// a soak streams, holding nothing); counts and means are exact.
func TestSoakFiguresMatchTheRecordFile(t *testing.T) {
	testenv.Slow(t) // a real-time run of seconds
	cfg, _ := sim.Preset(sim.PresetH100Llama8B)
	_, base := newSim(t, cfg)
	dir := t.TempDir()
	rf, of := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "o.jsonl")
	code, stdout, stderr := run(t, nil, "--backend", "sglang", "--base-url", base,
		"--dataset-name", "random-ids", "--random-input-len", "64", "--random-output-len", "32",
		"--num-prompts", "400", "--request-rate", "200", "--soak", "--metric-percentiles", "50,99.9",
		"--record-file", rf, "--output-file", of)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "Soak: the percentiles above and below") {
		t.Errorf("the console does not say the percentiles came from sketches:\n%s", stdout)
	}
	line := readLine(t, of)
	if line["percentiles_from"] != "sketch" || line["sketch_relative_error"] != json.Number("0.01") {
		t.Errorf("percentiles_from %v, sketch_relative_error %v; want sketch, 0.01", line["percentiles_from"], line["sketch_relative_error"])
	}
	f, err := record.ReadFile(rf)
	if err != nil {
		t.Fatal(err)
	}
	dur, _ := line["duration"].(json.Number).Float64()
	exact := metrics.Compute(f.Records, dur, nil, metrics.Options{Percentiles: []float64{50, 99.9}})
	num := func(k string) float64 {
		n, ok := line[k].(json.Number)
		v, err := n.Float64()
		if !ok || err != nil {
			t.Fatalf("%s: %v", k, line[k])
		}
		return v
	}
	if got := int(num("completed")); got != 400 || exact.Completed != 400 {
		t.Fatalf("completed %d in the line, %d in the record file; want 400", got, exact.Completed)
	}
	if got := int(num("total_output_tokens")); got != exact.TotalOutput {
		t.Errorf("total_output_tokens %d, record file %d", got, exact.TotalOutput)
	}
	for _, m := range []struct {
		key  string
		want float64
	}{
		{"mean_ttft_ms", exact.TTFT.Mean},
		{"mean_e2e_latency_ms", exact.E2E.Mean},
		{"mean_itl_ms", exact.ITL.Mean},
	} {
		// The record file keeps times to the microsecond: a mean over
		// them differs from the run's in the last digits.
		if got := num(m.key); math.Abs(got-m.want) > 1e-3 {
			t.Errorf("%s = %v, exact over the record file %v", m.key, got, m.want)
		}
	}
	var ttft, e2e, itl []float64
	for _, r := range f.Records {
		ttft, e2e = append(ttft, r.TTFT), append(e2e, r.Latency)
		itl = r.Gaps.AppendSeconds(itl)
	}
	// The sketch's guarantee: within SketchError of a value at the
	// percentile's rank, k = p/100·(n−1), between the k-th smallest
	// rounded down and rounded up (NumPy interpolates between them).
	for _, m := range []struct {
		key  string
		vals []float64
		p    float64
	}{
		{"median_ttft_ms", ttft, 50}, {"p99_ttft_ms", ttft, 99}, {"p99.9_ttft_ms", ttft, 99.9},
		{"p99_e2e_latency_ms", e2e, 99}, {"median_e2e_latency_ms", e2e, 50},
		{"median_itl_ms", itl, 50}, {"p99_itl_ms", itl, 99}, {"p99.9_itl_ms", itl, 99.9},
	} {
		slices.Sort(m.vals)
		k := m.p / 100 * float64(len(m.vals)-1)
		lo, hi := m.vals[int(math.Floor(k))]*1000, m.vals[int(math.Ceil(k))]*1000
		e := metrics.SketchError
		if got := num(m.key); got < lo*(1-e)-1e-3 || got > hi*(1+e)+1e-3 {
			t.Errorf("%s = %v, the values at its rank over the record file are %v and %v (±%v%%)", m.key, got, lo, hi, e*100)
		}
	}
}

// A --duration past 30 minutes is a soak, said in a note; what a soak
// cannot give is refused before any network call (the address refuses
// connections: a call would fail otherwise).
func TestLongDurationIsASoak(t *testing.T) {
	base := "http://" + testenv.RefusedAddr(t)
	code, _, stderr := run(t, nil, "--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids",
		"--duration", "3600", "--request-rate", "10", "--output-details")
	if code != 2 {
		t.Fatalf("exit %d, want 2 (usage)\n%s", code, stderr)
	}
	for _, want := range []string{
		"note: --duration over 1800 s: a soak, as with --soak",
		"--output-details: --duration over 30 minutes, a soak keeps no per-request figures in memory",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "connect") || strings.Contains(stderr, "refused") {
		t.Errorf("a network call was made before the usage error:\n%s", stderr)
	}
}
