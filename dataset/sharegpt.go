package dataset

import (
	"context"
	"fmt"
	"io"
	"strings"

	"benchserve/tokenizer"
)

// assistantSuffix ends a prompt when --prompt-suffix is set.
const assistantSuffix = "Assistant:"

// loadShareGPT is sample_sharegpt_requests: the first two turns of each
// conversation, shuffled with Python's random, tokenized in order and kept
// unless too short or too long, until --num-prompts rows are built.
func loadShareGPT(ctx context.Context, p Params, env Env) ([]Row, error) {
	rules, err := newTextRules(p, env)
	if err != nil {
		return nil, err
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
	if err := c.usable(p.NumPrompts); err != nil {
		return nil, err
	}
	env.Py.Shuffle(len(c.pairs), func(i, j int) { c.pairs[i], c.pairs[j] = c.pairs[j], c.pairs[i] })

	// Each pair is tokenized on its own, so the work runs ahead of the walk
	// in parallel while the walk keeps the reference's order.
	measure := func(i int) measured {
		pr := c.pairs[i]
		prompt, err := c.text(pr.prompt)
		if err != nil {
			return measured{err: err}
		}
		return rules.measure(prompt, func() (string, error) { return c.text(pr.completion) })
	}

	rows := make([]Row, 0, min(p.NumPrompts, len(c.pairs)))
	var walkErr error
	st := env.meter.stage("Tokenizing conversations", cap(rows))
	if p.NumPrompts > 0 {
		err = ahead(ctx, len(c.pairs), workers, measure, func(_ int, m measured) bool {
			if m.err != nil {
				walkErr = m.err
				return false
			}
			if rules.keep(m) {
				rows = append(rows, Row{Text: m.prompt, PromptLen: m.promptLen, OutputLen: m.outLen, TextPromptLen: m.promptLen})
				st.add(1)
			}
			return len(rows) < p.NumPrompts
		})
	}
	if err == nil {
		err = walkErr
	}
	if err != nil {
		return nil, err
	}
	shortfall(env.Out, label, len(rows), p.NumPrompts)
	printRowSums(env.Out, rows)
	return rows, nil
}

// printRowSums prints the rows' totals as printSums does.
func printRowSums(w io.Writer, rows []Row) {
	in, out := make([]int, len(rows)), make([]int, len(rows))
	for i, r := range rows {
		in[i], out[i] = r.PromptLen, r.OutputLen
	}
	printSums(w, in, out)
}

// textRules are sharegpt's rules for one prompt and completion, which the
// custom dataset's text rows share: --prompt-suffix, --apply-chat-template,
// the token counts, and the prune rules.
type textRules struct {
	tok        tokenizer.Tokenizer
	special    int
	suffix     string
	chat       tokenizer.ChatTemplater // nil without --apply-chat-template
	bos        string
	fixedOut   *int
	contextLen *int
}

// measured is one pair with its prompt rewritten and both lengths counted.
type measured struct {
	prompt            string
	promptLen, outLen int
	err               error
}

func newTextRules(p Params, env Env) (*textRules, error) {
	if p.SharegptOutputLen != nil && *p.SharegptOutputLen < 4 {
		return nil, fmt.Errorf("--sharegpt-output-len %d: too small, must be at least 4", *p.SharegptOutputLen)
	}
	r := &textRules{tok: env.Tok, special: env.Tok.NumSpecialTokensToAdd(), suffix: p.PromptSuffix,
		fixedOut: p.SharegptOutputLen, contextLen: p.SharegptContextLen}
	if p.ApplyChatTemplate {
		chat, err := chatTemplater(env.Tok, "--apply-chat-template")
		if err != nil {
			return nil, err
		}
		r.chat, r.bos = chat, env.Tok.BOSToken()
	}
	return r, nil
}

// measure rewrites prompt and counts it, and the completion unless
// --sharegpt-output-len fixes the output length.
func (r *textRules) measure(prompt string, completion func() (string, error)) (m measured) {
	if r.suffix != "" {
		prompt = strings.TrimSuffix(prompt, assistantSuffix) + r.suffix + assistantSuffix
	}
	if r.chat != nil {
		if prompt, m.err = userTemplate(r.chat, prompt, r.bos); m.err != nil {
			return m
		}
	}
	m.prompt = prompt
	// encode() adds special tokens; Count does not.
	m.promptLen = r.tok.Count(prompt) + r.special
	if r.fixedOut != nil {
		m.outLen = *r.fixedOut
		return m
	}
	var text string
	if text, m.err = completion(); m.err != nil {
		return m
	}
	m.outLen = r.tok.Count(text) + r.special
	return m
}

// keep is the prune rule: at least 2 tokens each way, and within
// --sharegpt-context-len when it is set and not 0.
func (r *textRules) keep(m measured) bool {
	if m.promptLen < 2 || m.outLen < 2 {
		return false
	}
	if cl := r.contextLen; cl != nil && *cl != 0 && m.promptLen+m.outLen > *cl {
		return false
	}
	return true
}

// chatTemplater returns the tokenizer's chat templates, or an error naming
// what (a flag or a dataset) needs them.
func chatTemplater(tok tokenizer.Tokenizer, what string) (tokenizer.ChatTemplater, error) {
	chat, ok := tok.(tokenizer.ChatTemplater)
	if h, isHF := tok.(interface{ HasChatTemplate() bool }); !ok || isHF && !h.HasChatTemplate() {
		return nil, fmt.Errorf("%s: tokenizer %s has no chat template (pass --tokenizer with a Hugging Face tokenizer that has one)", what, tok.Name())
	}
	return chat, nil
}

// userTemplate renders one user message with the generation prompt, as
// text, then removes every occurrence of the BOS token's text (the
// server adds its own).
func userTemplate(chat tokenizer.ChatTemplater, text, bos string) (string, error) {
	s, err := chat.ApplyChatTemplate([]tokenizer.Message{{Role: "user", Content: text}}, tokenizer.ChatOptions{AddGenerationPrompt: true})
	if err != nil {
		return "", fmt.Errorf("--apply-chat-template: %v", err)
	}
	if bos != "" {
		s = strings.ReplaceAll(s, bos, "")
	}
	return s, nil
}

// checkShareGPTOutputLen is the reference's check of
// --sharegpt-output-len, for the datasets that replay conversations.
func checkShareGPTOutputLen(p Params) error {
	if p.SharegptOutputLen != nil && *p.SharegptOutputLen < 4 {
		return fmt.Errorf("--sharegpt-output-len %d: too small, must be at least 4", *p.SharegptOutputLen)
	}
	return nil
}
