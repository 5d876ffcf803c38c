package onebatch

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"

	"benchserve/internal/exit"
)

func defaults() *Config {
	return &Config{Host: "127.0.0.1", Port: 30000, Backend: "sglang", TPSize: 1, HourlyCostPerGPU: 2,
		BatchSizes: []int{1}, InputLens: []int{1024}, OutputLens: []int{16}, StreamInterval: 1,
		LoraDistribution: "uniform", LoraZipfAlpha: 1.1, DatasetName: "random", GSPNumGroups: 1, ProfileSteps: 5}
}

// The defaults pass; vLLM gets a note for each flag its request does not
// carry; a bad combination is a usage error.
func TestValidate(t *testing.T) {
	if notes, err := Validate(defaults()); err != nil || len(notes) != 0 {
		t.Fatalf("defaults: %v %v", notes, err)
	}
	c := defaults()
	c.Backend, c.FakePrefill, c.ParallelBatch, c.LoraNames = "vllm", true, true, []string{"a"}
	notes, err := Validate(c)
	if err != nil || len(notes) != 3 || !strings.HasPrefix(notes[0], "--fake-prefill has no effect with --backend vllm") {
		t.Errorf("vllm notes %q, %v", notes, err)
	}
	c = defaults()
	c.OutputLens = []int{16, -1}
	_, err = Validate(c)
	var ee *exit.Error
	if !errors.As(err, &ee) || ee.Code != exit.Usage || !strings.Contains(ee.Msg, "--output-len") {
		t.Errorf("negative output length: %v", err)
	}
}

// The skip guards print the reference's lines; under multi-batch the
// token guard counts at most the running cap.
func TestSkip(t *testing.T) {
	var out bytes.Buffer
	r := &runner{cfg: defaults(), env: Env{Stdout: &out}}
	th := thresholds{maxRunning: 8, tokens: 10000}
	if r.skip(th, 8, 1000, 16) || !r.skip(th, 9, 10, 10) || !r.skip(th, 4, 3000, 16) {
		t.Fatalf("skips wrong:\n%s", out.String())
	}
	want := "========Skip benchmark batch_size=9 > skip_max_running_requests_threshold=8 due to max running requests limit.========\n" +
		"========Skip benchmark batch_size=4 * (input_len=3000 + output_len=16) = 12064 > skip_token_capacity_threshold=10000 due to kv cache limit.========\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	multi := thresholds{maxRunning: math.Inf(1), tokens: 10000, cap: 2}
	if r.skip(multi, 64, 3000, 16) || !r.skip(multi, 64, 6000, 16) {
		t.Errorf("multi-batch guard:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "batch_size=2 * (input_len=6000") {
		t.Errorf("multi-batch line: %s", out.String())
	}
}

// --base-url is used without a call (a trailing slash trimmed), with the
// reference's warning when --host or --port differ from their defaults.
func TestResolveTarget(t *testing.T) {
	var out bytes.Buffer
	c := defaults()
	c.BaseURL, c.Port = "http://h:1/", 30001
	base, err := resolveTarget(context.Background(), c, http.DefaultClient, Env{Stdout: &out})
	if err != nil || base != "http://h:1" {
		t.Fatalf("%q %v", base, err)
	}
	if out.String() != "WARNING: --base-url is set, so --port (and other launch args) are ignored; benchmarking the server at http://h:1/.\n" {
		t.Errorf("warning %q", out.String())
	}
	if got := pyNum(math.Inf(1)) + " " + pyNum(450000); got != "inf 450000" {
		t.Errorf("pyNum: %s", got)
	}
}
