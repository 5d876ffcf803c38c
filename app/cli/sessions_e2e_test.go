package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"benchserve/sim"
)

// Synthetic sessions against the simulator and its prefix cache: Poisson
// session arrivals, 4 to 8 turns each, exponential think time. Every
// planned session starts and completes, each turn leaves no earlier than
// the reply before it ended plus its planned delay, and the cached share
// of the prompt rises with the turn index (the history the cache holds
// grows, the new content does not). How late turns and sessions left is
// logged, not bounded: a loaded machine wakes late by any amount.
func TestSyntheticSessions(t *testing.T) {
	cfg, _ := sim.Preset(sim.PresetInstant)
	_, url := newSim(t, cfg)
	dir := t.TempDir()
	out, recFile := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "rec.jsonl")
	const sessions = 12
	code, stdout, stderr := run(t, nil, "--base-url", url, "--model", "benchserve-sim", "--warmup-requests", "0",
		"--backend", "sglang-oai-chat", "--tokenizer", "o200k_base", "--dataset-name", "random-ids",
		"--num-prompts", strconv.Itoa(sessions), "--random-input-len", "64", "--random-output-len", "8", "--random-range-ratio", "1",
		"--session-turns", "4-8", "--per-turn-input-len", "32", "--request-rate", "40", "--arrival", "poisson",
		"--think-time", "exp:10", "--cache-report", "--output-file", out, "--record-file", recFile)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, s := range []string{"#Sessions: 12 (turns/session min=", "Per session", "Sessions started:                        12", "Per turn"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("no %q in the output:\n%s", s, stdout)
		}
	}

	// The record file: every turn of every session, each causal.
	bySession, n := sessionRecords(t, recFile)
	if len(bySession) != sessions {
		t.Fatalf("%d sessions in the record file, want the %d planned", len(bySession), sessions)
	}
	counts := map[int]bool{}
	total := 0
	for s, rs := range bySession {
		plan := rs[0].SessionTurns
		counts[plan] = true
		total += plan
		if plan < 4 || plan > 8 || len(rs) != plan {
			t.Errorf("session %d: %d records, planned %d turns (want 4 to 8)", s, len(rs), plan)
		}
		for k := 1; k < len(rs); k++ {
			r, prev := rs[k], rs[k-1]
			if r.Turn != k || r.PlannedDelay <= 0 {
				t.Errorf("session %d: round %d is turn %d with delay %v", s, k, r.Turn, r.PlannedDelay)
			}
			// The reply before ended no earlier than its last byte came.
			if ended := prev.Start + prev.Latency; r.Intended < ended+r.PlannedDelay || r.Start < r.Intended {
				t.Errorf("session %d turn %d: sent %.6f, due %.6f, previous reply came %.6f + delay %.6f", s, k, r.Start, r.Intended, ended, r.PlannedDelay)
			}
		}
	}
	if n != total || len(counts) < 2 {
		t.Errorf("%d records for %d planned turns; turn counts drawn %v", n, total, counts)
	}

	// The result line's per_session and per_turn keys.
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var line struct {
		PerSession *struct {
			Started, Completed, Truncated int
			ByTurns                       []int   `json:"sessions_by_turns_completed"`
			MeanTurns                     float64 `json:"mean_turns_completed"`
			LagP50                        float64 `json:"median_turn_lag_ms"`
			LagP99                        float64 `json:"p99_turn_lag_ms"`
			ArrivalP99                    float64 `json:"p99_arrival_lag_ms"`
		} `json:"per_session"`
		PerTurn *struct {
			Turns []struct {
				Turn, Completed  int
				MeanInputTokens  float64 `json:"mean_input_tokens"`
				MeanCachedTokens float64 `json:"mean_cached_tokens"`
			}
		} `json:"per_turn"`
	}
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(data), "Infinity", "null")), &line); err != nil {
		t.Fatal(err)
	}
	ps, pt := line.PerSession, line.PerTurn
	if ps == nil || pt == nil {
		t.Fatalf("no per_session or per_turn: %s", data)
	}
	if ps.Started != sessions || ps.Completed != sessions || ps.Truncated != 0 || ps.MeanTurns != float64(total)/sessions {
		t.Errorf("per_session: %+v, want %d sessions all completed, %d turns", *ps, sessions, total)
	}
	sum := 0
	for k, c := range ps.ByTurns {
		if c > 0 && (k < 4 || k > 8) {
			t.Errorf("%d sessions completed %d turns", c, k)
		}
		sum += c
	}
	if sum != sessions {
		t.Errorf("sessions_by_turns_completed %v counts %d sessions", ps.ByTurns, sum)
	}

	// Turns 0 to 3 are in every session. The first turn's cached tokens
	// are at most the chat template's pages shared between sessions;
	// turn 1 finds turn 0's prompt and reply cached, and each later turn
	// a longer history against the same new content.
	if len(pt.Turns) < 4 {
		t.Fatalf("per_turn: %d turns", len(pt.Turns))
	}
	share := make([]float64, 4)
	for k := range share {
		tf := pt.Turns[k]
		if tf.Turn != k || tf.Completed != sessions || tf.MeanInputTokens <= 0 {
			t.Fatalf("per_turn turn %d: %+v", k, tf)
		}
		share[k] = tf.MeanCachedTokens / tf.MeanInputTokens
		t.Logf("turn %d: mean input %.1f, cached %.1f (%.3f)", k, tf.MeanInputTokens, tf.MeanCachedTokens, share[k])
	}
	if share[1] <= share[0] || share[3] < share[1] {
		t.Errorf("cached share by turn %.3f: not rising from turn 0 to 1 and on to 3", share)
	}
	t.Logf("turn lag p50 %.3f ms, p99 %.3f ms; session arrival lag p99 %.3f ms", ps.LagP50, ps.LagP99, ps.ArrivalP99)
}

// A bad session flag is one usage line naming it, before any network call
// (the URL answers nothing).
func TestSessionFlagsBad(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--session-turns", "0"}, "--session-turns"},
		{[]string{"--session-turns", "8-4"}, "--session-turns"},
		{[]string{"--session-turns", "four"}, "--session-turns"},
		{[]string{"--session-turns", "2", "--per-turn-input-len", "-1"}, "--per-turn-input-len"},
		{[]string{"--session-turns", "2", "--backend", "vllm"}, "--session-turns"},
	} {
		args := append([]string{"--base-url", "http://127.0.0.1:9", "--backend", "sglang-oai-chat", "--tokenizer", "o200k_base",
			"--dataset-name", "random-ids"}, c.args...)
		code, stdout, stderr := run(t, nil, args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], c.flag) || stdout != "" {
			t.Errorf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", c.args, code, stdout, stderr)
		}
	}
}
