package cli

import (
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchserve/internal/testenv"
	"benchserve/sim"
)

// For every backend, a benchserve run against the simulator measures what
// the simulator recorded doing: each request is matched to its truth record
// by id; its TTFT can never be shorter than the server's (less the time the
// server's first write took), and is within a stated tolerance of it; per-
// chunk backends see one gap per chunk after the first; the mean ITL is the
// server's within the tolerance. Where the kernel stamps TCP reads
// (testenv.KernelStamps), every response is kernel-timed.
func TestEndToEndAgainstSimTruth(t *testing.T) {
	testenv.Slow(t)         // client times within a tolerance of the simulator's
	const tolerance = 0.100 // s: loose, the machine is shared; typical errors are a fraction of a millisecond
	stamps := testenv.KernelStamps(t)
	cfg := steadySim(20*time.Millisecond, 4*time.Millisecond)
	_, base := newSim(t, cfg)

	perChunk := map[string]bool{"sglang-oai": true, "sglang-oai-chat": true, "vllm": true, "vllm-chat": true,
		"lmdeploy": true, "lmdeploy-chat": true, "trt": true, "truss": true}
	for _, be := range []string{"sglang", "sglang-oai", "sglang-oai-chat", "vllm", "vllm-chat", "lmdeploy", "lmdeploy-chat", "trt", "truss"} {
		t.Run(be, func(t *testing.T) {
			getJSON[map[string]any](t, base+"/sim/truth") // wait for earlier responses
			if resp, err := httpPost(base + "/sim/truth/reset"); err != nil || resp != 200 {
				t.Fatalf("truth reset: %v %d", err, resp)
			}
			out := filepath.Join(t.TempDir(), "r.jsonl")
			args := []string{"--backend", be, "--base-url", base, "--dataset-name", "random-ids",
				"--random-input-len", "32", "--random-output-len", "12", "--random-range-ratio", "1",
				"--num-prompts", "8", "--max-concurrency", "4", "--warmup-requests", "0", "--output-details", "--output-file", out}
			if be == "trt" || be == "truss" {
				args = append(args, "--model", cfg.Model)
			}
			code, stdout, stderr := run(t, nil, args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			data, _ := os.ReadFile(out)
			var res struct {
				IDs         []string    `json:"request_ids"`
				TTFTs       []float64   `json:"ttfts"`
				ITLs        [][]float64 `json:"itls"`
				KernelTimed float64     `json:"kernel_timed_pct"`
			}
			line := strings.ReplaceAll(strings.TrimSpace(string(data)), "Infinity", "null")
			if err := json.Unmarshal([]byte(line), &res); err != nil {
				t.Fatal(err)
			}
			truth := getJSON[simTruth](t, base+"/sim/truth")
			byID := map[string]int{}
			for i, r := range truth.Requests {
				byID[r.ID] = i
			}
			if len(res.IDs) != 8 {
				t.Fatalf("%d request ids", len(res.IDs))
			}
			// Where the kernel stamps, every plain-HTTP response is timed by it.
			if stamps && res.KernelTimed != 100 {
				t.Errorf("kernel_timed_pct %v, want 100", res.KernelTimed)
			}
			var errSum, itlClient, itlTrue float64
			var nClient, nTrue int
			for i, id := range res.IDs {
				k, ok := byID[id]
				if !ok {
					t.Fatalf("request %d: id %q not in the truth", i, id)
				}
				tr := truth.Requests[k]
				first := tr.Chunks[0]
				if res.TTFTs[i] < *tr.TTFT-first[2] {
					t.Errorf("request %s: TTFT %.6f s before the server wrote its first chunk (%.6f s)", id, res.TTFTs[i], *tr.TTFT-first[2])
				}
				if d := res.TTFTs[i] - *tr.TTFT; d > tolerance {
					t.Errorf("request %s: TTFT %.4f s, server %.4f s", id, res.TTFTs[i], *tr.TTFT)
				}
				errSum += res.TTFTs[i] - *tr.TTFT
				if perChunk[be] && len(res.ITLs[i]) != len(tr.Chunks)-1 {
					t.Errorf("request %s: %d gaps, server wrote %d chunks", id, len(res.ITLs[i]), len(tr.Chunks))
				}
				for _, g := range res.ITLs[i] {
					itlClient += g
					nClient++
				}
				for c := 1; c < len(tr.Chunks); c++ {
					itlTrue += tr.Chunks[c][0] - tr.Chunks[c-1][0]
					nTrue++
				}
			}
			if perChunk[be] {
				if d := math.Abs(itlClient/float64(nClient) - itlTrue/float64(nTrue)); d > tolerance/10 {
					t.Errorf("mean ITL %.6f s, server %.6f s", itlClient/float64(nClient), itlTrue/float64(nTrue))
				}
			}
			t.Logf("%s: mean TTFT error %+.3f ms", be, errSum/8*1000)
		})
	}
}

// steadySim is a simulator whose TTFT is prefill and whose decode steps
// take step, whatever the batch, and whose replies run to their length.
func steadySim(prefill, step time.Duration) sim.Config {
	cfg, _ := sim.Preset(sim.PresetH100Llama8B)
	cfg.PrefillOverhead = prefill
	cfg.PrefillTokensPerSec = 1e15
	cfg.DecodeBase = step
	cfg.DecodePerRequest = 0
	cfg.EOSProbability = 0
	return cfg
}

func httpPost(url string) (int, error) {
	resp, err := http.Post(url, "application/json", nil)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
