package cli

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"benchserve/internal/testenv"
	"benchserve/record"
)

// cancelTruth is the part of GET /sim/truth the cancellation test reads.
type cancelTruth struct {
	StartedUnix float64 `json:"started_unix"`
	Requests    []struct {
		ID               string   `json:"id"`
		CancelledAt      *float64 `json:"cancelled_at"`
		CompletionTokens int      `json:"completion_tokens"`
		Finish           string   `json:"finish_reason"`
		Error            string   `json:"error"`
	} `json:"requests"`
}

// 10% of requests cancelled 0.2 s after they were written, against the
// simulator, whose replies take about 0.6 s: the simulator's truth shows
// 10% ± 3% of them cancelled, at the moment the client closed them (its
// record's cancel_at, written + 0.2 s, plus cancel_late, how late its timer
// ran), its engine slot freed (aborted, fewer tokens); the rest complete
// with their full output; the result counts them apart from the failures.
// Through both receivers. The bounds: each after the plan (causality) and
// within a second (on a 2-core machine shared with other work, load 10
// and more, either side's wake-up has been seen up to 0.3 s late); the
// medians are logged.
func TestCancellationAgainstSimTruth(t *testing.T) {
	testenv.Slow(t) // a real-time run of seconds
	const n, out, delay = 300, 30, 0.2
	_, base := newSim(t, steadySim(10*time.Millisecond, 20*time.Millisecond))
	for _, recv := range []string{"events", "poller"} {
		t.Run(recv, func(t *testing.T) {
			getJSON[map[string]any](t, base+"/sim/truth") // wait for earlier responses
			if code, err := httpPost(base + "/sim/truth/reset"); err != nil || code != 200 {
				t.Fatalf("truth reset: %v %d", err, code)
			}
			dir := t.TempDir()
			rf, of := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "o.jsonl")
			code, stdout, stderr := run(t, map[string]string{receiveEnv: recv}, "--backend", "sglang-oai", "--base-url", base,
				"--dataset-name", "random-ids", "--random-input-len", "32", "--random-output-len", "30", "--random-range-ratio", "1",
				"--num-prompts", "300", "--request-rate", "100", "--warmup-requests", "0",
				"--request-cancellation-rate", "10", "--request-cancellation-delay", "0.2",
				"--record-file", rf, "--output-file", of)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			f, err := record.ReadFile(rf)
			if err != nil {
				t.Fatal(err)
			}
			truth := getJSON[cancelTruth](t, base+"/sim/truth")
			byID := map[string]int{}
			for i, r := range truth.Requests {
				byID[r.ID] = i
			}
			if len(f.Records) != n || len(truth.Requests) != n {
				t.Fatalf("%d records, %d in the truth; want %d", len(f.Records), len(truth.Requests), n)
			}
			cancelled := 0
			var worst, worstLate, worstPlan float64
			var diffs, plans []float64
			for _, r := range f.Records {
				k, ok := byID[r.ID]
				if !ok {
					t.Fatalf("request %s not in the truth", r.ID)
				}
				tr := truth.Requests[k]
				if !r.Cancelled() {
					if !r.Success || tr.CancelledAt != nil || tr.CompletionTokens != out || tr.Error != "" {
						t.Errorf("request %s not cancelled: success %v (%s), truth cancelled_at %v, %d tokens, error %q",
							r.ID, r.Success, r.Error, tr.CancelledAt, tr.CompletionTokens, tr.Error)
					}
					continue
				}
				cancelled++
				// The client's plan: written (after its start, and after
				// connecting when it had to) + the delay.
				if d := r.CancelAt - r.Start; d < delay || r.CancelLate < 0 || r.CancelLate > 1 {
					t.Errorf("request %s: cancelled %.6f s after its start (want %.1f s after it was written), %.6f s late", r.ID, d, delay, r.CancelLate)
				}
				if tr.CancelledAt == nil || tr.Finish != "abort" || tr.CompletionTokens >= out {
					t.Errorf("request %s: the simulator did not see it cancelled: cancelled_at %v, finish %q, %d tokens",
						r.ID, tr.CancelledAt, tr.Finish, tr.CompletionTokens)
					continue
				}
				// Both clocks anchored to the wall clock at their start.
				seen := truth.StartedUnix + *tr.CancelledAt
				diff := math.Abs(seen - (r.RunStart + r.CancelAt + r.CancelLate))
				plan := seen - (r.RunStart + r.CancelAt)
				diffs, plans = append(diffs, diff), append(plans, plan)
				worst, worstLate, worstPlan = max(worst, diff), max(worstLate, r.CancelLate), max(worstPlan, plan)
				// Wall-clock anchors: a millisecond of slack for the causal bound.
				if plan < -0.001 || diff > 1 {
					t.Errorf("request %s: the simulator saw it cancelled %.3f ms after the client planned, %.3f ms from when it closed (%.3f ms late)",
						r.ID, plan*1e3, diff*1e3, r.CancelLate*1e3)
				}
			}
			if share := float64(cancelled) / n; share < 0.07 || share > 0.13 {
				t.Errorf("%d of %d cancelled (%.1f%%), want 10%% ± 3%%", cancelled, n, share*100)
			}
			median := func(v []float64) float64 {
				if len(v) == 0 {
					return 0
				}
				slices.Sort(v)
				return v[len(v)/2]
			}
			// The medians are measured, not bounded: a loaded machine
			// wakes either side late by any amount.
			mClose, mPlan := median(diffs), median(plans)
			t.Logf("%s: %d cancelled; the simulator saw them a median %.3f ms (at most %.3f ms) from the client's close, a median %.3f ms (at most %.3f ms) after its plan; the timer ran up to %.3f ms late",
				recv, cancelled, mClose*1e3, worst*1e3, mPlan*1e3, worstPlan*1e3, worstLate*1e3)
			line := readLine(t, of)
			num := func(k string) string { return fmt.Sprint(line[k]) }
			if num("cancelled_requests") != fmt.Sprint(cancelled) || num("failed") != "0" || num("completed") != fmt.Sprint(n-cancelled) {
				t.Errorf("result: cancelled_requests %v, failed %v, completed %v; want %d, 0, %d",
					line["cancelled_requests"], line["failed"], line["completed"], cancelled, n-cancelled)
			}
			if want := "Cancelled requests (injected):"; !strings.Contains(stdout, want) {
				t.Errorf("no %q line:\n%s", want, stdout)
			}
		})
	}
}
