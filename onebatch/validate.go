package onebatch

import (
	"fmt"
	"os"

	"benchserve/internal/exit"
)

func usage(format string, a ...any) error {
	return &exit.Error{Code: exit.Usage, Msg: fmt.Sprintf(format, a...)}
}

func failure(format string, a ...any) error {
	return &exit.Error{Code: exit.Failure, Msg: fmt.Sprintf(format, a...)}
}

// Validate checks every flag combination before any request, with the
// reference's messages where it has them (it checks some only after
// contacting the server). It returns notes on flags that have no effect.
func Validate(c *Config) (notes []string, err error) {
	positive := func(flag string, v []int) error {
		for _, x := range v {
			if x <= 0 {
				return usage("argument %s: every value must be at least 1, got %d", flag, x)
			}
		}
		return nil
	}
	for _, f := range []struct {
		flag string
		v    []int
	}{{"--batch-size", c.BatchSizes}, {"--input-len", c.InputLens}, {"--output-len", c.OutputLens}} {
		if err := positive(f.flag, f.v); err != nil {
			return nil, err
		}
	}
	if c.DisableIgnoreEOS {
		switch {
		case c.vllm():
			return nil, usage("--disable-ignore-eos requires the sglang backend: vllm stream chunks carry no cumulative token counts, so early-stop-aware accounting is impossible.")
		case c.FakePrefill:
			return nil, usage("--disable-ignore-eos is incompatible with --fake-prefill: decode conditions on uninitialized KV, so EOS timing is meaningless.")
		case c.StreamInterval != 1:
			return nil, usage("--disable-ignore-eos requires --client-stream-interval 1: the steady-state window needs per-token cumulative counts, and larger intervals quantize them by up to interval-1 tokens per request.")
		}
	}
	if replay(c.DatasetName) {
		switch {
		case c.vllm():
			return nil, usage("Replay datasets require the sglang backend: vllm stream chunks carry no token counts, so the decode-window token accounting replay throughput relies on is impossible.")
		case c.FixedPromptFile != "":
			return nil, usage("--fixed-prompt-file bypasses --dataset-name; drop one of them.")
		case datasetSpec(c).Downloads == "" && !isFile(c.DatasetPath): // custom: nothing to download
			return nil, usage("--dataset-name %s requires --dataset-path pointing at a JSONL conversation file; got %q.", c.DatasetName, c.DatasetPath)
		case len(c.InputLens) > 1:
			return nil, usage("Replay datasets take prompt lengths from the recorded data; sweeping --input-len is meaningless. Pass at most one value (used only by the token-capacity skip guard).")
		}
	}
	if (c.LoraDistribution == "distinct" || c.LoraDistribution == "skewed") && len(c.LoraNames) < 2 {
		return nil, usage("--lora-request-distribution=distinct/skewed requires more than one adapter via --lora-name.")
	}
	if !(c.LoraZipfAlpha > 1) {
		return nil, usage("--lora-zipf-alpha must be > 1, got %v", c.LoraZipfAlpha)
	}
	if c.ApplyChatTemplate && c.FixedPromptFile == "" && !replay(c.DatasetName) {
		return nil, usage("--apply-chat-template requires --fixed-prompt-file or a replay text dataset (sharegpt/custom): the other datasets generate token ids directly, so there is no prompt text to run through a chat template.")
	}
	if c.FixedPromptFile != "" && !isFile(c.FixedPromptFile) {
		return nil, usage("--fixed-prompt-file %s: no such file", c.FixedPromptFile)
	}
	switch {
	case c.CacheHitRate < 0 || c.CacheHitRate > 1:
		return nil, usage("argument --cache-hit-rate: must be between 0 and 1, got %v", c.CacheHitRate)
	case c.StreamInterval < 1:
		return nil, usage("argument --client-stream-interval: must be at least 1, got %d", c.StreamInterval)
	case c.TPSize < 1:
		return nil, usage("argument --tp-size: must be at least 1, got %d", c.TPSize)
	case c.Profile && c.ProfileSteps < 1:
		return nil, usage("argument --profile-steps: must be at least 1, got %d", c.ProfileSteps)
	case c.HourlyCostPerGPU <= 0:
		return nil, usage("argument --hourly-cost-per-gpu: must be positive, got %v", c.HourlyCostPerGPU)
	case c.GSPNumGroups < 1 && datasetSpec(c).Uses("--gsp-num-groups"):
		return nil, usage("argument --gsp-num-groups: must be at least 1, got %d", c.GSPNumGroups)
	}
	if c.vllm() {
		for _, f := range []struct {
			flag string
			on   bool
		}{{"--fake-prefill", c.FakePrefill}, {"--lora-name", len(c.LoraNames) > 0},
			{"--parallel-batch", c.ParallelBatch}, {"--client-stream-interval", c.StreamInterval != 1}} {
			if f.on {
				notes = append(notes, f.flag+" has no effect with --backend vllm: the completions request does not carry it")
			}
		}
	}
	return notes, nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
