package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"benchserve/internal/exit"
	"benchserve/internal/py/argparse"
	"benchserve/tokenizer"
)

const (
	tokenizeProg        = "benchserve tokenize"
	tokenizeDescription = "Count, encode and decode text, and render chat templates, with the tokenizer the " +
		"benchmark would use. Reads stdin, writes stdout."
)

// tokenizeOptions are the parsed flags of "benchserve tokenize".
type tokenizeOptions struct {
	tokenizer           string
	addSpecial          bool
	jsonl               bool
	decode              bool
	chatTemplate        bool
	addGenerationPrompt bool
	tools               string // file
	kwargs              string // JSON object
	templateName        string
}

func newTokenizeParser() *argparse.Parser {
	p := argparse.New(tokenizeProg, tokenizeDescription)
	p.Add(argparse.Option{Name: "--tokenizer", Metavar: "NAME_OR_PATH",
		Help: "Tokenizer: a built-in encoding (o200k_base, cl100k_base), a directory or tokenizer.json path, or a hub id. Required."})
	p.Add(argparse.Option{Name: "--add-special-tokens", Action: argparse.StoreTrue,
		Help: "Add the tokens the tokenizer puts around a sequence (such as BOS), as encode(text) does by default in transformers."})
	p.Add(argparse.Option{Name: "--jsonl", Action: argparse.StoreTrue,
		Help: `Read one JSON object per line and write one per line, in order: {"text": ...} gives {"ids": [...], "count": N}; ` +
			`with --decode, {"ids": [...]} gives {"text": ...}; with --chat-template, a messages array (or {"messages": [...], "tools": [...]}) ` +
			`gives {"text": ..., "ids": [...], "count": N}.`})
	p.Add(argparse.Option{Name: "--decode", Action: argparse.StoreTrue,
		Help: `Turn ids (a JSON array, {"ids": [...]}, or whitespace-separated numbers) back into text, written as is.`})
	p.Add(argparse.Option{Name: "--chat-template", Action: argparse.StoreTrue,
		Help: `Render a messages JSON array (or {"messages": [...], "tools": [...]}) with the tokenizer's chat template, written as is.`})
	p.Add(argparse.Option{Name: "--add-generation-prompt", Action: argparse.StoreTrue,
		Help: "With --chat-template: end with the assistant turn's header."})
	p.Add(argparse.Option{Name: "--tools", Metavar: "FILE",
		Help: "With --chat-template: a JSON file holding the list of tool schemas passed to the template."})
	p.Add(argparse.Option{Name: "--kwargs", Metavar: "JSON",
		Help: `With --chat-template: a JSON object of extra template variables, such as '{"enable_thinking": false}'.`})
	p.Add(argparse.Option{Name: "--template-name", Metavar: "NAME",
		Help: "With --chat-template: which of the tokenizer's named templates to use (default: tool_use when tools are given and it exists, else default)."})
	p.Exclusive("--decode", "--chat-template")
	return p
}

// parseTokenize parses the arguments after "benchserve tokenize". Errors
// are *UsageError or *HelpRequested.
func parseTokenize(args []string, cols int) (*tokenizeOptions, error) {
	ns, err := parseArgs(newTokenizeParser(), args, cols)
	if err != nil {
		return nil, err
	}
	str := func(dest string) string {
		if v, ok := ns.Get(dest).(string); ok {
			return v
		}
		return ""
	}
	o := &tokenizeOptions{
		tokenizer:           str("tokenizer"),
		addSpecial:          ns.Get("add_special_tokens").(bool),
		jsonl:               ns.Get("jsonl").(bool),
		decode:              ns.Get("decode").(bool),
		chatTemplate:        ns.Get("chat_template").(bool),
		addGenerationPrompt: ns.Get("add_generation_prompt").(bool),
		tools:               str("tools"),
		kwargs:              str("kwargs"),
		templateName:        str("template_name"),
	}
	if !ns.Given("tokenizer") {
		return nil, &UsageError{Msg: "the following arguments are required: --tokenizer"}
	}
	if !o.chatTemplate {
		for _, f := range []struct {
			name  string
			given bool
		}{{"--add-generation-prompt", o.addGenerationPrompt}, {"--tools", ns.Given("tools")},
			{"--kwargs", ns.Given("kwargs")}, {"--template-name", ns.Given("template_name")}} {
			if f.given {
				return nil, &UsageError{Msg: "argument " + f.name + ": only with --chat-template"}
			}
		}
	}
	if o.addSpecial && (o.decode || o.chatTemplate) {
		return nil, &UsageError{Msg: "argument --add-special-tokens: not with --decode or --chat-template (the template writes its special tokens)"}
	}
	return o, nil
}

