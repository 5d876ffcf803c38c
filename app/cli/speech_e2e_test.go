package cli

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchserve/internal/testenv"
	"benchserve/sim"
)

// openai-speech against the simulator, streamed (SSE of base64 pcm) and
// not (a WAV body): each request's audio is what the simulator made of
// its input (0.4 s a word at 24 kHz, 16-bit), matched by id to the
// truth; the result line carries the audio totals. Under the slow tier,
// the latencies and real-time factors are checked against the truth's.
func TestSpeechAgainstSimTruth(t *testing.T) {
	cfg, err := sim.Preset(sim.PresetInstant)
	if err != nil {
		t.Fatal(err)
	}
	cfg.SpeechRTF = 40
	_, base := newSim(t, cfg)
	for _, mode := range []string{"stream", "whole"} {
		t.Run(mode, func(t *testing.T) {
			getJSON[map[string]any](t, base+"/sim/truth") // wait for earlier responses
			if code, err := httpPost(base + "/sim/truth/reset"); err != nil || code != 200 {
				t.Fatalf("truth reset: %v %d", err, code)
			}
			dir := t.TempDir()
			out, recs := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "recs.jsonl")
			args := []string{"--backend", "openai-speech", "--base-url", base, "--dataset-name", "random-ids",
				"--random-input-len", "24", "--random-output-len", "4", "--num-prompts", "6", "--max-concurrency", "3",
				"--warmup-requests", "0", "--output-file", out, "--record-file", recs}
			if mode == "whole" {
				args = append(args, "--disable-stream")
			}
			code, stdout, stderr := run(t, nil, args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			if !strings.Contains(stdout, "Mean real-time factor:") {
				t.Errorf("no audio block in the console:\n%s", stdout)
			}
			truth := getJSON[struct {
				Requests []struct {
					ID           string       `json:"id"`
					Arrival      float64      `json:"arrival"`
					End          float64      `json:"end"`
					PromptTokens int          `json:"prompt_tokens"`
					Chunks       [][3]float64 `json:"chunks"`
				} `json:"requests"`
			}](t, base+"/sim/truth")
			byID := audioRecords(t, recs)
			if len(truth.Requests) != 6 || len(byID) != 6 {
				t.Fatalf("%d truth records, %d client records", len(truth.Requests), len(byID))
			}
			header := 0
			if mode == "whole" {
				header = 44
			}
			var wantBytes int
			var wantSecs, errMax, rtfClient, rtfTrue float64
			for _, tr := range truth.Requests {
				r, ok := byID[tr.ID]
				if !ok || !r.Success {
					t.Fatalf("request %s: %+v", tr.ID, r)
				}
				secs := 0.4 * float64(tr.PromptTokens)
				if r.AudioBytes != 19200*tr.PromptTokens+header || math.Abs(r.AudioSeconds-secs) > 1e-9 {
					t.Errorf("request %s: %d bytes, %v s; the simulator made %d words of audio", tr.ID, r.AudioBytes, r.AudioSeconds, tr.PromptTokens)
				}
				if want := 4 * tr.PromptTokens; len(tr.Chunks) != want { // 100 ms each
					t.Errorf("request %s: the simulator wrote %d chunks, want %d", tr.ID, len(tr.Chunks), want)
				}
				wantBytes += r.AudioBytes
				wantSecs += secs
				errMax = max(errMax, math.Abs(r.Latency-(tr.End-tr.Arrival)))
				rtfClient += secs / r.Latency / 6
				rtfTrue += secs / (tr.End - tr.Arrival) / 6
			}
			res := checkAudioResult(t, out, wantBytes, wantSecs, rtfClient)
			t.Logf("%s: max E2E error %.3f ms; mean RTF %.3f (truth %.3f, configured %v)", mode, errMax*1000, res.RTF, rtfTrue, cfg.SpeechRTF)
			if testenv.SlowOn(t) {
				// Real time on a shared machine: loose, as TestEndToEndAgainstSimTruth.
				if errMax > 0.100 || math.Abs(res.RTF/rtfTrue-1) > 0.10 {
					t.Errorf("E2E error %.4f s, RTF %.3f vs the truth's %.3f", errMax, res.RTF, rtfTrue)
				}
			}
		})
	}
}

// audioRec is what the audio tests read of a record line.
type audioRec struct {
	ID           string  `json:"id"`
	Success      bool    `json:"success"`
	Latency      float64 `json:"latency"`
	OutputLen    int     `json:"output_len"`
	AudioBytes   int     `json:"audio_bytes"`
	AudioSeconds float64 `json:"audio_seconds"`
}

// audioRecords reads a record file's lines by request id.
func audioRecords(t *testing.T, path string) map[string]audioRec {
	t.Helper()
	byID := map[string]audioRec{}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r audioRec
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.ID != "" {
			byID[r.ID] = r
		}
	}
	return byID
}

// audioResult is the result line's audio keys.
type audioResult struct {
	Bytes int     `json:"total_audio_bytes"`
	Secs  float64 `json:"total_audio_s"`
	RTF   float64 `json:"mean_rtf"`
}

// checkAudioResult reads the result line's audio keys and checks them
// against the records' sums and mean real-time factor.
func checkAudioResult(t *testing.T, out string, bytes int, secs, rtf float64) audioResult {
	t.Helper()
	data, _ := os.ReadFile(out)
	var res audioResult
	line := strings.ReplaceAll(strings.TrimSpace(string(data)), "Infinity", "null")
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		t.Fatal(err)
	}
	if res.Bytes != bytes || math.Abs(res.Secs-secs) > 1e-6 || math.Abs(res.RTF-rtf) > 1e-6 {
		t.Errorf("result %+v, want %d bytes, %v s, mean RTF %v", res, bytes, secs, rtf)
	}
	return res
}
