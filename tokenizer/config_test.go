package tokenizer

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func boolp(b bool) *bool { return &b }

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name, json string
		want       Config
	}{
		{"empty", `{}`, Config{}},
		{"strings", `{"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
			"sep_token": "[SEP]", "cls_token": "[CLS]", "mask_token": "[MASK]", "tokenizer_class": "LlamaTokenizer"}`,
			Config{BOS: "<s>", EOS: "</s>", UNK: "<unk>", PAD: "<pad>", SEP: "[SEP]", CLS: "[CLS]", Mask: "[MASK]", Class: "LlamaTokenizer"}},
		{"added token dicts", `{"bos_token": {"__type": "AddedToken", "content": "<｜begin▁of▁sentence｜>", "lstrip": false,
			"normalized": true, "rstrip": false, "single_word": false}, "eos_token": {"content": "</s>"}, "unk_token": null}`,
			Config{BOS: "<｜begin▁of▁sentence｜>", EOS: "</s>"}},
		{"add flags", `{"add_bos_token": true, "add_eos_token": false}`, Config{AddBOS: boolp(true), AddEOS: boolp(false)}},
		{"add flag null", `{"add_bos_token": null}`, Config{AddBOS: boolp(false)}},
		{"additional", `{"additional_special_tokens": ["<a>", {"content": "<b>", "special": true}, null]}`,
			Config{Additional: []string{"<a>", "<b>"}}},
		{"clean up", `{"clean_up_tokenization_spaces": true}`, Config{CleanUp: true}},
		{"template string", `{"chat_template": "{{ x }}"}`, Config{ChatTemplates: map[string]string{"default": "{{ x }}"}}},
		{"template list", `{"chat_template": [{"name": "default", "template": "D"}, {"name": "rag", "template": "R"}]}`,
			Config{ChatTemplates: map[string]string{"default": "D", "rag": "R"}}},
		{"template null", `{"chat_template": null}`, Config{}},
		{"unknown fields", `{"model_max_length": 1e30, "added_tokens_decoder": {"0": {"content": "<unk>"}}, "extra_special_tokens": {}}`, Config{}},
	}
	for _, tt := range tests {
		got, err := ParseConfig([]byte(tt.json))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
}

func TestParseConfigErrors(t *testing.T) {
	for json, want := range map[string]string{
		`[]`:                                  "not a JSON object",
		`null`:                                "not a JSON object: null",
		`{"bos_token": `:                      "not a JSON object",
		`{"bos_token": 1}`:                    `bos_token: want a string or {"content": string}, got a number`,
		`{"eos_token": {"text": "x"}}`:        `eos_token: want a string or {"content": string}, got an object`,
		`{"add_bos_token": "yes"}`:            "add_bos_token: want true or false, got a string",
		`{"clean_up_tokenization_spaces": 1}`: "clean_up_tokenization_spaces: want true or false",
		`{"additional_special_tokens": "x"}`:  "additional_special_tokens: want a list, got a string",
		`{"additional_special_tokens": [1]}`:  "additional_special_tokens[0]: want a string",
		`{"chat_template": {"a": "b"}}`:       "chat_template: want a string or a list",
		`{"chat_template": [{"name": "a"}]}`:  `chat_template[0]: want {"name": string, "template": string}`,
		`{"tokenizer_class": 3}`:              "tokenizer_class: want a string, got a number",
	} {
		_, err := ParseConfig([]byte(json))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseConfig(%s): %v, want an error containing %q", json, err, want)
		}
	}
}

