package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

// Config is what transformers reads from a tokenizer's companion files
// (tokenizer_config.json, special_tokens_map.json, chat_template.jinja,
// chat_template.json) on top of tokenizer.json.
type Config struct {
	// The special tokens' text, "" when not set.
	BOS, EOS, UNK, PAD, SEP, CLS, Mask string
	// Additional is additional_special_tokens.
	Additional []string
	// AddBOS and AddEOS are add_bos_token and add_eos_token, nil when the
	// files do not set them. When either is set, the tokenizer.json
	// post-processor is replaced by a template adding BOS and EOS
	// accordingly, as transformers' update_post_processor does.
	AddBOS, AddEOS *bool
	// ChatTemplates holds the chat templates by name; a single template is
	// named "default".
	ChatTemplates map[string]string
	// CleanUp is clean_up_tokenization_spaces (false when absent).
	CleanUp bool
	// Class is tokenizer_class, for messages.
	Class string
}

// Files names a tokenizer's files on disk; "" means absent. Only
// Tokenizer is required.
type Files struct {
	Tokenizer         string // tokenizer.json
	Config            string // tokenizer_config.json
	SpecialTokensMap  string // special_tokens_map.json
	ChatTemplateJinja string // chat_template.jinja
	ChatTemplateJSON  string // chat_template.json
}

// The companion files, in the order they apply: a later one overrides.
const (
	fileTokenizer    = "tokenizer.json"
	fileConfig       = "tokenizer_config.json"
	fileSpecialMap   = "special_tokens_map.json"
	fileChatJSON     = "chat_template.json"
	fileChatJinja    = "chat_template.jinja"
	defaultTemplate  = "default"
	toolUseTemplate  = "tool_use"
	maxCompanionSize = 64 << 20
)

// filesInDir returns the Files present in dir, tokenizer.json included
// whether or not it exists.
func filesInDir(dir string) Files {
	opt := func(name string) string {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
		return ""
	}
	return Files{
		Tokenizer:         filepath.Join(dir, fileTokenizer),
		Config:            opt(fileConfig),
		SpecialTokensMap:  opt(fileSpecialMap),
		ChatTemplateJinja: opt(fileChatJinja),
		ChatTemplateJSON:  opt(fileChatJSON),
	}
}

// LoadConfig reads the companion files named in f (those that are set),
// applying them in transformers' order: tokenizer_config.json, then
// special_tokens_map.json (its tokens win), then chat_template.json and
// chat_template.jinja (a template file wins over the config's).
func LoadConfig(f Files) (Config, error) {
	var c Config
	read := func(path string) ([]byte, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if len(b) > maxCompanionSize {
			return nil, fmt.Errorf("%s: larger than %d MB", path, maxCompanionSize>>20)
		}
		return b, nil
	}
	if f.Config != "" {
		b, err := read(f.Config)
		if err != nil {
			return c, err
		}
		if c, err = ParseConfig(b); err != nil {
			return c, fmt.Errorf("%s: %w", f.Config, err)
		}
	}
	if f.SpecialTokensMap != "" {
		b, err := read(f.SpecialTokensMap)
		if err != nil {
			return c, err
		}
		if err := c.applySpecialTokensMap(b); err != nil {
			return c, fmt.Errorf("%s: %w", f.SpecialTokensMap, err)
		}
	}
	if f.ChatTemplateJSON != "" {
		b, err := read(f.ChatTemplateJSON)
		if err != nil {
			return c, err
		}
		if err := c.applyChatTemplateJSON(b); err != nil {
			return c, fmt.Errorf("%s: %w", f.ChatTemplateJSON, err)
		}
	}
	if f.ChatTemplateJinja != "" {
		b, err := read(f.ChatTemplateJinja)
		if err != nil {
			return c, err
		}
		c.setTemplate(defaultTemplate, string(b))
	}
	return c, nil
}

// ParseConfig parses tokenizer_config.json. Unknown fields are ignored;
// a known field of the wrong type is an error naming it.
func ParseConfig(data []byte) (Config, error) {
	var c Config
	fields, err := objectFields(data)
	if err != nil {
		return c, err
	}
	for _, t := range c.tokenFields() {
		if raw, ok := fields[t.name]; ok {
			if *t.dst, err = tokenText(t.name, raw); err != nil {
				return c, err
			}
		}
	}
	if raw, ok := fields["additional_special_tokens"]; ok {
		if c.Additional, err = tokenList("additional_special_tokens", raw); err != nil {
			return c, err
		}
	}
	for _, b := range []struct {
		name string
		dst  **bool
	}{{"add_bos_token", &c.AddBOS}, {"add_eos_token", &c.AddEOS}} {
		if raw, ok := fields[b.name]; ok {
			v, err := optBool(b.name, raw)
			if err != nil {
				return c, err
			}
			*b.dst = &v
		}
	}
	if raw, ok := fields["clean_up_tokenization_spaces"]; ok {
		if c.CleanUp, err = optBool("clean_up_tokenization_spaces", raw); err != nil {
			return c, err
		}
	}
	if raw, ok := fields["tokenizer_class"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &c.Class); err != nil {
			return c, fmt.Errorf("tokenizer_class: want a string, got %s", jsonKind(raw))
		}
	}
	if raw, ok := fields["chat_template"]; ok {
		if err := c.parseChatTemplate(raw); err != nil {
			return c, err
		}
	}
	return c, nil
}

