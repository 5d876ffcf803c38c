package cli

import (
	"slices"
	"testing"

	"benchserve/backend"
)

// The --backend choices are the table's names, in its order, which is the
// reference's (backend's TestSpecInvariants pins it).
func TestBackendChoices(t *testing.T) {
	for _, f := range flags {
		if f.opt.Name != "--backend" {
			continue
		}
		if !slices.Equal(f.opt.Choices, backend.Names()) || f.opt.Default != "sglang" {
			t.Errorf("--backend choices %v, default %v; want %v, sglang", f.opt.Choices, f.opt.Default, backend.Names())
		}
		return
	}
	t.Error("no --backend flag")
}

// calibrate measures one backend of each request function the simulator
// compares, SGLang's and vLLM's.
func TestCalibrateBackends(t *testing.T) {
	want := []string{"sglang", "sglang-oai", "sglang-oai-chat", "vllm", "vllm-chat"}
	if got := calibrateBackends(); !slices.Equal(got, want) {
		t.Errorf("calibrate --backend choices %v, want %v", got, want)
	}
	if got := calibrateDefault(); got != "vllm" {
		t.Errorf("calibrate --backend default %s, want vllm", got)
	}
}
