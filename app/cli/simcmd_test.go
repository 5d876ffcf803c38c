package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"benchserve/bench"
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

// --sim sets the demo's flags only when it is the whole command line
// (--sim-preset aside), as --help says; otherwise the main command's
// defaults stand, with a note when they need a download.
func TestSimDemoOnlyAlone(t *testing.T) {
	for _, c := range []struct {
		args    []string
		dataset string
		prompts int
		in, out int
		note    string // a substring of the one note; "" for none
	}{
		{[]string{"--sim"}, "random-ids", 200, 256, 128, "--sim alone runs a short demo: --dataset-name random-ids --num-prompts 200 --random-input-len 256 --random-output-len 128"},
		{[]string{"--sim", "--sim-preset", "instant"}, "random-ids", 200, 256, 128, "short demo"},
		{[]string{"--sim", "--num-prompts", "80"}, "sharegpt", 80, 1024, 1024, "--sim with --dataset-name sharegpt (the default) downloads ShareGPT unless it is cached"},
		{[]string{"--sim", "--dataset-path", "s.json", "--num-prompts", "80"}, "sharegpt", 80, 1024, 1024, ""},
		{[]string{"--sim", "--dataset-name", "random", "--random-input-len", "64"}, "random", 1000, 64, 1024, "give --dataset-path with a local copy or use --dataset-name random-ids"},
		{[]string{"--sim", "--dataset-name", "random-ids"}, "random-ids", 1000, 1024, 1024, ""},
		{[]string{"--sim", "--output-file", "x.jsonl"}, "sharegpt", 1000, 1024, 1024, "(the default)"},
	} {
		cfg, given, err := parse(c.args, 80)
		if err != nil {
			t.Fatal(err)
		}
		notes, err := simDefaults(cfg, given)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if cfg.DatasetName != c.dataset || cfg.NumPrompts != c.prompts || cfg.RandomInputLen != c.in || cfg.RandomOutputLen != c.out {
			t.Errorf("%q: got %s %d %d/%d, want %s %d %d/%d", c.args, cfg.DatasetName, cfg.NumPrompts,
				cfg.RandomInputLen, cfg.RandomOutputLen, c.dataset, c.prompts, c.in, c.out)
		}
		switch {
		case c.note == "" && len(notes) > 0:
			t.Errorf("%q: notes %q, want none", c.args, notes)
		case c.note != "" && (len(notes) != 1 || !strings.Contains(notes[0], c.note)):
			t.Errorf("%q: notes %q, want one with %q", c.args, notes, c.note)
		}
	}
	// In a sweep, the sweep's own flags count: with one, no demo.
	sc, given, err := parseSweep([]string{"--sim", "--sweep-profile", "auto"}, 80)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := simDefaults(sc.Base, given); err != nil || sc.Base.DatasetName != "sharegpt" {
		t.Errorf("sweep --sim --sweep-profile auto: %v, dataset %s", err, sc.Base.DatasetName)
	}
	sc, given, _ = parseSweep([]string{"--sim"}, 80)
	if simDefaults(sc.Base, given); sc.Base.DatasetName != "random-ids" {
		t.Errorf("sweep --sim alone: dataset %s", sc.Base.DatasetName)
	}
}

// The repro of issue 26: flags given beside --sim are honoured (no
// refusal naming random-ids), and a --sim run says where its result
// line went when --output-file did not name the file.
func TestSimHonoursFlagsAndNamesResultFile(t *testing.T) {
	t.Chdir(t.TempDir())
	var rows []string
	for i := range 30 {
		rows = append(rows, fmt.Sprintf(`{"conversations":[{"from":"human","value":"question %d about the servers and their tokens"},{"from":"gpt","value":"an answer of a few words for %d"}]}`, i, i))
	}
	if err := os.WriteFile("sharegpt.json", []byte("["+strings.Join(rows, ",")+"]"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, _ := parse([]string{"--num-prompts", "20"}, 80)
	name := bench.OutputFile(cfg, time.Now())
	code, stdout, stderr := run(t, nil, "--sim", "--dataset-path", "sharegpt.json", "--num-prompts", "20")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(name); err != nil { // the run crossed midnight
		name = bench.OutputFile(cfg, time.Now())
	}
	if !strings.Contains(stdout, "The result line was appended to "+name+" (--output-file names another file).\n") {
		t.Errorf("no line naming %s:\n%s", name, stdout)
	}
	if line := readLine(t, name); line["completed"] != json.Number("20") {
		t.Errorf("completed %v, want 20", line["completed"])
	}
	if strings.Contains(stderr, "note:") {
		t.Errorf("notes: %s", stderr)
	}
	// Named by --output-file: the user knows where it is.
	code, stdout, _ = run(t, nil, "--sim", "--dataset-path", "sharegpt.json", "--num-prompts", "4", "--output-file", "x.jsonl")
	if code != 0 || strings.Contains(stdout, "result line was appended") {
		t.Errorf("exit %d, stdout:\n%s", code, stdout)
	}
}
