package cli

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"benchserve/sim"
)

// traceSession is a session as the test writes it in either format.
type traceSession struct {
	at    float64 // arrival, ms
	turns []traceTurn
}

type traceTurn struct {
	delay float64 // ms before the turn (the first: none)
	out   int
}

var replayed = []traceSession{
	{at: 1000, turns: []traceTurn{{0, 6}, {150, 4}, {60, 9}}},
	{at: 1400, turns: []traceTurn{{0, 3}, {250, 5}}},
	{at: 1900, turns: []traceTurn{{0, 7}}},
	{at: 1900, turns: []traceTurn{{0, 2}, {0, 2}, {90, 8}}},
}

// mooncakeFile writes the sessions as AIPerf's Mooncake session JSONL,
// the sessions' lines interleaved as a trace of many users would have them.
func mooncakeFile(t *testing.T, dir string) string {
	var lines []string
	for k := 0; k < 3; k++ {
		for s, ss := range replayed {
			if k >= len(ss.turns) {
				continue
			}
			tt := ss.turns[k]
			l := fmt.Sprintf(`{"session_id": "u%d", "input_length": %d, "hash_ids": [%d, %d], "output_length": %d`, s, 40+8*k, k, 100*s+k, tt.out)
			if k == 0 {
				l += fmt.Sprintf(`, "timestamp": %g`, ss.at)
			} else {
				l += fmt.Sprintf(`, "delay": %g`, tt.delay)
			}
			lines = append(lines, l+"}")
		}
	}
	return writeFile(t, dir, "sessions.jsonl", lines)
}

// traceLabFile writes them as TraceLab's canonical CSV: a round's
// tool_wait_after_ms is the next round's delay.
func traceLabFile(t *testing.T, dir string) string {
	lines := []string{"id,input_len,output_len,arrival_time,round_idx,tool_wait_after_ms,prefix_len"}
	for s, ss := range replayed {
		for k, tt := range ss.turns {
			wait := 0.0
			if k+1 < len(ss.turns) {
				wait = ss.turns[k+1].delay
			}
			prefix := 0
			if k == 0 {
				prefix = 64
			}
			lines = append(lines, fmt.Sprintf("s%d,%d,%d,%g,%d,%g,%d", s, 24, tt.out, ss.at, k, wait, prefix))
		}
	}
	return writeFile(t, dir, "trace.csv", lines)
}

