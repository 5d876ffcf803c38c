package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ardanlabs/jinja"
)

// Message is one chat message. Datasets that build messages set Role and
// Content; those that read them (OpenAI-style JSON with content parts,
// tool calls and the like) set Raw, the whole message as a JSON object,
// which then takes the place of Role and Content.
type Message struct {
	Role, Content string
	Raw           json.RawMessage
}

// MessagesFromJSON splits a JSON array of message objects into Messages.
func MessagesFromJSON(data []byte) ([]Message, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		return nil, fmt.Errorf("messages: want a JSON array of message objects: %v", err)
	}
	out := make([]Message, len(items))
	for i, item := range items {
		if b := bytes.TrimSpace(item); len(b) == 0 || b[0] != '{' {
			return nil, fmt.Errorf("messages[%d]: want an object, got %s", i, jsonKind(item))
		}
		out[i] = Message{Raw: item}
	}
	return out, nil
}

// ChatOptions are apply_chat_template's arguments.
type ChatOptions struct {
	// AddGenerationPrompt ends the text with the assistant turn's header.
	AddGenerationPrompt bool
	// Tools is a JSON array of tool schemas; nil passes tools=None.
	Tools json.RawMessage
	// Extra holds further template variables, such as enable_thinking.
	// A json.RawMessage value is decoded keeping its key order.
	Extra map[string]any
	// Template picks a template: the name of one of the tokenizer's, or
	// the text of a template to use instead, as transformers' chat_template
	// argument. "" picks "tool_use" when tools are given and the tokenizer
	// has one, else "default".
	Template string
}

// ChatTemplater is a Tokenizer that can render chat templates, as
// transformers' apply_chat_template with tokenize=False. Datasets use it
// when the tokenizer provides it.
type ChatTemplater interface {
	ApplyChatTemplate(messages []Message, opt ChatOptions) (string, error)
}

// ErrNoChatTemplate is returned (wrapped) when the tokenizer has no chat
// template and none is passed.
var ErrNoChatTemplate = errors.New("no chat template")

// NoChatTemplateWarning is the reference's warning for a Hugging Face
// tokenizer without a chat template (a base model, whose gibberish may be
// counted wrong), as it prints it: a blank line, two lines, a blank
// line. "" for a tokenizer with one, or one that is not a Hugging Face
// tokenizer (a built-in encoding has no template to lack).
func NoChatTemplateWarning(tok Tokenizer) string {
	h, ok := tok.(interface{ HasChatTemplate() bool })
	if !ok || h.HasChatTemplate() {
		return ""
	}
	return "\nWARNING It is recommended to use the `Chat` or `Instruct` model for benchmarking.\n" +
		"Because when the tokenizer counts the output tokens, if there is gibberish, it might count incorrectly.\n\n"
}

// ApplyChatTemplate renders messages with the tokenizer's chat template,
// with the variables transformers passes: messages, tools, documents
// (None), add_generation_prompt, the special tokens (bos_token,
// eos_token, ...), opt.Extra, and the helpers raise_exception and
// strftime_now.
func (p *Pretrained) ApplyChatTemplate(messages []Message, opt ChatOptions) (string, error) {
	name, src, err := p.pickTemplate(opt)
	if err != nil {
		return "", err
	}
	t, err := p.compiled(src)
	if err != nil {
		return "", fmt.Errorf("tokenizer %s: chat template %q: %v", p.name, name, err)
	}
	vars, err := p.chatVars(messages, opt)
	if err != nil {
		return "", fmt.Errorf("tokenizer %s: chat template: %v", p.name, err)
	}
	out, err := t.RenderValues(vars)
	if err != nil {
		return "", fmt.Errorf("tokenizer %s: chat template %q failed: %v", p.name, name, err)
	}
	return out, nil
}

// ApplyChatTemplateIDs is apply_chat_template with tokenize=True: the
// rendered text encoded without special tokens added (the template
// writes them).
func (p *Pretrained) ApplyChatTemplateIDs(messages []Message, opt ChatOptions) ([]int, error) {
	text, err := p.ApplyChatTemplate(messages, opt)
	if err != nil {
		return nil, err
	}
	return p.Encode(text, false), nil
}

