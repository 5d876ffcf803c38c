package cli

import (
	"errors"
	"strings"
	"testing"
)

// checkParse fails unless err is nil, a help request, or a one-line
// *UsageError (the arguments themselves may hold a line break).
func checkParse(t *testing.T, joined string, err error) {
	var ue *UsageError
	var help *HelpRequested
	switch {
	case err == nil, errors.As(err, &help):
	case errors.As(err, &ue):
		if ue.Msg == "" || strings.Contains(ue.Msg, "\n") && !strings.Contains(joined, "\n") {
			t.Fatalf("usage error %q", ue.Msg)
		}
	default:
		t.Fatalf("error of type %T: %v", err, err)
	}
}

// FuzzParseFlags feeds arbitrary command lines (arguments separated by
// NUL) to benchserve's flag parser: a Config whose Namespace prints, help,
// or a one-line usage error; never a panic.
func FuzzParseFlags(f *testing.F) {
	for _, args := range [][]string{
		{"--backend", "vllm-chat", "--base-url", "http://h:1", "--num-prompts=10", "--request-rate", "inf", "--max-concurrency", "4"},
		{"--dataset-name", "random", "--random-input", "8", "--random-output-len", "2", "--random-range-ratio", "0.5", "--seed", "-3"},
		{"--lora-name", "a", "b", "--lora-request-distribution", "distinct", "--extra-request-body", `{"top_k": 5}`, "--header", "A=b"},
		{"--gsp-group-distribution", "zipf", "--gsp-zipf-alpha", "1.1", "--request-timeout", "0.5", "--connect-timeout", "2"},
		{"--profile", "--profile-activities", "CPU", "GPU", "--tag", "x", "--output-details", "--disable-stream", "-h"},
		{"--num-prompts", "ten"}, {"--backend"}, {"--no-such-flag"}, {"--random", "3"}, {"--", "x"},
	} {
		f.Add(strings.Join(args, "\x00"))
	}
	f.Fuzz(func(t *testing.T, joined string) {
		cfg, _, err := parse(strings.Split(joined, "\x00"), 80)
		checkParse(t, joined, err)
		if err == nil {
			Namespace(cfg)
		}
	})
}

// FuzzParseSimFlags does the same for "benchserve sim", whose --fault
// values have a grammar of their own.
func FuzzParseSimFlags(f *testing.F) {
	for _, args := range [][]string{
		{"--preset", "instant", "--port", "0", "--fault", "429=0.1", "stall:2=0.05", "huge-line:1=0.01"},
		{"--fault", "disconnect;3=1"}, {"--fault", "none=0.1"}, {"--fault", "stall:x=0.1"}, {"--fault", "429=0.6", "500=0.6"},
		{"--decode-base-ms", "1.5", "--speculative-accept-length", "2.5", "--eos-probability", "0.01"},
	} {
		f.Add(strings.Join(args, "\x00"))
	}
	f.Fuzz(func(t *testing.T, joined string) {
		_, err := parseSim(strings.Split(joined, "\x00"), 80)
		checkParse(t, joined, err)
	})
}
