package dataset

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
)

// --rerank-docs k makes each random and random-ids row a query and k
// documents: the texts the dataset draws for n·(k+1) rows, in order,
// grouped, with the row's PromptLen their sum.
func TestRerankRows(t *testing.T) {
	path := writeFile(t, "sg.json", makeShareGPT(80))
	for _, name := range []string{"random", "random-ids"} {
		t.Run(name, func(t *testing.T) {
			load := func(p Params) ([]Row, string) {
				var out bytes.Buffer
				rows, err := Load(context.Background(), p, testEnv(11, &out))
				if err != nil {
					t.Fatal(err)
				}
				return rows, out.String()
			}
			flat, _ := load(Params{Name: name, Path: path, NumPrompts: 15, RandomInputLen: 12, RandomOutputLen: 6, RandomRangeRatio: 0.5, Seed: 7})
			rows, out := load(Params{Name: name, Path: path, NumPrompts: 5, RandomInputLen: 12, RandomOutputLen: 6, RandomRangeRatio: 0.5, Seed: 7, RerankDocs: 2})
			if len(rows) != 5 || !strings.Contains(out, "Rerank rows: 5 queries of 2 documents each") {
				t.Fatalf("%d rows; printed %s", len(rows), out)
			}
			sum := 0
			for _, r := range rows {
				sum += r.PromptLen
			}
			if want := "#Input tokens: " + strconv.Itoa(sum) + "\n#Output tokens: 0\n"; !strings.HasPrefix(out, want) {
				t.Errorf("printed %q, want it to begin %q", out, want)
			}
			for i, r := range rows {
				if r.OutputLen != 0 {
					t.Errorf("row %d: OutputLen %d", i, r.OutputLen)
				}
				g := flat[3*i : 3*i+3]
				if r.Text != g[0].Text || len(r.Docs) != 2 || r.Docs[0] != g[1].Text || r.Docs[1] != g[2].Text {
					t.Errorf("row %d: query %q docs %q, want the texts %q %q %q", i, r.Text, r.Docs, g[0].Text, g[1].Text, g[2].Text)
				}
				if want := g[0].PromptLen + g[1].PromptLen + g[2].PromptLen; r.PromptLen != want {
					t.Errorf("row %d: PromptLen %d, want %d", i, r.PromptLen, want)
				}
			}
		})
	}
}

func TestRerankRefusals(t *testing.T) {
	turns := "2"
	for _, c := range []struct {
		p    Params
		want string
	}{
		{Params{Name: "random-ids", RerankDocs: -1}, "--rerank-docs -1: give a number of documents >= 1"},
		{Params{Name: "random-ids", RerankDocs: 2, TokenizePrompt: true}, "drop --tokenize-prompt"},
		{Params{Name: "random", RerankDocs: 2, SessionTurns: &turns}, "drop --session-turns"},
	} {
		c.p.NumPrompts, c.p.RandomInputLen, c.p.RandomOutputLen = 3, 8, 4
		if err := Preflight(c.p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
	if got := Note("--rerank-docs", Params{Name: "sharegpt"}); got != "--dataset-name sharegpt ignores it (only random and random-ids build rerank rows)" {
		t.Errorf("note %q", got)
	}
}