type tokenField struct {
	name string
	dst  *string
}

func (c *Config) tokenFields() []tokenField {
	return []tokenField{
		{"bos_token", &c.BOS}, {"eos_token", &c.EOS}, {"unk_token", &c.UNK}, {"sep_token", &c.SEP},
		{"pad_token", &c.PAD}, {"cls_token", &c.CLS}, {"mask_token", &c.Mask},
	}
}

// applySpecialTokensMap overrides the tokens with those of
// special_tokens_map.json, and appends its additional_special_tokens to
// the config's (without repeats), as transformers' from_pretrained does.
func (c *Config) applySpecialTokensMap(data []byte) error {
	fields, err := objectFields(data)
	if err != nil {
		return err
	}
	for _, t := range c.tokenFields() {
		if raw, ok := fields[t.name]; ok {
			if *t.dst, err = tokenText(t.name, raw); err != nil {
				return err
			}
		}
	}
	if raw, ok := fields["additional_special_tokens"]; ok {
		extra, err := tokenList("additional_special_tokens", raw)
		if err != nil {
			return err
		}
		for _, t := range extra {
			if !slices.Contains(c.Additional, t) {
				c.Additional = append(c.Additional, t)
			}
		}
	}
	return nil
}

// applyChatTemplateJSON reads chat_template.json: {"chat_template": ...}.
func (c *Config) applyChatTemplateJSON(data []byte) error {
	fields, err := objectFields(data)
	if err != nil {
		return err
	}
	raw, ok := fields["chat_template"]
	if !ok {
		return fmt.Errorf("no chat_template field")
	}
	return c.parseChatTemplate(raw)
}

// parseChatTemplate reads chat_template: a string, or a list of
// {"name": ..., "template": ...}.
func (c *Config) parseChatTemplate(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		c.setTemplate(defaultTemplate, s)
		return nil
	}
	var list []struct {
		Name     *string `json:"name"`
		Template *string `json:"template"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return fmt.Errorf("chat_template: want a string or a list of {\"name\", \"template\"}, got %s", jsonKind(raw))
	}
	for i, t := range list {
		if t.Name == nil || t.Template == nil {
			return fmt.Errorf("chat_template[%d]: want {\"name\": string, \"template\": string}", i)
		}
		c.setTemplate(*t.Name, *t.Template)
	}
	return nil
}

func (c *Config) setTemplate(name, text string) {
	if c.ChatTemplates == nil {
		c.ChatTemplates = map[string]string{}
	}
	c.ChatTemplates[name] = text
}

// clone returns a copy that shares nothing mutable with c.
func (c Config) clone() Config {
	c.Additional = slices.Clone(c.Additional)
	c.ChatTemplates = maps.Clone(c.ChatTemplates)
	if c.AddBOS != nil {
		v := *c.AddBOS
		c.AddBOS = &v
	}
	if c.AddEOS != nil {
		v := *c.AddEOS
		c.AddEOS = &v
	}
	return c
}

func objectFields(data []byte) (map[string]json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if fields == nil {
		return nil, fmt.Errorf("not a JSON object: null")
	}
	return fields, nil
}

// tokenText reads a special token: a string, null, or an AddedToken dict
// {"content": ...} (with "__type": "AddedToken" in older files).
func tokenText(field string, raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var tok struct {
		Content *string `json:"content"`
	}
	if err := json.Unmarshal(raw, &tok); err != nil || tok.Content == nil {
		return "", fmt.Errorf("%s: want a string or {\"content\": string}, got %s", field, jsonKind(raw))
	}
	return *tok.Content, nil
}

func tokenList(field string, raw json.RawMessage) ([]string, error) {
	if isNull(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("%s: want a list, got %s", field, jsonKind(raw))
	}
	out := make([]string, 0, len(items))
	for i, item := range items {
		t, err := tokenText(fmt.Sprintf("%s[%d]", field, i), item)
		if err != nil {
			return nil, err
		}
		if t != "" {
			out = append(out, t)
		}
	}
	return out, nil
}

// optBool reads a bool; null counts as false, as Python's truth test.
func optBool(field string, raw json.RawMessage) (bool, error) {
	if isNull(raw) {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, fmt.Errorf("%s: want true or false, got %s", field, jsonKind(raw))
	}
	return b, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// jsonKind names the kind of a JSON value, for messages.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "a list"
	case 't', 'f':
		return "a bool"
	case 'n':
		return "null"
	}
	return "a number"
}
