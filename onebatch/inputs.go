package onebatch

import (
	"context"
	"os"

	"benchserve/dataset"
	"benchserve/hub"
	"benchserve/schedule"
	"benchserve/tokenizer"
)

// inputs are one case's prompts (one-batch spec §3.2).
type inputs struct {
	ids    [][]int
	images [][]string // mmmu; nil otherwise
	lora   []string
	// inputLen and outputLen are the case's after the dataset's say
	// (GSP, replay and the fixed prompt change them).
	inputLen, outputLen int
	totalInput          int
}

// gspSeed is the reference's BenchArgs.seed default, which it passes to
// GSP (for its cache key) whatever --seed is.
const gspSeed = 42

// inputs builds a case's prompts from the run's generators, which every
// case (and warmup) draws on in turn, as the reference's global RNGs.
func (r *runner) inputs(ctx context.Context, bs, il, ol int) (*inputs, error) {
	c := r.cfg
	in := &inputs{inputLen: il, outputLen: ol}
	if c.FixedPromptFile != "" {
		ids, err := r.fixedPrompt()
		if err != nil {
			return nil, err
		}
		in.ids = make([][]int, bs)
		for i := range in.ids {
			in.ids[i] = ids
		}
		in.inputLen = len(ids)
	} else if err := r.datasetInputs(ctx, in, bs, il, ol); err != nil {
		return nil, err
	}
	if replay(c.DatasetName) {
		for _, ids := range in.ids {
			in.totalInput += len(ids)
		}
	} else {
		in.totalInput = bs * in.inputLen
	}
	if c.sglang() && len(c.LoraNames) > 1 {
		picks, err := schedule.LoRAPicks(schedule.LoRA{Names: c.LoraNames, Distribution: c.LoraDistribution, ZipfAlpha: c.LoraZipfAlpha}, bs, r.py, r.np)
		if err != nil {
			return nil, err
		}
		in.lora = picks
	} else if c.sglang() && len(c.LoraNames) == 1 {
		in.lora = c.LoraNames
	}
	return in, nil
}

// fixedPrompt encodes --fixed-prompt-file once for the run.
func (r *runner) fixedPrompt() ([]int, error) {
	if r.fixed != nil {
		return r.fixed, nil
	}
	b, err := os.ReadFile(r.cfg.FixedPromptFile)
	if err != nil {
		return nil, failure("--fixed-prompt-file: %v", err)
	}
	text := string(b)
	if !r.cfg.ApplyChatTemplate {
		r.fixed = r.tok.Encode(text, true)
	} else {
		pt, ok := r.tok.(*tokenizer.Pretrained)
		if !ok {
			return nil, failure("--apply-chat-template: tokenizer %s has no chat template", r.tok.Name())
		}
		ids, err := pt.ApplyChatTemplateIDs([]tokenizer.Message{{Role: "user", Content: text}}, tokenizer.ChatOptions{AddGenerationPrompt: true})
		if err != nil {
			return nil, failure("--apply-chat-template: %v", err)
		}
		r.fixed = ids
	}
	if len(r.fixed) == 0 {
		return nil, failure("--fixed-prompt-file %s: the prompt has no tokens", r.cfg.FixedPromptFile)
	}
	return r.fixed, nil
}

func (r *runner) datasetInputs(ctx context.Context, in *inputs, bs, il, ol int) error {
	c := r.cfg
	g := min(c.GSPNumGroups, bs)
	spec := datasetSpec(c)
	p := dataset.Params{
		Name: c.DatasetName, Path: c.DatasetPath, NumPrompts: bs,
		RandomInputLen: il, RandomOutputLen: ol, RandomRangeRatio: 1.0,
		TokenizePrompt:    spec.Uses("--tokenize-prompt"),
		ApplyChatTemplate: c.ApplyChatTemplate,
		Seed:              gspSeed,
		Backend:           dataset.Backend{Name: c.Backend, Images: dataset.ImagesNative},
		Model:             r.modelID,
		GSPNumGroups:      g, GSPPromptsPerGroup: (bs + g - 1) / g,
		GSPSystemPromptLen: c.GSPSystemLen, GSPQuestionLen: c.GSPQuestionLen, GSPOutputLen: c.GSPOutputLen,
		GSPRangeRatio: 1.0, GSPNumTurns: 1, GSPGroupDistribution: "uniform",
		ImageCount: 1, ImageResolution: "1080p", ImageFormat: "jpeg", ImageContent: "random",
	}
	hc := hub.FromEnv(r.env.Getenv)
	hc.Progress = r.env.Stderr
	rows, err := dataset.Load(ctx, p, dataset.Env{
		Tok: r.tok, Py: r.py, NP: r.np, Out: r.env.Stdout, CacheDir: dataset.CacheDir(r.env.Getenv), HTTP: hc.HTTP,
		Progress: r.env.Stderr,
		Fetch: func(ctx context.Context, repoType, repoID, file string) (string, error) {
			return hc.Download(ctx, repoType, repoID, file, "main")
		},
	})
	if err != nil {
		return failure("%s: --dataset-name %s: %v", caseName(bs, il, ol), c.DatasetName, err)
	}
	switch {
	case spec.Uses("--tokenize-prompt"): // random, random-ids: the ids as drawn
		in.ids = make([][]int, len(rows))
		for i, row := range rows {
			in.ids[i] = row.IDs
		}
	case spec.Recorded: // sharegpt, custom
		if len(rows) < bs {
			return failure("%s produced only %d usable prompts for batch size %d; use a smaller batch size or a larger dataset.", c.DatasetName, len(rows), bs)
		}
		rows = rows[:bs]
		in.ids = encodeRows(r.tok, rows)
		in.inputLen = meanLen(in.ids)
	case spec.Images: // mmmu
		in.ids = encodeRows(r.tok, rows)
		in.images = make([][]string, len(rows))
		for i, row := range rows {
			in.images[i] = row.Images
		}
	default: // generated-shared-prefix, whose groups may give more rows than the batch
		rows = rows[:min(bs, len(rows))]
		in.ids = encodeRows(r.tok, rows)
		in.inputLen = meanLen(in.ids)
		in.outputLen = c.GSPOutputLen
	}
	if len(in.ids) == 0 {
		return failure("%s: --dataset-name %s produced no prompts", caseName(bs, il, ol), c.DatasetName)
	}
	return nil
}

// encodeRows encodes each row's prompt with special tokens, as the
// reference's tokenizer.encode(req.prompt).
func encodeRows(tok tokenizer.Tokenizer, rows []dataset.Row) [][]int {
	out := make([][]int, len(rows))
	for i, row := range rows {
		text := row.Text
		if text == "" && row.Messages != nil {
			text = string(row.Messages)
		}
		out[i] = tok.Encode(text, true)
	}
	return out
}

// meanLen is sum(len(ids)) // len(ids).
func meanLen(ids [][]int) int {
	if len(ids) == 0 {
		return 0
	}
	sum := 0
	for _, l := range ids {
		sum += len(l)
	}
	return sum / len(ids)
}
