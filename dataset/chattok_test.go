package dataset

import (
	"encoding/json"
	"fmt"
	"testing"

	"benchserve/tokenizer"
)

// wordChatTemplate is a small template in the usual shape: BOS, each message
// as a role tag and its content, then the assistant's tag.
const wordChatTemplate = "{{ bos_token }}{% for m in messages %}<|{{ m.role }}|> {{ m.content }} {% endfor %}" +
	"{% if add_generation_prompt %}<|assistant|>{% endif %}"

// chatWordTok is a Hugging Face tokenizer with wordTok's vocabulary and a
// chat template: "<s>" (BOS, added to each encoding) 0, "<unk>" 1,
// "w0".."w99" 2..101, then "</s>" 102, "<|user|>" 103, "<|assistant|>" 104
// and "<|system|>" 105, all special; words split on whitespace.
func chatWordTok(t testing.TB, template string) *tokenizer.Pretrained {
	t.Helper()
	vocab := map[string]int{"<s>": 0, "<unk>": 1}
	for i := range 100 {
		vocab[fmt.Sprintf("w%d", i)] = i + 2
	}
	type added struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	}
	var toks []added
	for i, s := range []string{"<s>", "<unk>"} {
		toks = append(toks, added{i, s, true})
	}
	for i, s := range []string{"</s>", "<|user|>", "<|assistant|>", "<|system|>"} {
		toks = append(toks, added{102 + i, s, true})
	}
	doc := map[string]any{
		"version":       "1.0",
		"added_tokens":  toks,
		"pre_tokenizer": map[string]any{"type": "WhitespaceSplit"},
		"model":         map[string]any{"type": "WordLevel", "vocab": vocab, "unk_token": "<unk>"},
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	hf, err := tokenizer.ParseHF(data, "chatwords")
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	cfg := tokenizer.Config{BOS: "<s>", EOS: "</s>", UNK: "<unk>", AddBOS: &yes}
	if template != "" {
		cfg.ChatTemplates = map[string]string{"default": template}
	}
	tok, err := tokenizer.NewPretrained("chatwords", hf, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestChatWordTok(t *testing.T) {
	tok := chatWordTok(t, wordChatTemplate)
	if got := tok.Encode("w1 <|user|> w99 zz", true); fmt.Sprint(got) != "[0 3 103 101 1]" {
		t.Errorf("encode = %v", got)
	}
	if got := tok.NumSpecialTokensToAdd(); got != 1 {
		t.Errorf("special tokens to add = %d", got)
	}
	s, err := tok.ApplyChatTemplate([]tokenizer.Message{{Role: "user", Content: "w1 w2"}}, tokenizer.ChatOptions{AddGenerationPrompt: true})
	if want := "<s><|user|> w1 w2 <|assistant|>"; err != nil || s != want {
		t.Errorf("template = %q, %v; want %q", s, err, want)
	}
}
