package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"benchserve/internal/py/argparse"
	"benchserve/tokenizer"
)

// loadSpeedBench reads nvidia's SPEED-Bench JSONL (one {"category",
// "turns"} object a line): the first turn of each row in the category,
// rendered through the chat template as one user message and decoded from
// its ids (the plain text if the template fails), --speed-bench-output-len
// tokens out; random.sample of them, or the list tiled and shuffled when
// more are asked for.
func loadSpeedBench(ctx context.Context, p Params, env Env) ([]Row, error) {
	if p.Path == "" {
		return nil, fmt.Errorf("--dataset-path must point to the SPEED-Bench JSONL file (run prepare_speed_bench.sh to generate it)")
	}
	category := ""
	if p.SpeedBenchCategory != nil {
		category = *p.SpeedBenchCategory
	}
	label := "--dataset-path " + p.Path
	var prompts []string
	err := jsonlLines(ctx, p.Path, label, func(n int, line []byte) (bool, error) {
		if blankLine(line) {
			return true, nil
		}
		if err := checkObjectLine(line); err != nil {
			return false, fmt.Errorf("%s: line %d: %v", label, n, err)
		}
		var row struct {
			Category json.RawMessage `json:"category"`
			Turns    json.RawMessage `json:"turns"`
		}
		if err := json.Unmarshal(line, &row); err != nil {
			return false, fmt.Errorf("%s: line %d: %v", label, n, err)
		}
		if category != "" {
			var c string
			if json.Unmarshal(row.Category, &c) != nil || c != category {
				return true, nil
			}
		}
		if row.Turns == nil || falsy(row.Turns) {
			return true, nil
		}
		var turns []json.RawMessage
		if err := json.Unmarshal(row.Turns, &turns); err != nil {
			return false, fmt.Errorf("%s: line %d: turns: want a list of strings, got %s", label, n, pyTypeName(row.Turns))
		}
		var first string
		if err := json.Unmarshal(turns[0], &first); err != nil {
			return false, fmt.Errorf("%s: line %d: turns[0]: want a string, got %s", label, n, pyTypeName(turns[0]))
		}
		prompts = append(prompts, first)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if len(prompts) == 0 {
		msg := "No rows found in " + p.Path
		if category != "" {
			msg += " for category=" + category
		}
		return nil, fmt.Errorf("--dataset-name speed-bench: %s", msg)
	}

	chat, _ := env.Tok.(tokenizer.ChatTemplater)
	type idser interface {
		ApplyChatTemplateIDs([]tokenizer.Message, tokenizer.ChatOptions) ([]int, error)
	}
	n := p.NumPrompts
	// Rows beyond the unique prompts share their text but not the row.
	if err := fitMemory(env, float64(n)*rowBytes, "--num-prompts "+strconv.Itoa(n), "--num-prompts"); err != nil {
		return nil, err
	}
	unique := make([]Row, len(prompts))
	err = env.meter.stage("Counting prompt tokens", len(prompts)).each(len(prompts), func(i int) {
		text := prompts[i]
		r := &unique[i]
		r.OutputLen = p.SpeedBenchOutputLen
		if chat != nil {
			msgs := []tokenizer.Message{{Role: "user", Content: text}}
			opt := tokenizer.ChatOptions{AddGenerationPrompt: true}
			var ids []int
			var err error
			if t, ok := chat.(idser); ok {
				ids, err = t.ApplyChatTemplateIDs(msgs, opt)
			} else {
				var s string
				if s, err = chat.ApplyChatTemplate(msgs, opt); err == nil {
					ids = env.Tok.Encode(s, false)
				}
			}
			if err == nil {
				r.Text, r.PromptLen, r.TextPromptLen = env.Tok.Decode(ids), len(ids), len(ids)
				return
			}
		}
		n := env.Tok.Count(text) + env.Tok.NumSpecialTokensToAdd()
		r.Text, r.PromptLen, r.TextPromptLen = text, n, n
	})
	if err != nil {
		return nil, err
	}
	if n <= len(unique) {
		rows := make([]Row, n)
		for i, k := range env.Py.Sample(len(unique), n) {
			rows[i] = unique[k]
		}
		return rows, nil
	}
	rows := make([]Row, n)
	for i := range rows {
		rows[i] = unique[i%len(unique)]
	}
	env.Py.Shuffle(n, func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	return rows, nil
}

func preflightSpeedBench(p Params) error {
	if p.Path == "" {
		return fmt.Errorf("--dataset-path must point to the SPEED-Bench JSONL file (run prepare_speed_bench.sh to generate it)")
	}
	return nil
}

var speedBenchFlags = []Flag{
	{Opt: argparse.Option{Name: "--speed-bench-category", Type: argparse.Str, Choices: []string{"low_entropy", "mixed", "high_entropy"},
		Help: "speed-bench: use only this category."},
		Bind:    argparse.Ptr(func(p *Params) **string { return &p.SpeedBenchCategory }),
		Ignored: func(Spec) string { return "speed-bench reads it" }},
	{Opt: argparse.Option{Name: "--speed-bench-output-len", Type: argparse.Int, Default: 512,
		Help: "speed-bench: output tokens per request."},
		Bind: argparse.Val(func(p *Params) *int { return &p.SpeedBenchOutputLen }), Ignored: outputs},
}