// TokenizeMain runs "benchserve tokenize" with args (after the
// subcommand) and returns the exit code: 2 for a bad command line, 1 for
// a failure (the tokenizer, the input), 0 otherwise.
func TokenizeMain(ctx context.Context, args []string, pio IO) int {
	if pio.Getenv == nil {
		pio.Getenv = os.Getenv
	}
	in := pio.Stdin
	if in == nil {
		in = os.Stdin
	}
	o, err := parseTokenize(args, pio.columns())
	if code, done := parseOutcome(err, pio); done {
		return code
	}
	chat, err := o.chatOptions()
	if err != nil {
		return exitCode(&exit.Error{Code: exit.Usage, Msg: err.Error()}, pio.Stderr)
	}
	tok, err := tokenizer.Resolve(ctx, o.tokenizer, tokenizer.ResolveOptions{Getenv: pio.Getenv})
	if err != nil {
		return exitCode(&exit.Error{Code: exit.Failure, Msg: "--tokenizer: " + err.Error()}, pio.Stderr)
	}
	var ct tokenizer.ChatTemplater
	if o.chatTemplate {
		var ok bool
		if ct, ok = tok.(tokenizer.ChatTemplater); !ok {
			return exitCode(&exit.Error{Code: exit.Failure,
				Msg: fmt.Sprintf("--chat-template: tokenizer %s has no chat templates (a built-in encoding)", tok.Name())}, pio.Stderr)
		}
		if n, ok := tok.(interface{ ChatTemplateNames() []string }); ok && o.templateName != "" && !slices.Contains(n.ChatTemplateNames(), o.templateName) {
			return exitCode(&exit.Error{Code: exit.Failure,
				Msg: fmt.Sprintf("--template-name: tokenizer %s has no template %q (it has: %s)", tok.Name(), o.templateName, strings.Join(n.ChatTemplateNames(), ", "))}, pio.Stderr)
		}
	}
	out := bufio.NewWriterSize(pio.Stdout, 64<<10)
	r := &tokenizeRun{o: o, tok: tok, ct: ct, chat: chat, out: out}
	if o.jsonl {
		err = r.lines(ctx, in)
	} else {
		err = r.whole(in)
	}
	if ferr := out.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("stdout: %v", ferr)
	}
	if err != nil {
		return exitCode(&exit.Error{Code: exit.Failure, Msg: err.Error()}, pio.Stderr)
	}
	return exit.OK
}

// chatOptions reads --tools and --kwargs.
func (o *tokenizeOptions) chatOptions() (tokenizer.ChatOptions, error) {
	c := tokenizer.ChatOptions{AddGenerationPrompt: o.addGenerationPrompt, Template: o.templateName}
	if o.tools != "" {
		b, err := os.ReadFile(o.tools)
		if err != nil {
			return c, fmt.Errorf("--tools: %v", err)
		}
		if err := checkJSONArray(b); err != nil {
			return c, fmt.Errorf("--tools: %s: %v", o.tools, err)
		}
		c.Tools = b
	}
	if o.kwargs != "" {
		var kw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(o.kwargs), &kw); err != nil || kw == nil {
			return c, fmt.Errorf("--kwargs: want a JSON object, such as '{\"enable_thinking\": false}'")
		}
		c.Extra = make(map[string]any, len(kw))
		for k, v := range kw {
			c.Extra[k] = v
		}
	}
	return c, nil
}

func checkJSONArray(b []byte) error {
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return fmt.Errorf("want a JSON array: %v", err)
	}
	return nil
}

type tokenizeRun struct {
	o    *tokenizeOptions
	tok  tokenizer.Tokenizer
	ct   tokenizer.ChatTemplater
	chat tokenizer.ChatOptions
	out  *bufio.Writer
	buf  []byte
}

// whole handles stdin as one input.
func (r *tokenizeRun) whole(in io.Reader) error {
	data, err := io.ReadAll(in)
	if err != nil {
		return fmt.Errorf("stdin: %v", err)
	}
	switch {
	case r.o.decode:
		ids, err := parseIDs(data)
		if err != nil {
			return fmt.Errorf("stdin: %v", err)
		}
		r.out.WriteString(r.tok.Decode(ids))
	case r.o.chatTemplate:
		text, _, err := r.render(data)
		if err != nil {
			return fmt.Errorf("stdin: %v", err)
		}
		r.out.WriteString(text)
	default:
		r.writeIDs(r.tok.Encode(string(data), r.o.addSpecial))
		r.out.WriteByte('\n')
	}
	return nil
}

