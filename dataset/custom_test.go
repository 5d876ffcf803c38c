package dataset

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"benchserve/internal/py/pyjson"
	"benchserve/internal/py/pyrand"
)

// customPNG writes a w×h PNG into dir and returns its bytes.
func customPNG(t *testing.T, path string, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestCustomText(t *testing.T) {
	data := strings.Join([]string{
		`{"conversations": [{"role": "user", "content": "w1 w2 w3"}, {"role": "assistant", "content": "w4 w5"}]}`,
		`{"conversation": [{"from": "human", "value": "w6 Assistant:"}, {"from": "gpt", "value": "w7 w8 w9"}]}`,
		`{"conversations": [{"content": "w10"}]}`,
		`not json`,
		``,
		`{"conversations": [{"content": ""}, {"content": "w11"}], "image": null}`,
		`{"conversations": [{"value": "w12 w13"}, {"value": "w14"}, {"value": "w15"}], "id": 3}`,
	}, "\n")
	path := writeFile(t, "c.jsonl", []byte(data))
	prompts := []string{"w1 w2 w3", "w6 Assistant:", "", "w12 w13"}
	completions := []string{"w4 w5", "w7 w8 w9", "w11", "w14"}
	for _, suffix := range []string{"", " w20"} {
		var out bytes.Buffer
		env := testEnv(5, &out)
		rows, err := Load(context.Background(), Params{Name: "custom", Path: path, NumPrompts: 10, PromptSuffix: suffix}, env)
		if err != nil {
			t.Fatal(err)
		}
		order := []int{0, 1, 2, 3}
		pyrand.NewPython(5).Shuffle(4, func(i, j int) { order[i], order[j] = order[j], order[i] })
		var want []Row
		for _, k := range order {
			p := prompts[k]
			if suffix != "" {
				p = strings.TrimSuffix(p, "Assistant:") + suffix + "Assistant:"
			}
			in, o := len(wordTok{}.Encode(p, true)), len(wordTok{}.Encode(completions[k], true))
			if in < 2 || o < 2 {
				continue
			}
			want = append(want, Row{Text: p, PromptLen: in, OutputLen: o, TextPromptLen: in})
		}
		if len(rows) != len(want) {
			t.Fatalf("suffix %q: rows %+v, want %+v", suffix, rows, want)
		}
		for i := range want {
			if rows[i].Text != want[i].Text || rows[i].PromptLen != want[i].PromptLen || rows[i].OutputLen != want[i].OutputLen || rows[i].TextPromptLen != want[i].TextPromptLen || rows[i].Images != nil {
				t.Errorf("suffix %q: row %d = %+v, want %+v", suffix, i, rows[i], want[i])
			}
		}
		wantOut := "Warning: --dataset-path " + path + ": line 4: invalid JSON, skipped\n" +
			"Warning: --dataset-path " + path + " gave only " + strconv.Itoa(len(want)) + " of the 10 prompts asked for by --num-prompts\n" + sums(rows)
		if out.String() != wantOut {
			t.Errorf("printed\n%q\nwant\n%q", out.String(), wantOut)
		}
	}

	// --apply-chat-template applies to text rows as in sharegpt.
	env := Env{Tok: chatWordTok(t, wordChatTemplate), Py: pyrand.NewPython(5), NP: pyrand.NewNumPy(5), Out: new(bytes.Buffer)}
	rows, err := Load(context.Background(), Params{Name: "custom", Path: path, NumPrompts: 1, ApplyChatTemplate: true}, env)
	if err != nil || len(rows) != 1 || !strings.HasPrefix(rows[0].Text, "<|user|> w") || !strings.HasSuffix(rows[0].Text, " <|assistant|>") {
		t.Errorf("chat template: %+v, %v", rows, err)
	}
}

func TestCustomImage(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "img"), 0o755); err != nil {
		t.Fatal(err)
	}
	pngData := customPNG(t, filepath.Join(dir, "img", "a.png"), 32, 16)
	customPNG(t, filepath.Join(dir, "img", "b.JPEG"), 8, 8) // a PNG named .JPEG: the MIME type comes from the name
	os.WriteFile(filepath.Join(dir, "img", "c.webp"), []byte("RIFF....WEBP"), 0o644)
	data := strings.Join([]string{
		`{"conversations": [{"content": "<image 1> w1 w2 "}, {"content": "w3 w4"}], "image": "img/a.png"}`,
		`{"conversations": [{"content": "w5"}, {"content": "w6"}], "image": "img/missing.png"}`,
		`{"conversations": [{"content": "w7 w8"}, {"content": "w9"}], "image": "img/c.webp"}`,
		`{"conversations": [{"content": "w10 <image 1>"}, {"content": "w11 w12 w13"}], "image": "` + filepath.Join(dir, "img", "b.JPEG") + `"}`,
	}, "\n")
	path := filepath.Join(dir, "c.jsonl")
	os.WriteFile(path, []byte(data), 0o644)
	var out bytes.Buffer
	env := testEnv(2, &out)
	rows, err := Load(context.Background(), Params{Name: "custom", Path: path, NumPrompts: 4, Backend: backendOf("sglang-oai-chat"), SharegptOutputLen: intp(9)}, env)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2: %+v\n%s", len(rows), rows, out.String())
	}
	byText := map[string]Row{}
	for _, r := range rows {
		byText[r.Text] = r
		if r.OutputLen != 9 || r.VisionPromptLen <= 0 || r.PromptLen != r.TextPromptLen+r.VisionPromptLen || len(r.Images) != 1 {
			t.Errorf("row %+v", r)
		}
	}
	a, ok := byText["w1 w2"]
	if !ok || a.Images[0] != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(pngData) {
		t.Errorf("rows %v: no row for a.png with its data URI", rows)
	}
	if b, ok := byText["w10"]; !ok || !strings.HasPrefix(b.Images[0], "data:image/jpeg;base64,") {
		t.Errorf("rows %v: no row for b.JPEG as image/jpeg", rows)
	}
	for _, want := range []string{"Error handling multimodal row: open " + filepath.Join(dir, "img", "missing.png"), "Error handling multimodal row: " + filepath.Join(dir, "img", "c.webp") + ": cannot identify image file"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed %q, want a line %q", out.String(), want)
		}
	}
	wantBody := `{"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "` + a.Images[0] + `"}}, {"type": "text", "text": "w1 w2"}]}], "max_completion_tokens": 9, "stream": true, "temperature": 0.0, "ignore_eos": true, "stream_options": {"include_usage": true}}`
	if got := sentBody(t, "sglang-oai-chat", a, &pyjson.Object{}); got != wantBody {
		t.Errorf("body\n%s\nwant\n%s", got, wantBody)
	}

	// A backend that takes no images: every image row is reported and skipped.
	out.Reset()
	rows, err = Load(context.Background(), Params{Name: "custom", Path: path, NumPrompts: 4, Backend: backendOf("vllm")}, testEnv(2, &out))
	if err != nil || len(rows) != 0 || strings.Count(out.String(), "Error handling multimodal row: --backend vllm") != 4 {
		t.Errorf("vllm: %+v, %v, printed %q", rows, err, out.String())
	}
}

