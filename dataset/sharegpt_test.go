package dataset

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"benchserve/internal/py/pyrand"
)

// --apply-chat-template renders one user message with the generation
// prompt and removes the BOS text; the length is the encoding of that,
// which adds BOS back ("<s>" in the user's own text goes too, as
// str.replace does). --prompt-suffix applies before the template.
func TestShareGPTChatTemplate(t *testing.T) {
	data := []byte(`[
{"conversations": [{"from": "human", "value": "w1 w2 <s> w3"}, {"from": "gpt", "value": "w4 w5 w6"}]},
{"conversations": [{"from": "human", "value": "w7 Assistant:"}, {"from": "gpt", "value": "w8"}]},
{"conversations": [{"from": "human", "value": "w9"}, {"from": "gpt", "value": "w10 w11"}]}
]`)
	path := writeFile(t, "sg.json", data)
	tok := chatWordTok(t, wordChatTemplate)
	prompts := []string{"w1 w2 <s> w3", "w7 Assistant:", "w9"}
	completions := []string{"w4 w5 w6", "w8", "w10 w11"}
	for _, suffix := range []string{"", " w50"} {
		var out bytes.Buffer
		env := Env{Tok: tok, Py: pyrand.NewPython(3), NP: pyrand.NewNumPy(3), Out: &out}
		rows, err := Load(context.Background(), Params{Name: "sharegpt", Path: path, NumPrompts: 3, ApplyChatTemplate: true, PromptSuffix: suffix}, env)
		if err != nil {
			t.Fatal(err)
		}
		order := []int{0, 1, 2}
		pyrand.NewPython(3).Shuffle(3, func(i, j int) { order[i], order[j] = order[j], order[i] })
		var want []Row
		for _, k := range order {
			p := prompts[k]
			if suffix != "" {
				p = strings.TrimSuffix(p, "Assistant:") + suffix + "Assistant:"
			}
			text := "<|user|> " + strings.ReplaceAll(p, "<s>", "") + " <|assistant|>"
			in, outLen := len(tok.Encode(text, true)), len(tok.Encode(completions[k], true))
			want = append(want, Row{Text: text, PromptLen: in, OutputLen: outLen, TextPromptLen: in})
		}
		if len(rows) != len(want) {
			t.Fatalf("suffix %q: %d rows, want %d: %+v", suffix, len(rows), len(want), rows)
		}
		for i := range rows {
			if rows[i].Text != want[i].Text || rows[i].PromptLen != want[i].PromptLen || rows[i].OutputLen != want[i].OutputLen || rows[i].TextPromptLen != want[i].TextPromptLen {
				t.Errorf("suffix %q: row %d = %+v, want %+v", suffix, i, rows[i], want[i])
			}
		}
		if got, want := out.String(), sums(rows); got != want {
			t.Errorf("printed %q, want %q", got, want)
		}
	}
}

func TestShareGPTChatTemplateMissing(t *testing.T) {
	path := writeFile(t, "sg.json", makeShareGPT(20))
	for _, c := range []struct {
		env  Env
		want string
	}{
		{testEnv(1, new(bytes.Buffer)), "--apply-chat-template: tokenizer words has no chat template"},
		{Env{Tok: chatWordTok(t, ""), Py: pyrand.NewPython(1), NP: pyrand.NewNumPy(1)}, "--apply-chat-template: tokenizer chatwords has no chat template"},
	} {
		_, err := Load(context.Background(), Params{Name: "sharegpt", Path: path, NumPrompts: 2, ApplyChatTemplate: true}, c.env)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err %v, want %q", err, c.want)
		}
	}
	// A template that fails names itself.
	env := Env{Tok: chatWordTok(t, "{{ raise_exception('no users here') }}"), Py: pyrand.NewPython(1), NP: pyrand.NewNumPy(1)}
	_, err := Load(context.Background(), Params{Name: "sharegpt", Path: path, NumPrompts: 2, ApplyChatTemplate: true}, env)
	if err == nil || !strings.Contains(err.Error(), "no users here") {
		t.Errorf("failing template: err %v", err)
	}
}

// A file of another shape gives no conversations, and the error says why,
// for sharegpt and for random, which reads the same file.
func TestShareGPTWrongShape(t *testing.T) {
	for _, c := range []struct {
		name, data, want string
	}{
		{"openai.json", `[{"messages": [{"role": "user", "content": "w1"}], "max_tokens": 5}, {"messages": []}]`,
			`no row has a "conversations" list (the rows have "messages", "max_tokens": an OpenAI-format file? --dataset-name openai reads those, one JSON object a line)`},
		{"other.json", `[{"prompt": "w1", "a_key_longer_than_sixteen": 1}]`,
			`no row has a "conversations" list (the rows have "prompt" and more)`},
		{"empty-rows.json", `[{}, {}]`, `no row has a "conversations" list (the rows are empty objects)`},
		{"short.json", `[{"conversations": [{"value": "w1"}]}, {"conversation": []}]`, `no conversation has two turns (a prompt and a reply)`},
		{"empty.json", `[]`, `the list of conversations is empty`},
	} {
		path := writeFile(t, c.name, []byte(c.data))
		for _, name := range []string{"sharegpt", "random"} {
			_, err := Load(context.Background(), Params{Name: name, Path: path, NumPrompts: 3, RandomInputLen: 4, RandomOutputLen: 4}, testEnv(1, new(bytes.Buffer)))
			if want := "--dataset-path " + path + ": " + c.want; err == nil || err.Error() != want {
				t.Errorf("%s, %s:\n got %v\nwant %s", name, c.name, err, want)
			}
		}
	}
	// Rows of the right shape among others are used, and --num-prompts 0
	// wants none.
	path := writeFile(t, "mixed.json", []byte(`[{"messages": []}, {"conversations": [{"value": "w1 w2"}, {"value": "w3 w4"}]}]`))
	if rows, err := Load(context.Background(), Params{Name: "sharegpt", Path: path, NumPrompts: 3}, testEnv(1, new(bytes.Buffer))); err != nil || len(rows) != 1 {
		t.Errorf("mixed: %d rows, %v", len(rows), err)
	}
	path = writeFile(t, "none.json", []byte(`[]`))
	if _, err := Load(context.Background(), Params{Name: "sharegpt", Path: path, NumPrompts: 0}, testEnv(1, new(bytes.Buffer))); err != nil {
		t.Errorf("--num-prompts 0: %v", err)
	}
}
