package cli

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"benchserve/sim"
)

func TestParseSimDefaultsAreThePreset(t *testing.T) {
	got, err := parseSim(nil, 80)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := sim.Preset(sim.PresetH100Llama8B)
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", *got, want)
	}
}

func TestParseSimFlagsOverrideThePreset(t *testing.T) {
	got, err := parseSim([]string{
		"--preset", "instant", "--host", "0.0.0.0", "--port", "0", "--model", "m", "--tokenizer", "cl100k_base",
		"--api-key", "k", "--seed=7", "--truth-capacity", "10",
		"--max-running-requests", "8", "--max-total-tokens", "5000", "--max-prefill-tokens", "100",
		"--page-size", "1", "--context-length", "4096", "--prefill-tokens-per-sec", "2000",
		"--prefill-overhead-ms", "1.5", "--decode-base-ms", "6", "--decode-per-request-ms", "0.04",
		"--speculative-accept", "2.5", "--eos-probability", "0.01", "--reasoning-tokens", "3", "--embedding-dim", "8",
	}, 80)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := sim.Preset(sim.PresetInstant)
	want.Host, want.Port, want.Model, want.Tokenizer, want.APIKey, want.Seed, want.TruthCapacity =
		"0.0.0.0", 0, "m", "cl100k_base", "k", 7, 10
	want.MaxRunningRequests, want.KVTokens, want.MaxPrefillTokens, want.PageSize, want.ContextLength = 8, 5000, 100, 1, 4096
	want.PrefillTokensPerSec, want.PrefillOverhead = 2000, 1500*time.Microsecond
	want.DecodeBase, want.DecodePerRequest = 6*time.Millisecond, 40*time.Microsecond
	want.SpeculativeAcceptLength, want.EOSProbability, want.ReasoningTokens, want.EmbeddingDim = 2.5, 0.01, 3, 8
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("overrides:\n got %+v\nwant %+v", *got, want)
	}
}

func TestParseSimKeepsUnsetPresetValues(t *testing.T) {
	got, err := parseSim([]string{"--preset", "instant", "--decode-base-ms", "2"}, 80)
	if err != nil {
		t.Fatal(err)
	}
	if got.DecodeBase != 2*time.Millisecond || !math.IsInf(got.PrefillTokensPerSec, 1) || got.MaxRunningRequests != 1<<20 {
		t.Errorf("got %+v", *got)
	}
}

func TestParseSimErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--preset", "a100"}, "argument --preset: invalid choice: 'a100' (choose from 'h100-llama3-8b', 'instant')"},
		{[]string{"--max-running-requests", "0"}, "--max-running-requests: must be >= 1, got 0"},
		{[]string{"--decode-base-ms", "-1"}, "argument --decode-base-ms: expected a finite number of milliseconds >= 0, got '-1'"},
		{[]string{"--prefill-overhead-ms", "nan"}, "argument --prefill-overhead-ms: expected a finite number of milliseconds >= 0, got 'nan'"},
		{[]string{"--prefill-tokens-per-sec", "0"}, "--prefill-tokens-per-sec: must be > 0 (or inf), got 0"},
		{[]string{"--speculative-accept-length", "0.5"}, "--speculative-accept-length: must be 0 (off) or between 1 and 16, got 0.5"},
		{[]string{"--eos-probability", "1"}, "--eos-probability: must be in [0, 1), got 1"},
		{[]string{"--port", "70000"}, "--port: must be 0..65535, got 70000"},
		{[]string{"--port", "x"}, "argument --port: invalid int value: 'x'"},
		{[]string{"--model", ""}, "--model: must not be empty"},
		{[]string{"--backend", "sglang"}, "unrecognized arguments: --backend sglang"},
	} {
		_, err := parseSim(c.args, 80)
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: error %v, want a UsageError", c.args, err)
			continue
		}
		if ue.Msg != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.args, ue.Msg, c.want)
		}
	}
}

func TestParseSimHelp(t *testing.T) {
	_, err := parseSim([]string{"-h"}, 400)
	var h *HelpRequested
	if !errors.As(err, &h) {
		t.Fatalf("-h gave %v", err)
	}
	for _, s := range []string{"usage: benchserve sim", "--max-running-requests", "256 (h100-llama3-8b)", "inf (instant)", "--api-key"} {
		if !strings.Contains(h.Text, s) {
			t.Errorf("help lacks %q:\n%s", s, h.Text)
		}
	}
}
