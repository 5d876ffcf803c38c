package dataset

import (
	"context"
	"fmt"
	"io"
)

// loadRerank builds rerank rows from random or random-ids: it draws
// n·(docs+1) prompts as loadRandom does (each of --random-input-len
// tokens) and makes each run of docs+1 one row, the first the query and
// the rest its documents. PromptLen is the sum of the texts' lengths.
func loadRerank(ctx context.Context, p Params, env Env) ([]Row, error) {
	k := p.RerankDocs + 1
	flat, quiet := p, env
	flat.NumPrompts, flat.RerankDocs = p.NumPrompts*k, 0
	// Its sums are of the flat texts, not of the requests: ours follow.
	quiet.Out = io.Discard
	texts, err := loadRandom(ctx, flat, quiet)
	if err != nil {
		return nil, err
	}
	rows := make([]Row, len(texts)/k)
	for i := range rows {
		g := texts[i*k : (i+1)*k]
		r := &rows[i]
		r.Text = g[0].Text // nothing is generated: OutputLen stays 0
		r.Docs = make([]string, p.RerankDocs)
		for j := range g {
			r.PromptLen += g[j].PromptLen
			if j > 0 {
				r.Docs[j-1] = g[j].Text
			}
		}
		r.TextPromptLen = r.PromptLen
	}
	total := 0
	for i := range rows {
		total += rows[i].PromptLen
	}
	fmt.Fprintf(env.Out, "#Input tokens: %d\n#Output tokens: 0\n", total)
	fmt.Fprintf(env.Out, "Rerank rows: %d queries of %d documents each", len(rows), p.RerankDocs)
	if len(rows) < p.NumPrompts {
		fmt.Fprintf(env.Out, " (the text source had enough for %d of --num-prompts %d)", len(rows), p.NumPrompts)
	}
	fmt.Fprintln(env.Out)
	return rows, nil
}

// preflightRerank refuses what rerank rows cannot carry.
func preflightRerank(p Params) error {
	switch {
	case p.RerankDocs < 0:
		return fmt.Errorf("--rerank-docs %d: give a number of documents >= 1", p.RerankDocs)
	case p.RerankDocs == 0:
		return nil
	case p.TokenizePrompt:
		return fmt.Errorf("--rerank-docs: rerank queries and documents are text; drop --tokenize-prompt")
	case p.SessionTurns != nil:
		return fmt.Errorf("--rerank-docs: a rerank request is one query, not a session; drop --session-turns")
	}
	return nil
}