// lines handles stdin as JSON lines, one output line each.
func (r *tokenizeRun) lines(ctx context.Context, in io.Reader) error {
	br := bufio.NewReaderSize(in, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			return nil
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("stdin: %v", err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if lerr := r.line(bytes.TrimRight(line, "\r\n")); lerr != nil {
			return fmt.Errorf("stdin line %d: %v", n, lerr)
		}
		if err == io.EOF {
			return nil
		}
	}
}

func (r *tokenizeRun) line(line []byte) error {
	if len(bytes.TrimSpace(line)) == 0 {
		return errors.New("empty line")
	}
	switch {
	case r.o.decode:
		ids, err := parseIDs(line)
		if err != nil {
			return err
		}
		r.out.WriteString(`{"text":`)
		r.writeString(r.tok.Decode(ids))
		r.out.WriteString("}\n")
	case r.o.chatTemplate:
		text, ids, err := r.render(line)
		if err != nil {
			return err
		}
		r.out.WriteString(`{"text":`)
		r.writeString(text)
		r.out.WriteString(`,`)
		r.writeIDsFields(ids)
		r.out.WriteString("}\n")
	default:
		var doc struct {
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(line, &doc); err != nil {
			return fmt.Errorf("invalid JSON: %v", err)
		}
		if doc.Text == nil {
			return errors.New(`want {"text": "..."}`)
		}
		r.writeIDs(r.tok.Encode(*doc.Text, r.o.addSpecial))
		r.out.WriteByte('\n')
	}
	return nil
}

// render renders a messages array, or an object with "messages" and
// optionally "tools" (an OpenAI request), and encodes the result as
// apply_chat_template(tokenize=True) does.
func (r *tokenizeRun) render(data []byte) (string, []int, error) {
	opt := r.chat
	msgJSON := bytes.TrimSpace(data)
	if len(msgJSON) > 0 && msgJSON[0] == '{' {
		var req struct {
			Messages json.RawMessage `json:"messages"`
			Tools    json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(msgJSON, &req); err != nil {
			return "", nil, fmt.Errorf("invalid JSON: %v", err)
		}
		if req.Messages == nil {
			return "", nil, errors.New(`want a messages array or {"messages": [...]}`)
		}
		msgJSON = req.Messages
		if req.Tools != nil && string(req.Tools) != "null" && opt.Tools == nil {
			opt.Tools = req.Tools
		}
	}
	msgs, err := tokenizer.MessagesFromJSON(msgJSON)
	if err != nil {
		return "", nil, err
	}
	text, err := r.ct.ApplyChatTemplate(msgs, opt)
	if err != nil {
		return "", nil, err
	}
	if !r.o.jsonl {
		return text, nil, nil
	}
	return text, r.tok.Encode(text, false), nil
}

// parseIDs reads a JSON array of ids, {"ids": [...]}, or whitespace-separated
// integers.
func parseIDs(data []byte) ([]int, error) {
	t := bytes.TrimSpace(data)
	if len(t) > 0 && (t[0] == '[' || t[0] == '{') {
		var ids []int
		if t[0] == '{' {
			var doc struct {
				IDs *[]int `json:"ids"`
			}
			if err := json.Unmarshal(t, &doc); err != nil || doc.IDs == nil {
				return nil, errors.New(`want a JSON array of integer ids or {"ids": [...]}`)
			}
			return *doc.IDs, nil
		}
		if err := json.Unmarshal(t, &ids); err != nil {
			return nil, errors.New("want a JSON array of integer ids")
		}
		return ids, nil
	}
	fields := strings.Fields(string(t))
	ids := make([]int, len(fields))
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("id %d: %q is not an integer", i+1, f)
		}
		ids[i] = n
	}
	return ids, nil
}

// writeIDs writes {"ids":[...],"count":N}.
func (r *tokenizeRun) writeIDs(ids []int) {
	r.out.WriteByte('{')
	r.writeIDsFields(ids)
	r.out.WriteByte('}')
}

func (r *tokenizeRun) writeIDsFields(ids []int) {
	b := append(r.buf[:0], `"ids":[`...)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(id), 10)
	}
	b = append(b, `],"count":`...)
	b = strconv.AppendInt(b, int64(len(ids)), 10)
	r.out.Write(b)
	r.buf = b
}

// writeString writes s as a JSON string, without escaping <, > and &.
func (r *tokenizeRun) writeString(s string) {
	var sb bytes.Buffer
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	r.out.Write(bytes.TrimSuffix(sb.Bytes(), []byte("\n")))
}
