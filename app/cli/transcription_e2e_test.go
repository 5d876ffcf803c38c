package cli

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"benchserve/internal/testenv"
	"benchserve/sim"
)

// openai-transcription against the simulator, streamed (a word an event)
// and not: each request's audio is the clip the dataset made, its
// transcript the simulator's (2.5 words an audio second, counted by the
// server's usage), matched by id to the truth; the result line carries
// the audio totals and the real-time factors. Under the slow tier, the
// latencies and the run's real-time factor are checked against the
// truth's and the configured one.
func TestTranscriptionAgainstSimTruth(t *testing.T) {
	cfg, err := sim.Preset(sim.PresetInstant)
	if err != nil {
		t.Fatal(err)
	}
	cfg.TranscriptionRTF = 40
	_, base := newSim(t, cfg)
	for _, mode := range []string{"stream", "whole"} {
		t.Run(mode, func(t *testing.T) {
			getJSON[map[string]any](t, base+"/sim/truth") // wait for earlier responses
			if code, err := httpPost(base + "/sim/truth/reset"); err != nil || code != 200 {
				t.Fatalf("truth reset: %v %d", err, code)
			}
			dir := t.TempDir()
			out, recs := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "recs.jsonl")
			args := []string{"--backend", "openai-transcription", "--base-url", base, "--dataset-name", "audio",
				"--audio-duration-s", "1-3", "--audio-sample-rate", "8000", "--num-prompts", "6", "--max-concurrency", "3",
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
					ID               string       `json:"id"`
					Arrival          float64      `json:"arrival"`
					End              float64      `json:"end"`
					CompletionTokens int          `json:"completion_tokens"`
					Chunks           [][3]float64 `json:"chunks"`
				} `json:"requests"`
			}](t, base+"/sim/truth")
			byID := audioRecords(t, recs)
			if len(truth.Requests) != 6 || len(byID) != 6 {
				t.Fatalf("%d truth records, %d client records", len(truth.Requests), len(byID))
			}
			var wantBytes int
			var wantSecs, errMax, rtfClient float64
			for _, tr := range truth.Requests {
				r, ok := byID[tr.ID]
				if !ok || !r.Success {
					t.Fatalf("request %s: %+v", tr.ID, r)
				}
				words := max(1, int(math.Round(r.AudioSeconds*2.5)))
				if r.AudioSeconds < 1 || r.AudioSeconds > 3 || r.AudioBytes != 44+int(math.Round(r.AudioSeconds*16000)) {
					t.Errorf("request %s: %d bytes, %v s of audio", tr.ID, r.AudioBytes, r.AudioSeconds)
				}
				if r.OutputLen != words || tr.CompletionTokens != words {
					t.Errorf("request %s: %d output tokens (simulator %d), want %d words", tr.ID, r.OutputLen, tr.CompletionTokens, words)
				}
				if mode == "stream" && len(tr.Chunks) != words {
					t.Errorf("request %s: the simulator wrote %d chunks, want %d", tr.ID, len(tr.Chunks), words)
				}
				wantBytes += r.AudioBytes
				wantSecs += r.AudioSeconds
				errMax = max(errMax, math.Abs(r.Latency-(tr.End-tr.Arrival)))
				rtfClient += r.AudioSeconds / r.Latency / 6
			}
			res := checkAudioResult(t, out, wantBytes, wantSecs, rtfClient)
			t.Logf("%s: max E2E error %.3f ms; mean RTF %.3f (configured %v)", mode, errMax*1000, res.RTF, cfg.TranscriptionRTF)
			if testenv.SlowOn(t) {
				// Real time on a shared machine: loose, as TestSpeechAgainstSimTruth.
				if errMax > 0.100 || math.Abs(res.RTF/cfg.TranscriptionRTF-1) > 0.10 {
					t.Errorf("E2E error %.4f s, RTF %.3f vs the configured %v", errMax, res.RTF, cfg.TranscriptionRTF)
				}
			}
		})
	}
}

// A transcription plan replays: its bodies carry the audio files, its
// lines their sizes and durations, so the replay sends the same forms and
// reports the same audio totals without the audio dataset.
func TestTranscriptionPlanReplays(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "p.jsonl")
	common := []string{"--sim", "--sim-preset", "instant", "--backend", "openai-transcription", "--warmup-requests", "0"}
	result := func(args ...string) map[string]any {
		t.Helper()
		out := filepath.Join(t.TempDir(), "r.jsonl")
		code, stdout, stderr := run(t, nil, append(append(common, "--output-file", out), args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
		return readLine(t, out)
	}
	saved := result("--dataset-name", "audio", "--audio-duration-s", "0.5-1.5", "--num-prompts", "4", "--save-plan", plan)
	replayed := result("--replay-plan", plan)
	for _, k := range []string{"completed", "total_audio_bytes", "total_audio_s", "total_output_tokens"} {
		if num(t, saved, k) != num(t, replayed, k) {
			t.Errorf("%s: saved run %v, replay %v", k, saved[k], replayed[k])
		}
	}
	if num(t, saved, "completed") != 4 {
		t.Errorf("completed %v", saved["completed"])
	}
}
