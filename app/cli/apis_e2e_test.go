package cli

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"benchserve/internal/testenv"
)

// reasoningTruth is the part of /sim/truth these tests read.
type reasoningTruth struct {
	Requests []struct {
		ID               string   `json:"id"`
		TTFT             *float64 `json:"ttft"`
		TTFO             *float64 `json:"ttfo"`
		CompletionTokens int      `json:"completion_tokens"`
		ReasoningTokens  int      `json:"reasoning_tokens"`
	} `json:"requests"`
}

// Both APIs against the simulator, with 3 of every reply's tokens as
// reasoning: every request completes, the token totals are the
// simulator's (reasoning and content apart), and each request's TTFT and
// TTFO are its record's: the first token of any kind, and the first of
// content, within 1 ms on average (the client times from the write, the
// simulator from the arrival to its write's return).
func TestResponsesAndMessagesAgainstSimTruth(t *testing.T) {
	testenv.Slow(t) // TTFT and TTFO within 1 ms of the simulator's
	stamps := testenv.KernelStamps(t)
	cfg := steadySim(10*time.Millisecond, 3*time.Millisecond)
	cfg.ReasoningTokens = 3
	_, base := newSim(t, cfg)
	for _, be := range []string{"openai-responses", "anthropic-messages"} {
		t.Run(be, func(t *testing.T) {
			getJSON[map[string]any](t, base+"/sim/truth")
			if code, err := httpPost(base + "/sim/truth/reset"); err != nil || code != 200 {
				t.Fatalf("truth reset: %v %d", err, code)
			}
			dir := t.TempDir()
			out, recs := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "r.rec")
			code, stdout, stderr := run(t, nil, "--backend", be, "--base-url", base, "--dataset-name", "random-ids",
				"--random-input-len", "24", "--random-output-len", "12", "--random-range-ratio", "1", "--num-prompts", "16",
				"--max-concurrency", "4", "--warmup-requests", "0", "--output-file", out, "--record-file", recs)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			m := readLine(t, out)
			if num(t, m, "completed") != 16 || num(t, m, "total_output_tokens") != 16*12 ||
				num(t, m, "total_reasoning_tokens") != 16*3 || num(t, m, "total_content_tokens") != 16*9 {
				t.Errorf("completed %v, output %v, reasoning %v, content %v", m["completed"], m["total_output_tokens"], m["total_reasoning_tokens"], m["total_content_tokens"])
			}
			truth := getJSON[reasoningTruth](t, base+"/sim/truth")
			byID := map[string]int{}
			total := 0
			for i, r := range truth.Requests {
				byID[r.ID] = i
				total += r.CompletionTokens
			}
			if float64(total) != num(t, m, "total_output_tokens") {
				t.Errorf("the simulator generated %d tokens, the client counted %v", total, m["total_output_tokens"])
			}
			f, err := os.Open(recs)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var dTTFT, dTTFO []float64
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				var r struct {
					ID   string  `json:"id"`
					TTFT float64 `json:"ttft"`
					TTFO float64 `json:"ttfo"`
					RT   int     `json:"reasoning_tokens"`
				}
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
					t.Fatal(err)
				}
				k, ok := byID[r.ID]
				if !ok {
					t.Fatalf("request %s not in the truth", r.ID)
				}
				tr := truth.Requests[k]
				if tr.TTFT == nil || tr.TTFO == nil || *tr.TTFO <= *tr.TTFT || r.RT != tr.ReasoningTokens {
					t.Fatalf("request %s: truth ttft %v ttfo %v reasoning %d, client reasoning %d", r.ID, tr.TTFT, tr.TTFO, tr.ReasoningTokens, r.RT)
				}
				dTTFT = append(dTTFT, r.TTFT-*tr.TTFT)
				dTTFO = append(dTTFO, r.TTFO-*tr.TTFO)
			}
			if len(dTTFT) != 16 {
				t.Fatalf("%d records", len(dTTFT))
			}
			// The server's record ends when its write returned, which may be
			// after the bytes reached the client, and on a shared machine a
			// request can wait a few ms for the server to read it: single
			// requests can be off by that much, the median cannot.
			slices.Sort(dTTFT)
			slices.Sort(dTTFO)
			mTTFT, mTTFO := dTTFT[len(dTTFT)/2], dTTFO[len(dTTFO)/2]
			t.Logf("%s: median TTFT error %+.3f ms, TTFO error %+.3f ms (kernel stamps: %v)", be, mTTFT*1000, mTTFO*1000, stamps)
			if limit := 0.001; math.Abs(mTTFT) > limit || math.Abs(mTTFO) > limit {
				t.Errorf("median TTFT error %+.3f ms, TTFO error %+.3f ms: want within 1 ms", mTTFT*1000, mTTFO*1000)
			}
			if !strings.Contains(stdout, "Reasoning and content") || field(t, stdout, "Reasoning tokens:") != "48" {
				t.Errorf("console:\n%s", stdout)
			}
		})
	}
}