// ChatTemplateNames lists the tokenizer's templates by name, sorted.
func (p *Pretrained) ChatTemplateNames() []string {
	names := make([]string, 0, len(p.cfg.ChatTemplates))
	for n := range p.cfg.ChatTemplates {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// pickTemplate is transformers' get_chat_template.
func (p *Pretrained) pickTemplate(opt ChatOptions) (name, src string, err error) {
	ts := p.cfg.ChatTemplates
	_, hasToolUse := ts[toolUseTemplate]
	_, hasDefault := ts[defaultTemplate]
	if opt.Template != "" {
		if s, ok := ts[opt.Template]; ok {
			return opt.Template, s, nil
		}
		return "(given)", opt.Template, nil
	}
	switch {
	case len(ts) == 0:
		return "", "", fmt.Errorf("tokenizer %s: %w: its tokenizer_config.json sets no chat_template and there is no chat_template.jinja", p.name, ErrNoChatTemplate)
	case opt.Tools != nil && hasToolUse:
		return toolUseTemplate, ts[toolUseTemplate], nil
	case hasDefault:
		return defaultTemplate, ts[defaultTemplate], nil
	}
	return "", "", fmt.Errorf("tokenizer %s: %w named \"default\": it has several (%s); pick one by name",
		p.name, ErrNoChatTemplate, strings.Join(p.ChatTemplateNames(), ", "))
}

// chatTemplate is a compiled template, or the error compiling it.
type chatTemplate struct {
	t   *jinja.Template
	err error
}

// compiled compiles src once and keeps it: compiled templates are safe
// for concurrent renders.
func (p *Pretrained) compiled(src string) (*jinja.Template, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.templates[src]; ok {
		return c.t, c.err
	}
	t, err := jinja.Compile(rewriteTemplate(src))
	if p.templates == nil {
		p.templates = map[string]*chatTemplate{}
	}
	p.templates[src] = &chatTemplate{t, err}
	return t, err
}

// reservedVars are set by apply_chat_template itself; Python refuses them
// as extra kwargs ("got multiple values").
var reservedVars = []string{"messages", "tools", "documents", "add_generation_prompt"}

// chatVars builds the template's variables as transformers does:
// render(messages=..., tools=..., documents=..., add_generation_prompt=...,
// **{**special_tokens_map, **kwargs}).
func (p *Pretrained) chatVars(messages []Message, opt ChatOptions) (map[string]jinja.Value, error) {
	vars := map[string]jinja.Value{}
	// transformers' helpers. The engine has its own raise_exception and
	// strftime_now; these variables shadow them.
	vars["raise_exception"] = jinja.NewCallable("raise_exception", raiseException)
	now := p.now
	vars["strftime_now"] = jinja.NewCallable("strftime_now", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
		if len(args) != 1 || !args[0].IsString() {
			return jinja.Undefined(), errors.New("strftime_now(format) takes one string")
		}
		return jinja.NewString(strftime(now(), args[0].AsString())), nil
	})
	for name, fn := range pyFilters {
		vars[renamePrefix+name] = jinja.NewCallable(name, fn)
	}
	vars[printName] = jinja.NewCallable("print", printFilter)
	c := p.cfg
	for _, t := range []struct{ name, text string }{
		{"bos_token", c.BOS}, {"eos_token", c.EOS}, {"unk_token", c.UNK}, {"sep_token", c.SEP},
		{"pad_token", c.PAD}, {"cls_token", c.CLS}, {"mask_token", c.Mask},
	} {
		if t.text != "" {
			vars[t.name] = jinja.NewString(t.text)
		}
	}
	if len(c.Additional) > 0 {
		items := make([]jinja.Value, len(c.Additional))
		for i, t := range c.Additional {
			items[i] = jinja.NewString(t)
		}
		vars["additional_special_tokens"] = jinja.NewList(items)
	}
	for k, v := range opt.Extra {
		if slices.Contains(reservedVars, k) {
			return nil, fmt.Errorf("extra variable %s: set by the call itself", k)
		}
		val, err := goValue(v)
		if err != nil {
			return nil, fmt.Errorf("extra variable %s: %v", k, err)
		}
		vars[k] = val
	}

	msgs := make([]jinja.Value, len(messages))
	for i, m := range messages {
		if m.Raw == nil {
			d := jinja.NewDict()
			d.AsDict().Set("role", jinja.NewString(m.Role))
			d.AsDict().Set("content", jinja.NewString(m.Content))
			msgs[i] = d
			continue
		}
		v, err := jsonValue(m.Raw)
		if err != nil {
			return nil, fmt.Errorf("messages[%d]: %v", i, err)
		}
		if !v.IsDict() {
			return nil, fmt.Errorf("messages[%d]: want an object, got %s", i, jsonKind(m.Raw))
		}
		msgs[i] = v
	}
	vars["messages"] = jinja.NewList(msgs)
	vars["tools"] = jinja.None()
	if opt.Tools != nil {
		v, err := jsonValue(opt.Tools)
		if err != nil {
			return nil, fmt.Errorf("tools: %v", err)
		}
		if !v.IsList() && !v.IsNone() {
			return nil, fmt.Errorf("tools: want a JSON array, got %s", jsonKind(opt.Tools))
		}
		vars["tools"] = v
	}
	vars["documents"] = jinja.None()
	vars["add_generation_prompt"] = jinja.NewBool(opt.AddGenerationPrompt)

	return vars, nil
}

// raiseException is transformers' raise_exception: the template's message
// becomes the error.
func raiseException(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 {
		return jinja.Undefined(), errors.New("raise_exception() called without a message")
	}
	msg := args[0].String()
	if args[0].IsString() {
		msg = args[0].AsString()
	}
	return jinja.Undefined(), fmt.Errorf("the template raised: %s", msg)
}
