package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"benchserve/internal/py/pyjson"
	"benchserve/tokenizer"
)

// openaiExcluded are the keys of an openai row that do not go into its
// extra request body: the messages are the prompt, and the run sets the
// model and the output length.
var openaiExcluded = map[string]bool{"messages": true, "max_tokens": true, "max_completion_tokens": true, "model": true}

// loadOpenAI is sample_openai_requests: a JSONL file of chat requests.
// Each row sends its messages as they are, with its other keys as an extra
// body that overrides the global one; its prompt length is the chat
// template's tokens plus those of json.dumps(tools).
// openaiBackend refuses a backend without chat messages: the reference
// sends the messages list as another backend's prompt, which no server
// takes.
func openaiBackend(b Backend) error {
	if b.noChat() {
		return fmt.Errorf("--dataset-name openai: its rows are chat messages, which need a chat backend (%s), not --backend %s", b.chats(), b.Name)
	}
	return nil
}

func loadOpenAI(ctx context.Context, p Params, env Env) ([]Row, error) {
	if p.Path == "" {
		return nil, fmt.Errorf("--dataset-name openai: --dataset-path must name a JSONL file of chat requests")
	}
	if err := openaiBackend(p.Backend); err != nil {
		return nil, err
	}
	chat, err := chatTemplater(env.Tok, "--dataset-name openai")
	if err != nil {
		return nil, fmt.Errorf("%v; the prompt lengths are counted through it", err)
	}
	label := "--dataset-path " + p.Path
	type request struct {
		line     int
		messages []byte
		extra    *pyjson.Object
		tools    []byte
		outLen   int
	}
	var reqs []request
	skipped := &skipReport{w: env.Out, label: label}
	parsed := 0
	err = jsonlLines(ctx, p.Path, label, func(n int, line []byte) (bool, error) {
		if p.NumPrompts > 0 && parsed >= p.NumPrompts {
			return false, nil
		}
		if blankLine(line) {
			return true, nil
		}
		if !json.Valid(line) {
			skipped.add(n, "invalid JSON")
			return true, nil
		}
		parsed++
		obj, err := pyjson.ParseObject(line)
		if err != nil {
			return false, fmt.Errorf("%s: line %d: not a JSON object", label, n)
		}
		msgs, ok := obj.Get("messages")
		if !ok || falsy(msgs) {
			return true, nil
		}
		if msgs[0] != '[' {
			return false, fmt.Errorf("%s: line %d: messages: want a list of message objects, got %s", label, n, pyTypeName(msgs))
		}
		r := request{line: n, messages: msgs, outLen: 256}
		if v := p.SharegptOutputLen; v != nil && *v != 0 {
			r.outLen = *v
		} else if mt, ok := obj.Get("max_tokens"); ok {
			if r.outLen, err = strconv.Atoi(string(mt)); err != nil {
				return false, fmt.Errorf("%s: line %d: max_tokens: want an integer, got %s", label, n, clipJSON(mt))
			}
		}
		r.extra = &pyjson.Object{}
		for _, k := range obj.Keys() {
			if !openaiExcluded[k] {
				v, _ := obj.Get(k)
				r.extra.Set(k, v)
			}
		}
		r.tools, _ = r.extra.Get("tools")
		reqs = append(reqs, r)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	skipped.done()

	rows := make([]Row, len(reqs))
	errs := make([]error, len(reqs))
	special := env.Tok.NumSpecialTokensToAdd()
	err = env.meter.stage("Counting prompt tokens", len(reqs)).each(len(reqs), func(i int) {
		r := reqs[i]
		ms, err := tokenizer.MessagesFromJSON(r.messages)
		if err != nil {
			errs[i] = fmt.Errorf("%s: line %d: %v", label, r.line, err)
			return
		}
		n, err := templateLen(chat, env.Tok, ms)
		if err != nil {
			errs[i] = fmt.Errorf("%s: line %d: messages: %v", label, r.line, err)
			return
		}
		if r.tools != nil {
			n += env.Tok.Count(string(r.tools)) + special
		}
		row := Row{Messages: r.messages, PromptLen: n, TextPromptLen: n, OutputLen: r.outLen}
		if r.extra.Len() > 0 {
			row.Extra = r.extra
		}
		rows[i] = row
	})
	if err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(env.Out, "Loaded %d OpenAI-format requests\n", len(rows))
	printRowSums(env.Out, rows)
	return rows, nil
}

// templateLen is len(apply_chat_template(messages, tokenize=True,
// add_generation_prompt=True)): the rendered text's tokens, without
// special tokens added (the template writes them).
func templateLen(chat tokenizer.ChatTemplater, tok tokenizer.Tokenizer, ms []tokenizer.Message) (int, error) {
	text, err := chat.ApplyChatTemplate(ms, tokenizer.ChatOptions{AddGenerationPrompt: true})
	if err != nil {
		return 0, err
	}
	return tok.Count(text), nil
}

// falsy reports whether a JSON value is false in Python: null, false, 0,
// "", [] or {}.
func falsy(v []byte) bool {
	switch string(bytes.TrimSpace(v)) {
	case "null", "false", "0", "0.0", "-0.0", `""`, "[]", "{}":
		return true
	}
	return false
}

// pyTypeName names a JSON value's type as Python would.
func pyTypeName(v []byte) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "a dict"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a bool"
	case 'n':
		return "null"
	}
	return "a number"
}

// clipJSON shortens a JSON value for an error message.
func clipJSON(v []byte) string {
	if len(v) > 60 {
		return string(v[:57]) + "..."
	}
	return string(v)
}

// skipReport warns about the lines a loader skips as the reference does
// silently: the first few by line number, then a count.
type skipReport struct {
	w     io.Writer
	label string
	n     int
}

const skipShown = 5

func (s *skipReport) add(line int, why string) {
	s.n++
	if s.n <= skipShown {
		fmt.Fprintf(s.w, "Warning: %s: line %d: %s, skipped\n", s.label, line, why)
	}
}

func (s *skipReport) done() {
	if s.n > skipShown {
		fmt.Fprintf(s.w, "Warning: %s: %d lines skipped in all\n", s.label, s.n)
	}
}

func preflightOpenAI(p Params) error {
	if p.Path == "" {
		return fmt.Errorf("--dataset-name openai: --dataset-path must name a JSONL file of chat requests")
	}
	return openaiBackend(p.Backend)
}
