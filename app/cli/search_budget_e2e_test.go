package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchserve/internal/testenv"
)

// The search's run budget, against the simulator, with SLOs that the
// server's speed cannot decide (on the run's own request_rate, or always
// met), so the runs are known in advance: never more runs than
// --search-max-runs, and the answer says where the budget ended.
func TestSweepSearchBudget(t *testing.T) {
	testenv.Slow(t) // timed runs against the simulator (the budget rules: sweep/search_test.go)
	_, base := newSim(t, steadySim(time.Millisecond, time.Millisecond))
	common := []string{"sweep", "--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids",
		"--random-input-len", "16", "--random-output-len", "4", "--num-prompts", "4", "--warmup-requests", "0", "--sweep-pause", "0",
		"--search", "request-rate"}
	cases := []struct {
		args []string
		runs int
		cut  string
		want string
	}{
		// 10, 20 pass, 40 fails; bisecting 30, 25, 27.5, 28.75; then 2 of
		// the 3 confirming runs at 28.75.
		{[]string{"--request-rate", "10", "--slo", "request_rate<30", "--search-max-runs", "9"}, 9, "confirming",
			"Highest request rate meeting request_rate<30: about 28.75 req/s, between 28.75 req/s and 30 req/s, not confirmed: the run budget of 9 ended during the confirmation runs (met in 2 of 2 runs at 28.75 req/s, not run at 30 req/s); raise --search-max-runs."},
		{[]string{"--request-rate", "10", "--slo", "request_rate<30", "--search-max-runs", "7"}, 7, "confirming",
			"not confirmed: the run budget of 7 ended before the confirmation runs; raise --search-max-runs."},
		// A ceiling run, then 3 search runs that all meet the SLO.
		{[]string{"--slo", "p99_ttft_ms<1e9", "--search-max-runs", "4"}, 4, "bracketing",
			"the run budget of 4 ended before a load failed them; raise --search-max-runs."},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "s.jsonl")
		code, stdout, stderr := run(t, nil, append(append(common, c.args...), "--output-file", out)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", c.args, code, stdout, stderr)
		}
		runs := 0
		lines := readLines(t, out)
		for _, m := range lines {
			if _, ok := m["completed"]; ok {
				runs++
			}
		}
		if runs != c.runs {
			t.Errorf("%v: %d runs, want %d", c.args, runs, c.runs)
		}
		if !strings.Contains(stdout, c.want) {
			t.Errorf("%v: no %q in\n%s", c.args, c.want, stdout)
		}
		if last := lines[len(lines)-1]; int(num(t, last, "search_max_runs")) != c.runs || last["search_budget_ended"] != c.cut {
			t.Errorf("%v: search_max_runs %v, search_budget_ended %v; want %d, %s", c.args, last["search_max_runs"], last["search_budget_ended"], c.runs, c.cut)
		}
	}
}
