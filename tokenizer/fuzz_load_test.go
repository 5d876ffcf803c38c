package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadFiles loads a tokenizer directory of arbitrary tokenizer.json,
// tokenizer_config.json, special_tokens_map.json and chat_template.json
// (the last two left out when empty), as --tokenizer <dir> does: it loads,
// or fails with one line naming the tokenizer, never panics; and what
// loads encodes, decodes and renders its chat templates.
func FuzzLoadFiles(f *testing.F) {
	bpe := []byte(tinyBPE(""))
	f.Add(bpe, []byte(`{"bos_token": "<s>", "eos_token": {"content": "</s>"}, "add_bos_token": true, "add_eos_token": false,
		"clean_up_tokenization_spaces": true, "additional_special_tokens": ["<extra>"],
		"chat_template": "{% for m in messages %}<s>{{ m['role'] }}: {{ m.content }}</s>{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}"}`),
		[]byte(`{"eos_token": "</s>", "unk_token": {"content": "<unk>", "lstrip": false}}`),
		[]byte(`{"chat_template": "{{ bos_token }}{{ messages | length }}"}`))
	f.Add(bpe, []byte(`{"chat_template": [{"name": "default", "template": "{{ messages[0].content }}"}, {"name": "tool_use", "template": "x"}]}`), []byte{}, []byte{})
	f.Add(bpe, []byte(`{"add_bos_token": true, "bos_token": null}`), []byte(`{"bos_token": 3}`), []byte(`[`))
	f.Add([]byte(`{"model":{"type":"WordPiece","vocab":{"[UNK]":0,"a":1,"##b":2}},"pre_tokenizer":{"type":"BertPreTokenizer"},"normalizer":{"type":"BertNormalizer"},"decoder":{"type":"WordPiece"}}`),
		[]byte(`{"model_max_length": 1e30, "do_lower_case": true}`), []byte{}, []byte{})
	f.Add([]byte(`{"model":{"type":"Unigram","unk_id":0,"vocab":[["<unk>",0],["a",-1.5]]}}`), []byte(`not json`), []byte{}, []byte{})
	// A worker process runs one input at a time: the files can be reused.
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, tok, config, special, chat []byte) {
		write := func(name string, data []byte) string {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			return path
		}
		files := Files{Tokenizer: write(fileTokenizer, tok), Config: write(fileConfig, config)}
		if len(special) > 0 {
			files.SpecialTokensMap = write(fileSpecialMap, special)
		}
		if len(chat) > 0 {
			files.ChatTemplateJSON = write(fileChatJSON, chat)
		}
		p, err := LoadFiles("fuzz", files)
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "tokenizer fuzz") {
				t.Fatalf("error %q: want one line naming the tokenizer", msg)
			}
			return
		}
		for _, s := range []string{"", "hello world", " <s>hello</s> <extra>", "中文 😀 12"} {
			p.Decode(p.Encode(s, true))
			p.Count(s)
		}
		msgs := []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hello"}}
		for _, name := range p.ChatTemplateNames() {
			_, _ = p.ApplyChatTemplate(msgs, ChatOptions{Template: name, AddGenerationPrompt: true})
		}
	})
}