func TestCustomErrors(t *testing.T) {
	for _, c := range []struct {
		line string
		want string
	}{
		{`[1]`, ": line 2: not a JSON object but a list"},
		{`{"conversations": {"a": 1}}`, ": line 2: conversations: want a list of turns, got a dict"},
		{`{"conversations": null}`, ": line 2: conversations: want a list of turns, got null"},
		{`{"conversation": ["a", "b"]}`, ": line 2: conversation[0]: want an object, got a string"},
		{`{"conversations": [{"content": 5}, {"content": "w1"}]}`, ": line 2: conversations[0].content: want a string, got a number"},
		{`{"conversations": [{"content": "w1"}, {"value": null}]}`, ": line 2: conversations[1].value: want a string, got null"},
		{`{"conversations": [{"content": "w1"}, {"value": "w2"}], "image": 3}`, ": line 2: image: want a file path, got a number"},
	} {
		path := writeFile(t, "c.jsonl", []byte(`{"conversations": [{"content": "w1"}, {"content": "w2"}]}`+"\n"+c.line+"\n"))
		_, err := Load(context.Background(), Params{Name: "custom", Path: path, NumPrompts: 1}, testEnv(1, new(bytes.Buffer)))
		if err == nil || !strings.Contains(err.Error(), "--dataset-path "+path+c.want) {
			t.Errorf("%s: err %v, want %q", c.line, err, c.want)
		}
	}
	path := writeFile(t, "c.jsonl", []byte(`{"conversations": [{"content": "w1"}, {"content": "w2"}]}`))
	for _, c := range []struct {
		p    Params
		want string
	}{
		{Params{Name: "custom", Path: path, TokenizePrompt: true}, "--tokenize-prompt: not supported by --dataset-name custom"},
		{Params{Name: "custom", Path: path, SharegptOutputLen: intp(2)}, "--sharegpt-output-len 2: too small"},
		{Params{Name: "custom"}, "--dataset-path must name a JSONL file"},
		{Params{Name: "custom", Path: path + "x"}, path + "x: no such file"},
	} {
		_, err := Load(context.Background(), c.p, testEnv(1, new(bytes.Buffer)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err %v, want %q", err, c.want)
		}
	}
}
