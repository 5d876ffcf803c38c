package dataset

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"benchserve/backend"
	"benchserve/internal/py/pyjson"
	"benchserve/internal/py/pyrand"
)

func openaiEnv(t testing.TB, out *bytes.Buffer) Env {
	return Env{Tok: chatWordTok(t, wordChatTemplate), Py: pyrand.NewPython(1), NP: pyrand.NewNumPy(1), Out: out}
}

// sentBody is what the backend sends for row, with the global extra body
// merged under the row's own as the run does.
func sentBody(t *testing.T, name string, row Row, global *pyjson.Object) string {
	t.Helper()
	c, err := backend.New(name, "http://127.0.0.1:1", backend.Options{Stream: true, IgnoreEOS: true, TopP: 1, LogprobStartLen: -1}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	extra := global
	if row.Extra != nil {
		extra = global.Clone()
		extra.Update(row.Extra)
	}
	return string(c.Body(&backend.Input{Text: row.Text, IDs: row.IDs, Messages: row.Messages, PromptLen: row.PromptLen,
		OutputLen: row.OutputLen, Model: "m", Images: row.Images, Extra: extra, RoutingKey: row.RoutingKey}))
}

func TestOpenAI(t *testing.T) {
	lines := []string{
		`{"model": "gpt-x", "messages": [{"role": "system", "content": "w1"}, {"role": "user", "content": "w2 w3"}], "max_tokens": 7, "temperature": 0.5, "tools": [{"type": "function", "function": {"name": "w4"}}], "max_completion_tokens": 99}`,
		``,
		`{"messages": [{"role": "user", "content": "w5"}]`,
		`{"messages": [], "max_tokens": 3}`,
		`{"messages": [{"role": "user", "content": "w6 w7 w8"}], "top_p": 0.9, "temperature": 1}`,
		`{"messages": [{"role": "user", "content": "w9"}], "max_tokens": 5}`,
	}
	path := writeFile(t, "req.jsonl", []byte(strings.Join(lines, "\n")+"\n"))
	tok := chatWordTok(t, wordChatTemplate)
	var out bytes.Buffer
	rows, err := Load(context.Background(), Params{Name: "openai", Path: path, NumPrompts: 3}, openaiEnv(t, &out))
	if err != nil {
		t.Fatal(err)
	}
	// Three valid JSON lines are read (the invalid one is skipped and not
	// counted); the one with empty messages gives no row.
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2: %+v", len(rows), rows)
	}
	tmpl := func(s string) int { return len(tok.Encode(s, false)) }
	wantLen0 := tmpl("<s><|system|> w1 <|user|> w2 w3 <|assistant|>") + len(tok.Encode(`[{"type": "function", "function": {"name": "w4"}}]`, true))
	wantLen1 := tmpl("<s><|user|> w6 w7 w8 <|assistant|>")
	if r := rows[0]; r.PromptLen != wantLen0 || r.TextPromptLen != wantLen0 || r.OutputLen != 7 {
		t.Errorf("row 0 lengths %d/%d/%d, want %d/%d/7", r.PromptLen, r.TextPromptLen, r.OutputLen, wantLen0, wantLen0)
	}
	if r := rows[1]; r.PromptLen != wantLen1 || r.OutputLen != 256 || r.Text != "" {
		t.Errorf("row 1 = %+v, want prompt_len %d, output 256", r, wantLen1)
	}
	if want := "Warning: --dataset-path " + path + ": line 3: invalid JSON, skipped\n" +
		"Loaded 2 OpenAI-format requests\n" +
		"#Input tokens: " + strconv.Itoa(wantLen0+wantLen1) + "\n#Output tokens: 263\n"; out.String() != want {
		t.Errorf("printed\n%q\nwant\n%q", out.String(), want)
	}

	global := &pyjson.Object{}
	global.Set("temperature", pyjson.Float(0.1))
	global.Set("seed", pyjson.Int(3))
	for _, c := range []struct {
		backend string
		row     int
		want    string
	}{
		{"sglang-oai-chat", 0, `{"model": "m", "messages": [{"role": "system", "content": "w1"}, {"role": "user", "content": "w2 w3"}], "max_completion_tokens": 7, "stream": true, ` +
			`"ignore_eos": true, "temperature": 0.5, "seed": 3, "tools": [{"type": "function", "function": {"name": "w4"}}], "stream_options": {"include_usage": true}}`},
		{"vllm-chat", 1, `{"model": "m", "messages": [{"role": "user", "content": "w6 w7 w8"}], "max_completion_tokens": 256, "stream": true, ` +
			`"ignore_eos": true, "temperature": 1, "seed": 3, "top_p": 0.9, "stream_options": {"include_usage": true}}`},
	} {
		if got := sentBody(t, c.backend, rows[c.row], global); got != c.want {
			t.Errorf("%s row %d body\n%s\nwant\n%s", c.backend, c.row, got, c.want)
		}
	}

	// --sharegpt-output-len wins over max_tokens; --num-prompts 0 reads all.
	rows, err = Load(context.Background(), Params{Name: "openai", Path: path, SharegptOutputLen: intp(11)}, openaiEnv(t, new(bytes.Buffer)))
	if err != nil || len(rows) != 3 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	for i, r := range rows {
		if r.OutputLen != 11 {
			t.Errorf("row %d: output len %d, want 11", i, r.OutputLen)
		}
	}
}

