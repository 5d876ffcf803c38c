package dataset

import (
	"context"
	"fmt"
	"strings"
)

// assistantSuffix ends a prompt when --prompt-suffix is set.
const assistantSuffix = "Assistant:"

// loadShareGPT is sample_sharegpt_requests: the first two turns of each
// conversation, shuffled with Python's random, tokenized in order and kept
// unless too short or too long, until --num-prompts rows are built.
func loadShareGPT(ctx context.Context, p Params, env Env) ([]Row, error) {
	if p.SharegptOutputLen != nil && *p.SharegptOutputLen < 4 {
		return nil, fmt.Errorf("--sharegpt-output-len %d: too small, must be at least 4", *p.SharegptOutputLen)
	}
	if p.TokenizePrompt {
		return nil, fmt.Errorf("--tokenize-prompt: not supported by --dataset-name sharegpt (only random and random-ids)")
	}
	if p.ApplyChatTemplate {
		return nil, fmt.Errorf("--apply-chat-template: tokenizer %s has no chat template (chat templates are not supported yet)", env.Tok.Name())
	}
	path, label, err := shareGPTPath(ctx, p, env)
	if err != nil {
		return nil, err
	}
	c, err := openCorpus(ctx, path, label)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	env.Py.Shuffle(len(c.pairs), func(i, j int) { c.pairs[i], c.pairs[j] = c.pairs[j], c.pairs[i] })

	special := env.Tok.NumSpecialTokensToAdd()
	type tokenized struct {
		prompt            string
		promptLen, outLen int
		err               error
	}
	// Each pair is tokenized on its own, so the work runs ahead of the walk
	// in parallel while the walk keeps the reference's order.
	measure := func(i int) (t tokenized) {
		pr := c.pairs[i]
		if t.prompt, t.err = c.text(pr.prompt); t.err != nil {
			return t
		}
		if p.PromptSuffix != "" {
			t.prompt = strings.TrimSuffix(t.prompt, assistantSuffix) + p.PromptSuffix + assistantSuffix
		}
		// encode() adds special tokens; Count does not.
		t.promptLen = env.Tok.Count(t.prompt) + special
		if p.SharegptOutputLen != nil {
			t.outLen = *p.SharegptOutputLen
			return t
		}
		var completion string
		if completion, t.err = c.text(pr.completion); t.err != nil {
			return t
		}
		t.outLen = env.Tok.Count(completion) + special
		return t
	}

	rows := make([]Row, 0, min(p.NumPrompts, len(c.pairs)))
	var walkErr error
	if p.NumPrompts > 0 {
		err = ahead(ctx, len(c.pairs), workers, measure, func(_ int, t tokenized) bool {
			if t.err != nil {
				walkErr = t.err
				return false
			}
			if t.promptLen < 2 || t.outLen < 2 {
				return true
			}
			if cl := p.SharegptContextLen; cl != nil && *cl != 0 && t.promptLen+t.outLen > *cl {
				return true
			}
			rows = append(rows, Row{Text: t.prompt, PromptLen: t.promptLen, OutputLen: t.outLen, TextPromptLen: t.promptLen})
			return len(rows) < p.NumPrompts
		})
	}
	if err == nil {
		err = walkErr
	}
	if err != nil {
		return nil, err
	}
	in, out := make([]int, len(rows)), make([]int, len(rows))
	for i, r := range rows {
		in[i], out[i] = r.PromptLen, r.OutputLen
	}
	shortfall(env.Out, label, len(rows), p.NumPrompts)
	printSums(env.Out, in, out)
	return rows, nil
}