func writeFile(t *testing.T, dir, name string, lines []string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A Mooncake session file and a TraceLab file, written from their
// documented formats, replay against the simulator with the trace's
// arrivals and delays: each session's first turn is planned at its
// arrival (relative to the first) and sent no earlier; each later turn is
// planned its recorded delay after the reply before it and sent no
// earlier, as the simulator saw too (its arrival no earlier than the
// delay after it wrote the reply before); every turn asked for its own
// output length and the simulator generated it. Lags are logged, bounded
// only by a second.
func TestSessionTracesReplay(t *testing.T) {
	cfg, _ := sim.Preset(sim.PresetInstant)
	cfg.EOSProbability = 0
	_, base := newSim(t, cfg)
	dir := t.TempDir()
	for _, c := range []struct{ name, path string }{
		{"mooncake-sessions", mooncakeFile(t, dir)},
		{"tracelab", traceLabFile(t, dir)},
	} {
		t.Run(c.name, func(t *testing.T) {
			getJSON[map[string]any](t, base+"/sim/truth") // wait for earlier responses
			if resp, err := httpPost(base + "/sim/truth/reset"); err != nil || resp != 200 {
				t.Fatalf("truth reset: %v %d", err, resp)
			}
			recFile := filepath.Join(t.TempDir(), "rec.jsonl")
			code, stdout, stderr := run(t, nil, "--base-url", base, "--model", cfg.Model, "--warmup-requests", "0",
				"--backend", "sglang-oai-chat", "--tokenizer", "o200k_base", "--dataset-name", c.name, "--dataset-path", c.path,
				"--output-file", filepath.Join(t.TempDir(), "r.jsonl"), "--record-file", recFile)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if strings.Contains(stderr, "note:") {
				t.Errorf("notes on a session trace's run:\n%s", stderr)
			}
			truth := getJSON[struct {
				Requests []struct {
					ID               string  `json:"id"`
					Arrival          float64 `json:"arrival"`
					End              float64 `json:"end"`
					CompletionTokens int     `json:"completion_tokens"`
				} `json:"requests"`
			}](t, base+"/sim/truth")
			server := map[string]int{}
			for i, r := range truth.Requests {
				server[r.ID] = i
			}

			bySession, _ := sessionRecords(t, recFile)
			// Plan positions follow the arrivals, which are in file order.
			if len(bySession) != len(replayed) {
				t.Fatalf("%d sessions, want %d", len(bySession), len(replayed))
			}
			var arrivalLag, turnLag []float64
			first := replayed[0].at
			for s, ss := range replayed {
				rs := bySession[s]
				if len(rs) != len(ss.turns) {
					t.Fatalf("session %d: %d turns, want %d", s, len(rs), len(ss.turns))
				}
				if want := (ss.at - first) / 1000; math.Abs(rs[0].Intended-want) > 1e-9 || rs[0].Start < rs[0].Intended || rs[0].Start-rs[0].Intended > 1 {
					t.Errorf("session %d: planned at %.6f s, sent at %.6f, want planned at its arrival %.6f", s, rs[0].Intended, rs[0].Start, want)
				}
				arrivalLag = append(arrivalLag, rs[0].Start-rs[0].Intended)
				for k, r := range rs {
					tr, ok := server[r.ID]
					if !ok {
						t.Fatalf("session %d turn %d: id %q not in the simulator's truth", s, k, r.ID)
					}
					if want := ss.turns[k].out; r.OutputLen != want || truth.Requests[tr].CompletionTokens != want {
						t.Errorf("session %d turn %d: asked for %d tokens, generated %d, want %d", s, k, r.OutputLen, truth.Requests[tr].CompletionTokens, want)
					}
					if k == 0 {
						continue
					}
					delay, prev := ss.turns[k].delay/1000, rs[k-1]
					ended := prev.Start + prev.Latency
					if math.Abs(r.PlannedDelay-delay) > 1e-9 || r.Intended < ended+delay || r.Start < r.Intended || r.Start-r.Intended > 1 {
						t.Errorf("session %d turn %d: planned delay %.6f (want %.6f), due %.6f, sent %.6f, the reply before came %.6f", s, k, r.PlannedDelay, delay, r.Intended, r.Start, ended)
					}
					// The server's clock: it got the turn no earlier than the
					// delay after it wrote the reply before.
					if got, wrote := truth.Requests[tr].Arrival, truth.Requests[server[prev.ID]].End; got < wrote+delay {
						t.Errorf("session %d turn %d: reached the server %.6f s after it ended the reply before, less than the delay %.3f s", s, k, got-wrote, delay)
					}
					turnLag = append(turnLag, r.Start-r.Intended)
				}
			}
			// Measured, not bounded: a loaded machine wakes late by any amount.
			t.Logf("send lag medians: session arrivals %.3f ms, later turns %.3f ms", median(arrivalLag)*1000, median(turnLag)*1000)
		})
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return math.NaN()
	}
	return s[len(s)/2]
}

// A bad line of a session trace is one error naming the file, the line
// and the field, before any network call (the URL answers nothing).
func TestSessionTraceBadLine(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, file, line, want string }{
		{"mooncake-sessions", "s.jsonl", `{"session_id": "a", "input_length": 4, "delay": -1}`, ": line 2: field delay: want a number of milliseconds >= 0, got -1"},
		{"tracelab", "t.csv", "s,1,1,0,0,0,-1", ": line 2: field prefix_tokens: must be a nonnegative integer, got -1"},
	} {
		first := `{"session_id": "a", "input_length": 4}`
		if c.name == "tracelab" {
			first = "id,input_len,output_len,arrival_time,round_idx,tool_wait_after_ms,prefix_len"
		}
		path := writeFile(t, dir, c.file, []string{first, c.line})
		code, stdout, stderr := run(t, nil, "--base-url", "http://127.0.0.1:9", "--backend", "sglang-oai-chat",
			"--tokenizer", "o200k_base", "--dataset-name", c.name, "--dataset-path", path)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code == 0 || len(lines) != 1 || !strings.HasSuffix(lines[0], "--dataset-path "+path+c.want) || strings.Contains(stdout, "Waiting up to") {
			t.Errorf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", c.name, code, stdout, stderr)
		}
	}
}
