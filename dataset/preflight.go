package dataset

import (
	"fmt"
	"math"
	"strconv"
)

// Preflight makes the checks of the dataset p names that need neither a
// tokenizer nor a file, with the loader's own messages, so that a run can
// refuse bad flags before it contacts the server. Load makes them again.
func Preflight(p Params) error {
	tokenize := func() error {
		if p.TokenizePrompt {
			return fmt.Errorf("--tokenize-prompt: not supported by --dataset-name %s (only random and random-ids)", p.Name)
		}
		return nil
	}
	outputLen := func() error {
		if p.SharegptOutputLen != nil && *p.SharegptOutputLen < 4 {
			return fmt.Errorf("--sharegpt-output-len %d: too small, must be at least 4", *p.SharegptOutputLen)
		}
		return nil
	}
	switch p.Name {
	case "random", "random-ids":
		return preflightLens(p)
	case "sharegpt":
		return first(tokenize, outputLen)
	case "custom":
		return first(tokenize, outputLen, func() error {
			if p.Path == "" {
				return fmt.Errorf("--dataset-name custom: --dataset-path must name a JSONL file of conversations")
			}
			return nil
		})
	case "generated-shared-prefix":
		return checkGSP(p)
	case "image":
		return first(tokenize, func() error { return preflightImage(p) }, func() error { return preflightLens(p) })
	case "mmmu":
		return first(tokenize, func() error { _, err := mmRawText("mmmu", p.Backend); return err })
	case "mooncake":
		if _, ok := mooncakeFiles[p.MooncakeWorkload]; !ok {
			return fmt.Errorf("--mooncake-workload %s: choose from mooncake, conversation, synthetic, toolagent", p.MooncakeWorkload)
		}
		if p.MooncakeNumRounds < 1 {
			return fmt.Errorf("--mooncake-num-rounds %d: must be at least 1", p.MooncakeNumRounds)
		}
	case "speed-bench":
		if p.Path == "" {
			return fmt.Errorf("--dataset-path must point to the SPEED-Bench JSONL file (run prepare_speed_bench.sh to generate it)")
		}
	case "agentic-trace":
		if err := agenticBackend(p.Backend); err != nil {
			return err
		}
		if p.Path == "" {
			return fmt.Errorf("--dataset-path: agentic-trace needs the trace's JSON file")
		}
	case "openai":
		if p.Path == "" {
			return fmt.Errorf("--dataset-name openai: --dataset-path must name a JSONL file of chat requests")
		}
		if err := openaiBackend(p.Backend); err != nil {
			return err
		}
	}
	return nil
}

func first(checks ...func() error) error {
	for _, c := range checks {
		if err := c(); err != nil {
			return err
		}
	}
	return nil
}

// preflightImage is loadImage's checks of its own flags.
func preflightImage(p Params) error {
	if _, err := mmRawText("image", p.Backend); err != nil {
		return err
	}
	if p.ImageCount < 1 {
		return fmt.Errorf("--image-count %d: must be at least 1", p.ImageCount)
	}
	if p.ImageFormat != "jpeg" && p.ImageFormat != "png" {
		return fmt.Errorf("--image-format %s: choose jpeg or png", p.ImageFormat)
	}
	if p.ImageContent != "random" && p.ImageContent != "blank" {
		return fmt.Errorf("--image-content %s: choose random or blank", p.ImageContent)
	}
	_, err := parseImageRes(p.ImageResolution)
	return err
}

// preflightLens is randomLens's check of the range, for the input and the
// output lengths: numpy's randint(max(int(full*ratio), 1), full+1) needs
// int(full*ratio) <= full, so a ratio a little above 1 may pass.
func preflightLens(p Params) error {
	for _, l := range []struct {
		flag string
		full int
	}{{"--random-input-len", p.RandomInputLen}, {"--random-output-len", p.RandomOutputLen}} {
		if l.full <= 0 {
			continue
		}
		r := p.RandomRangeRatio
		if math.IsNaN(r) || math.IsInf(r, 0) {
			return fmt.Errorf("--random-range-ratio %v: not a finite number", r)
		}
		if low := math.Trunc(float64(l.full) * r); low > float64(l.full) {
			return fmt.Errorf("--random-range-ratio %s: the shortest length %.0f exceeds %s %d",
				strconv.FormatFloat(r, 'g', -1, 64), low, l.flag, l.full)
		}
	}
	return nil
}