func TestOpenAIErrors(t *testing.T) {
	for _, c := range []struct {
		line string
		want string
	}{
		{`[1, 2]`, ": line 2: not a JSON object"},
		{`{"messages": "w1"}`, ": line 2: messages: want a list of message objects, got a string"},
		{`{"messages": [{"role": "user", "content": "w1"}], "max_tokens": "many"}`, `: line 2: max_tokens: want an integer, got "many"`},
		{`{"messages": [1]}`, ": line 2: messages[0]: want an object"},
	} {
		path := writeFile(t, "bad.jsonl", []byte(`{"messages": [{"role": "user", "content": "w1"}]}`+"\n"+c.line+"\n"))
		_, err := Load(context.Background(), Params{Name: "openai", Path: path}, openaiEnv(t, new(bytes.Buffer)))
		if err == nil || !strings.Contains(err.Error(), "--dataset-path "+path+c.want) {
			t.Errorf("%s: err %v, want %q", c.line, err, c.want)
		}
	}
	path := writeFile(t, "ok.jsonl", []byte(`{"messages": [{"role": "user", "content": "w1"}]}`+"\n"))
	_, err := Load(context.Background(), Params{Name: "openai", Path: path}, testEnv(1, new(bytes.Buffer)))
	if err == nil || !strings.Contains(err.Error(), "--dataset-name openai: tokenizer words has no chat template") {
		t.Errorf("no template: %v", err)
	}
	_, err = Load(context.Background(), Params{Name: "openai", Path: path + ".missing"}, openaiEnv(t, new(bytes.Buffer)))
	if err == nil || !strings.Contains(err.Error(), ".missing: no such file") {
		t.Errorf("missing file: %v", err)
	}
	_, err = Load(context.Background(), Params{Name: "openai", Path: path, Backend: backendOf("sglang")}, openaiEnv(t, new(bytes.Buffer)))
	if err == nil || !strings.Contains(err.Error(), "need a chat backend (sglang-oai-chat, vllm-chat or lmdeploy-chat), not --backend sglang") {
		t.Errorf("native backend: %v", err)
	}
	_, err = Load(context.Background(), Params{Name: "openai"}, openaiEnv(t, new(bytes.Buffer)))
	if err == nil || !strings.Contains(err.Error(), "--dataset-path must name") {
		t.Errorf("no path: %v", err)
	}
}
