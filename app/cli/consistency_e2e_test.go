package cli

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchserve/internal/exit"
	"benchserve/sim"
)

// probeTruth is the part of GET /sim/truth the probe tests read.
type probeTruth struct {
	Requests []struct {
		ID         string `json:"id"`
		Fault      string `json:"fault"`
		DivergedAt *int   `json:"diverged_at"`
	} `json:"requests"`
}

// runProbes runs 300 requests, 16 at once, with 40 probes against a
// simulator whose decode steps take 2 ms (so that requests overlap) and
// the given faults; it returns the result line, the console and the
// simulator's truth.
func runProbes(t *testing.T, faults ...sim.FaultRate) (map[string]any, string, probeTruth) {
	t.Helper()
	cfg, _ := sim.Preset(sim.PresetInstant)
	cfg.DecodeBase = 2 * time.Millisecond
	cfg.EOSProbability = 0.05 // the probes' replies end where their prompts say
	cfg.Faults = faults
	_, base := newSim(t, cfg)
	out := filepath.Join(t.TempDir(), "res.jsonl")
	code, stdout, stderr := run(t, nil, "--backend", "vllm-chat", "--base-url", base, "--dataset-name", "random-ids",
		"--random-input-len", "16", "--random-output-len", "24", "--num-prompts", "300", "--disable-ignore-eos",
		"--max-concurrency", "16", "--consistency-probes", "40", "--output-file", out, "--output-details")
	if code != exit.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	m := readLine(t, out)
	if num(t, m, "completed") != 300 {
		t.Errorf("completed %v: probes counted in the run's figures", m["completed"])
	}
	return m, stdout, getJSON[probeTruth](t, base+"/sim/truth")
}

// Against the deterministic simulator every probe's reply under load is
// its idle reply: 0 divergence.
func TestConsistencyProbesDeterministic(t *testing.T) {
	m, stdout, truth := runProbes(t)
	if num(t, m, "consistency_probes") != 40 || num(t, m, "consistency_probes_compared") != 40 || num(t, m, "consistency_diverged") != 0 ||
		num(t, m, "consistency_divergence_rate") != 0 || m["consistency_first_diff_median"] != nil {
		t.Errorf("keys: %v %v %v %v", m["consistency_probes_compared"], m["consistency_diverged"], m["consistency_divergence_rate"], m["consistency_first_diff_median"])
	}
	if got := field(t, stdout, "Probes diverged under load (%):"); got != "0.00" {
		t.Errorf("console: %q", got)
	}
	idle, load := 0, 0
	for _, r := range truth.Requests {
		idle += b2i(strings.HasPrefix(r.ID, "probe-idle-"))
		load += b2i(strings.HasPrefix(r.ID, "probe-load-"))
	}
	if idle != 40 || load != 40 {
		t.Errorf("the simulator saw %d idle and %d loaded probes, want 40 each", idle, load)
	}
}

// Against diverge:1 at 30%, a probe diverges exactly when the simulator
// says its reply under load diverged: about 30% of them (never the idle
// ones, which ran alone), at the token the truth names.
func TestConsistencyProbesDiverge(t *testing.T) {
	f, err := sim.ParseFault("diverge:1")
	if err != nil {
		t.Fatal(err)
	}
	m, stdout, truth := runProbes(t, sim.FaultRate{Fault: f, Rate: 0.3})
	diverged, first := 0, -1
	for _, r := range truth.Requests {
		if strings.HasPrefix(r.ID, "probe-idle-") && r.DivergedAt != nil {
			t.Errorf("idle probe %s diverged", r.ID)
		}
		if strings.HasPrefix(r.ID, "probe-load-") && r.DivergedAt != nil {
			diverged++
			if first < 0 || *r.DivergedAt < first {
				first = *r.DivergedAt
			}
		}
	}
	got := int(num(t, m, "consistency_diverged"))
	if got != diverged || num(t, m, "consistency_probes_compared") != 40 {
		t.Errorf("%d probes diverged, the simulator diverged %d; compared %v", got, diverged, m["consistency_probes_compared"])
	}
	// Binomial(40, 0.3): 12 on average; outside [2, 24] once in 10^5.
	if rate := num(t, m, "consistency_divergence_rate"); got < 2 || got > 24 || rate != float64(got)/40 {
		t.Errorf("%d of 40 diverged (rate %v), want about 30%%", got, rate)
	}
	if got > 0 && num(t, m, "consistency_first_diff_min") != float64(first) {
		t.Errorf("first difference min %v, the simulator's %d", m["consistency_first_diff_min"], first)
	}
	pairs, _ := m["consistency_divergent_pairs"].([]any)
	if len(pairs) != min(got, 3) {
		t.Errorf("%d divergent pairs in the details", len(pairs))
	}
	for _, p := range pairs {
		pm := p.(map[string]any)
		if pm["idle"] == pm["loaded"] || pm["idle"] == "" {
			t.Errorf("pair %v", pm)
		}
	}
	want := strconv.FormatFloat(100*float64(got)/40, 'f', 2, 64)
	if field(t, stdout, "Probes diverged under load (%):") != want {
		t.Errorf("console: %q, want %s", field(t, stdout, "Probes diverged under load (%):"), want)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
