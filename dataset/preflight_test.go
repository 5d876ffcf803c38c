package dataset

import (
	"bytes"
	"context"
	"math"
	"testing"
)

// Preflight refuses what Load refuses before it reads a file or uses the
// tokenizer, with the same message, and passes what Load accepts.
func TestPreflightMatchesLoad(t *testing.T) {
	str := func(s string) *string { return &s }
	img := func(f func(*Params)) Params {
		p := Params{Name: "image", Backend: backendOf("sglang"), NumPrompts: 1, ImageCount: 1, ImageResolution: "360p",
			ImageFormat: "jpeg", ImageContent: "blank", RandomInputLen: 4, RandomOutputLen: 4}
		f(&p)
		return p
	}
	bad := []Params{
		{Name: "random", NumPrompts: 1, RandomInputLen: 10, RandomOutputLen: 10, RandomRangeRatio: 2},
		{Name: "random-ids", NumPrompts: 1, RandomInputLen: 10, RandomOutputLen: 1000, RandomRangeRatio: 1.05},
		{Name: "random-ids", NumPrompts: 1, RandomInputLen: 10, RandomRangeRatio: math.NaN()},
		{Name: "sharegpt", NumPrompts: 1, TokenizePrompt: true},
		{Name: "sharegpt", NumPrompts: 1, SharegptOutputLen: intp(3)},
		{Name: "custom", NumPrompts: 1, TokenizePrompt: true},
		{Name: "custom", NumPrompts: 1, SharegptOutputLen: intp(2)},
		{Name: "generated-shared-prefix", GSPNumGroups: 0, GSPPromptsPerGroup: 1, GSPNumTurns: 1},
		{Name: "generated-shared-prefix", GSPNumGroups: 1, GSPPromptsPerGroup: 1, GSPNumTurns: 2, Backend: backendOf("sglang")},
		img(func(p *Params) { p.ImageFormat = "gif" }),
		img(func(p *Params) { p.ImageContent = "noise" }),
		img(func(p *Params) { p.ImageCount = 0 }),
		img(func(p *Params) { p.ImageResolution = "huge" }),
		img(func(p *Params) { p.Backend = backendOf("vllm") }),
		img(func(p *Params) { p.TokenizePrompt = true }),
		img(func(p *Params) { p.RandomRangeRatio = 3 }),
		{Name: "mmmu", NumPrompts: 1, Backend: backendOf("lmdeploy")},
		{Name: "mmmu", NumPrompts: 1, TokenizePrompt: true},
		{Name: "mooncake", NumPrompts: 1, MooncakeWorkload: "conversation", MooncakeNumRounds: 0},
		{Name: "mooncake", NumPrompts: 1, MooncakeWorkload: "nope", MooncakeNumRounds: 1},
		{Name: "speed-bench", NumPrompts: 1},
		{Name: "agentic-trace", NumPrompts: 1, Backend: backendOf("vllm")},
		{Name: "agentic-trace", NumPrompts: 1, Backend: backendOf("vllm-chat")},
		{Name: "openai", NumPrompts: 1, Backend: backendOf("vllm-chat")},
		{Name: "openai", NumPrompts: 1, Backend: backendOf("vllm"), Path: "x.jsonl"},
	}
	for _, p := range bad {
		pre := Preflight(p)
		_, err := Load(context.Background(), p, testEnv(1, new(bytes.Buffer)))
		if pre == nil || err == nil || pre.Error() != err.Error() {
			t.Errorf("%s %+v:\nPreflight: %v\nLoad:      %v", p.Name, p, pre, err)
		}
	}
	good := []Params{
		{Name: "random-ids", NumPrompts: 1, RandomInputLen: 1024, RandomOutputLen: 1024, RandomRangeRatio: 1.0005},
		{Name: "random", NumPrompts: 1, RandomInputLen: 0, RandomOutputLen: 8, RandomRangeRatio: -3},
		{Name: "sharegpt", NumPrompts: 1, SharegptOutputLen: intp(4)},
		img(func(p *Params) { p.Backend = backendOf("vllm-chat"); p.ImageResolution = "random:256x256-512x512" }),
		{Name: "mmmu", NumPrompts: 1, Backend: backendOf("sglang-oai-chat")},
		{Name: "speed-bench", NumPrompts: 1, Path: "x.jsonl", SpeedBenchCategory: str("mixed")},
	}
	for _, p := range good {
		if err := Preflight(p); err != nil {
			t.Errorf("%s %+v: %v", p.Name, p, err)
		}
	}
}
