package dataset

import (
	"context"
	"fmt"
)

// loadRandom is sample_random_requests: lengths drawn with numpy, then
// prompts of exactly those token counts, made from ShareGPT's token space
// (random) or from consecutive vocabulary ids (random-ids).
func loadRandom(ctx context.Context, p Params, env Env) ([]Row, error) {
	n := p.NumPrompts
	inLens, err := randomLens(env.NP, p.RandomInputLen, p.RandomRangeRatio, n, "--random-input-len")
	if err != nil {
		return nil, err
	}
	outLens, err := randomLens(env.NP, p.RandomOutputLen, p.RandomRangeRatio, n, "--random-output-len")
	if err != nil {
		return nil, err
	}
	if !p.TokenizePrompt {
		// The server adds BOS and the like to a text prompt.
		special := env.Tok.NumSpecialTokensToAdd()
		for i := range inLens {
			inLens[i] = max(0, inLens[i]-special)
		}
	}

	var ids [][]int
	if p.Name == "random" {
		path, label, err := shareGPTPath(ctx, p, env)
		if err != nil {
			return nil, err
		}
		if ids, err = shareGPTTokens(ctx, path, label, inLens, env); err != nil {
			return nil, err
		}
		shortfall(env.Out, label, len(ids), n)
	} else {
		if ids, err = consecutiveIDs(inLens, env); err != nil {
			return nil, err
		}
	}

	rows := make([]Row, len(ids))
	parallel(len(rows), workers, func(i int) {
		r := &rows[i]
		r.PromptLen, r.TextPromptLen, r.OutputLen = inLens[i], inLens[i], outLens[i]
		if p.TokenizePrompt {
			r.IDs = ids[i]
		} else {
			r.Text = env.Tok.Decode(ids[i])
			ids[i] = nil
		}
	})
	printSums(env.Out, inLens[:len(rows)], outLens[:len(rows)])
	return rows, nil
}

// shareGPTTokens walks the shuffled ShareGPT prompts, tokenized with
// special tokens, and cuts or repeats each to the next target length.
// Empty prompts are skipped; the file may run out before every target is met.
func shareGPTTokens(ctx context.Context, path, label string, targets []int, env Env) ([][]int, error) {
	c, err := openCorpus(ctx, path, label)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	env.Py.Shuffle(len(c.pairs), func(i, j int) { c.pairs[i], c.pairs[j] = c.pairs[j], c.pairs[i] })
	if len(targets) == 0 {
		return nil, nil
	}

	type encoded struct {
		ids []int
		err error
	}
	encode := func(i int) encoded {
		text, err := c.text(c.pairs[i].prompt)
		if err != nil {
			return encoded{err: err}
		}
		return encoded{ids: env.Tok.Encode(text, true)}
	}
	out := make([][]int, 0, len(targets))
	var walkErr error
	err = ahead(ctx, len(c.pairs), workers, encode, func(_ int, e encoded) bool {
		if e.err != nil {
			walkErr = e.err
			return false
		}
		if len(e.ids) == 0 {
			return true
		}
		// (ids * ceil(target/len))[:target]
		ids := make([]int, targets[len(out)])
		for j := range ids {
			ids[j] = e.ids[j%len(e.ids)]
		}
		out = append(out, ids)
		return len(out) < len(targets)
	})
	if err == nil {
		err = walkErr
	}
	return out, err
}

// consecutiveIDs gives prompt i the ids (offset_i + i + j) % vocab_size for
// j < target_i, the offsets drawn with np.random.randint(0, vocab_size, N).
func consecutiveIDs(targets []int, env Env) ([][]int, error) {
	v := env.Tok.VocabSize()
	if v <= 0 {
		return nil, fmt.Errorf("--dataset-name random-ids: tokenizer %s has an empty vocabulary", env.Tok.Name())
	}
	offsets := env.NP.RandInts(0, int64(v), len(targets))
	out := make([][]int, len(targets))
	parallel(len(targets), workers, func(i int) {
		ids := make([]int, targets[i])
		id := int((offsets[i] + int64(i)) % int64(v))
		for j := range ids {
			ids[j] = id
			if id++; id == v {
				id = 0
			}
		}
		out[i] = ids
	})
	return out, nil
}
