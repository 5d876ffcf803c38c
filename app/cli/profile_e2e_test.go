package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchserve/internal/testenv"
)

// --sweep-profile auto with --duration (the README's example): the floor
// is a closed loop of 1 for the duration, the ceiling a closed loop of one
// request per prompt for the duration, then the rates between; the
// search's ceiling run the same.
func TestSweepProfileByDuration(t *testing.T) {
	testenv.Slow(t) // a request count over about 1 s of wall clock
	_, base := newSim(t, steadySim(5*time.Millisecond, 2*time.Millisecond))
	out := filepath.Join(t.TempDir(), "p.jsonl")
	common := []string{"--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids", "--random-input-len", "16",
		"--random-output-len", "4", "--num-prompts", "3", "--warmup-requests", "0", "--sweep-pause", "0", "--duration", "1", "--output-file", out}
	code, stdout, stderr := run(t, nil, append([]string{"sweep", "--sweep-profile", "auto", "--sweep-points", "1"}, common...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	lines := readLines(t, out)
	if len(lines) != 3 {
		t.Fatalf("%d lines, want floor, ceiling and 1 rate", len(lines))
	}
	point := func(m map[string]any) map[string]any { return m["sweep_point"].(map[string]any) }
	for i, want := range []struct {
		phase string
		conc  float64
	}{{"floor", 1}, {"ceiling", 3}} {
		p := point(lines[i])
		if p["phase"] != want.phase || num(t, p, "max_concurrency") != want.conc {
			t.Errorf("run %d: %v, want %s at concurrency %v", i+1, p, want.phase, want.conc)
		}
		// Closed loops for the duration: the prompts reused (a request
		// takes about 15 ms), over at least the duration.
		if n, d := num(t, lines[i], "completed"), num(t, lines[i], "duration"); n <= 3 || d < 0.9 {
			t.Errorf("%s: %v requests in %v s, want more than 3 over about 1 s", want.phase, n, d)
		}
	}
	if p := point(lines[2]); p["phase"] != "profile" || p["max_concurrency"] != nil {
		t.Errorf("run 3: %v, want a profile rate without a cap", p)
	}
	if !strings.Contains(stdout, "The ceiling by --duration: a closed loop of 3 requests in flight") {
		t.Errorf("no line saying how the ceiling was chosen:\n%s", stdout)
	}

	out2 := filepath.Join(t.TempDir(), "s.jsonl")
	common[len(common)-1] = out2
	code, stdout, stderr = run(t, nil, append([]string{"sweep", "--search", "request-rate", "--slo", "p99_ttft_ms<60000", "--search-max-runs", "2"}, common...)...)
	if code != 0 && code != 4 {
		t.Fatalf("search: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if p := point(readLines(t, out2)[0]); p["phase"] != "ceiling" || num(t, p, "max_concurrency") != 3 {
		t.Errorf("search's first run: %v, want the ceiling at concurrency 3", p)
	}
}

// One --max-concurrency caps the profile's runs (the ceiling's too); a
// list or a rate is refused.
func TestSweepProfileTakesOneCap(t *testing.T) {
	sc, _, err := parseSweep([]string{"--sweep-profile", "auto", "--max-concurrency", "8"}, 80)
	if err != nil || len(sc.Concurrencies) != 1 || sc.Concurrencies[0] != 8 {
		t.Fatalf("one cap: %v, %v", err, sc)
	}
	for args, want := range map[string]string{
		"--max-concurrency 8,16": "--sweep-profile auto: give --max-concurrency one value",
		"--request-rate 4":       "--sweep-profile auto finds its own rates: remove --request-rate",
	} {
		_, _, err := parseSweep(append([]string{"--sweep-profile", "auto"}, strings.Fields(args)...), 80)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}