// TestLoadConfigOrder: special_tokens_map.json overrides the config's
// tokens and adds to its additional tokens; chat_template.json overrides
// the config's template and chat_template.jinja overrides both.
func TestLoadConfigOrder(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"tokenizer_config.json":   `{"bos_token": "<s>", "eos_token": "</s>", "additional_special_tokens": ["<a>"], "chat_template": "config"}`,
		"special_tokens_map.json": `{"eos_token": "<eot>", "pad_token": {"content": "<pad>"}, "additional_special_tokens": ["<b>", "<a>"]}`,
		"chat_template.json":      `{"chat_template": [{"name": "default", "template": "json"}, {"name": "tool_use", "template": "tools"}]}`,
	})
	f := filesInDir(dir)
	c, err := LoadConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{BOS: "<s>", EOS: "<eot>", PAD: "<pad>", Additional: []string{"<a>", "<b>"},
		ChatTemplates: map[string]string{"default": "json", "tool_use": "tools"}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
	writeFiles(t, dir, map[string]string{"chat_template.jinja": "jinja"})
	c, err = LoadConfig(filesInDir(dir))
	if err != nil || c.ChatTemplates["default"] != "jinja" || c.ChatTemplates["tool_use"] != "tools" {
		t.Errorf("with chat_template.jinja: %+v, %v", c.ChatTemplates, err)
	}

	writeFiles(t, dir, map[string]string{"special_tokens_map.json": `{"bos_token": [1]}`})
	_, err = LoadConfig(filesInDir(dir))
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "special_tokens_map.json")+": bos_token") {
		t.Errorf("bad special_tokens_map.json: %v", err)
	}
	writeFiles(t, dir, map[string]string{"special_tokens_map.json": `{}`, "chat_template.json": `{"other": 1}`})
	_, err = LoadConfig(filesInDir(dir))
	if err == nil || !strings.Contains(err.Error(), "chat_template.json: no chat_template field") {
		t.Errorf("chat_template.json without the field: %v", err)
	}
}

// TestPostTemplate follows transformers' update_post_processor: only an
// explicit add_bos_token/add_eos_token rebuilds the post-processor, and a
// token that is not set is not added.
func TestPostTemplate(t *testing.T) {
	for _, tt := range []struct {
		cfg  Config
		want []string
	}{
		{Config{BOS: "<s>", EOS: "</s>"}, nil},
		{Config{BOS: "<s>", EOS: "</s>", AddBOS: boolp(true)}, []string{"<s>|</s>|true|false"}},
		{Config{BOS: "<s>", EOS: "</s>", AddBOS: boolp(false), AddEOS: boolp(true)}, []string{"<s>|</s>|false|true"}},
		{Config{EOS: "</s>", AddBOS: boolp(true), AddEOS: boolp(true)}, []string{"|</s>|false|true"}},
		{Config{AddBOS: boolp(false)}, []string{"||false|false"}},
	} {
		fe := newFakeEngine("<s>", "</s>")
		if _, err := newPretrained("x", fe, tt.cfg); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fe.post, tt.want) {
			t.Errorf("%+v: SetPostTemplate calls %v, want %v", tt.cfg, fe.post, tt.want)
		}
	}
	fe := newFakeEngine()
	fe.postErr = errors.New("boom")
	_, err := newPretrained("x", fe, Config{BOS: "<s>", AddBOS: boolp(true)})
	if err == nil || !strings.Contains(err.Error(), "add_bos_token/add_eos_token: boom") {
		t.Errorf("SetPostTemplate error: %v", err)
	}
}

// TestPretrainedTokenizer checks the Tokenizer methods Pretrained takes
// from the config rather than the engine, and that Config is a copy.
func TestPretrainedTokenizer(t *testing.T) {
	fe := newFakeEngine("<s>")
	p, err := newPretrained("my/tok", fe, Config{BOS: "<s>", AddBOS: boolp(true), Additional: []string{"<a>"},
		ChatTemplates: map[string]string{"default": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "my/tok" || p.BOSToken() != "<s>" || p.NumSpecialTokensToAdd() != 1 || p.VocabSize() != fe.vocab {
		t.Errorf("Name %q BOSToken %q NumSpecialTokensToAdd %d", p.Name(), p.BOSToken(), p.NumSpecialTokensToAdd())
	}
	c := p.Config()
	c.Additional[0] = "changed"
	c.ChatTemplates["default"] = "changed"
	*c.AddBOS = false
	if c2 := p.Config(); c2.Additional[0] != "<a>" || c2.ChatTemplates["default"] != "x" || !*c2.AddBOS {
		t.Error("Config returned shared state")
	}
	if got := fmt.Sprint(p.Encode("a", true)); got != fmt.Sprint([]int{fe.special["<s>"], 'a' + 10}) {
		t.Errorf("Encode = %s", got)
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{`{}`, `{"bos_token": {"content": "<s>"}, "chat_template": [{"name": "a", "template": "b"}]}`,
		`{"add_bos_token": null, "additional_special_tokens": [null, "x"]}`, `[`, `{"chat_template": 1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		// Whatever parses must load and render without panicking.
		p, err := newPretrained("fuzz", newFakeEngine("<s>"), c)
		if err != nil {
			return
		}
		for name := range c.ChatTemplates {
			_, _ = p.ApplyChatTemplate([]Message{{Role: "user", Content: "hi"}}, ChatOptions{Template: name})
		}
	})
}
