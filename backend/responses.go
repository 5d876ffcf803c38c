package backend

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"benchserve/internal/jsonscan"
	"benchserve/internal/py/pyjson"
)

// The OpenAI Responses API (POST /v1/responses) and the Anthropic
// Messages API (POST /v1/messages). Both stream semantic events, each an
// "event: <type>" line then a "data: <json>" line whose "type" repeats
// it; neither ends with data: [DONE]: the terminal event ends the stream
// (response.completed, response.incomplete or response.failed;
// message_stop).

// responsesBody is the Responses request: the prompt as input (a string,
// or the messages), max_output_tokens, and the sampling settings.
func (c *Client) responsesBody(in *Input) *pyjson.Object {
	o := &pyjson.Object{}
	o.Set("model", pyjson.String(in.Model))
	switch {
	case len(in.Images) > 0 && in.Messages == nil:
		o.Set("input", messageItems(imageMessage(in, func(b []byte, img string) []byte {
			b = append(b, `{"type": "input_image", "image_url": `...)
			b = pyjson.AppendString(b, img)
			return append(b, '}')
		}, "input_text")))
	case in.Messages != nil:
		o.Set("input", messageItems(messages(in)))
	default:
		o.Set("input", pyjson.String(in.Text))
	}
	o.Set("max_output_tokens", pyjson.Int(in.OutputLen))
	o.Set("stream", boolJSON(c.opt.Stream))
	// As vLLM's benchmark does: a server that stores responses would
	// otherwise keep every benchmark reply.
	o.Set("store", jsonFalse)
	c.setDefaults(o, in)
	o.Update(in.Extra)
	setLoRA(o, in)
	return o
}

// messageItems gives each message of a JSON array of messages the item
// type "message" it lacks: OpenAI accepts a bare {"role", "content"},
// llama.cpp answers 400 without the type. Anything else stays as it is.
func messageItems(msgs []byte) []byte {
	v, err := jsonscan.Parse(msgs)
	if err != nil || v.Kind != jsonscan.Array {
		return msgs
	}
	b := make([]byte, 0, len(msgs)+32)
	b = append(b, '[')
	it := v.Elements()
	for item, ok := it.Next(); ok; item, ok = it.Next() {
		if len(b) > 1 {
			b = append(b, ", "...)
		}
		if _, typed := item.Get("type"); item.Kind != jsonscan.Object || typed {
			b = append(b, item.Raw...)
			continue
		}
		b = append(b, `{"type": "message"`...)
		if rest := bytes.TrimSpace(item.Raw[1:]); len(rest) > 0 && rest[0] != '}' {
			b = append(b, ", "...)
		}
		b = append(b, bytes.TrimSpace(item.Raw[1:])...)
	}
	return append(b, ']')
}

// AnthropicVersion is the anthropic-version header the Messages API
// requires.
const AnthropicVersion = "2023-06-01"

// messagesBody is the Messages request: max_tokens (required by the
// API), the messages, and the sampling settings.
func (c *Client) messagesBody(in *Input) *pyjson.Object {
	o := &pyjson.Object{}
	o.Set("model", pyjson.String(in.Model))
	o.Set("max_tokens", pyjson.Int(in.OutputLen))
	if len(in.Images) > 0 && in.Messages == nil {
		o.Set("messages", imageMessage(in, anthropicImage, "text"))
	} else {
		o.Set("messages", messages(in))
	}
	o.Set("stream", boolJSON(c.opt.Stream))
	c.setDefaults(o, in)
	o.Update(in.Extra)
	setLoRA(o, in)
	return o
}

// imageMessage is one user message of the images (each written by part)
// then the text as a part of type textType.
func imageMessage(in *Input, part func([]byte, string) []byte, textType string) []byte {
	b := []byte(`[{"role": "user", "content": [`)
	for _, img := range in.Images {
		b = append(part(b, img), ", "...)
	}
	b = append(b, `{"type": "`...)
	b = append(b, textType...)
	b = append(b, `", "text": `...)
	b = pyjson.AppendString(b, in.Text)
	return append(b, "}]}]"...)
}

// anthropicImage is an image block: a data URI's media type and base64
// data as Anthropic's base64 source; any other URL as a url source.
func anthropicImage(b []byte, img string) []byte {
	b = append(b, `{"type": "image", "source": `...)
	if rest, ok := strings.CutPrefix(img, "data:"); ok {
		if meta, data, ok := strings.Cut(rest, ","); ok && strings.HasSuffix(meta, ";base64") {
			b = append(b, `{"type": "base64", "media_type": `...)
			b = pyjson.AppendString(b, strings.TrimSuffix(meta, ";base64"))
			b = append(b, `, "data": `...)
			b = pyjson.AppendString(b, data)
			return append(b, "}}"...)
		}
	}
	b = append(b, `{"type": "url", "url": `...)
	b = pyjson.AppendString(b, img)
	return append(b, "}}"...)
}

// eventFields are the top-level members the event parsers read, taken in
// the one pass that validates the document.
type eventFields struct {
	typ, delta, response, err, message, usage jsonscan.Value
}

func (f *eventFields) pick(k []byte, v jsonscan.Value) {
	switch {
	case jsonscan.KeyIs(k, "type"):
		f.typ = v
	case jsonscan.KeyIs(k, "delta"):
		f.delta = v
	case jsonscan.KeyIs(k, "response"):
		f.response = v
	case jsonscan.KeyIs(k, "error"):
		f.err = v
	case jsonscan.KeyIs(k, "message"):
		f.message = v
	case jsonscan.KeyIs(k, "usage"):
		f.usage = v
	}
}

// event reads a Responses or Messages document by its "type".
func (p *parser) event(b []byte, at time.Time) error {
	var f eventFields
	v, err := jsonscan.ParseObject(b, f.pick)
	if err != nil {
		return err
	}
	if v.Kind != jsonscan.Object {
		return fmt.Errorf("expected a JSON object, got %s", v.Kind)
	}
	if err := p.eventError(&f, v); err != nil {
		return err
	}
	if p.kind == KindResponses {
		return p.responsesEvent(eventType(f.typ), &f, v, at)
	}
	return p.messagesEvent(eventType(f.typ), &f, v, at)
}

// eventError is the server's error when the document is one: data
// under an "event: error" line (llama.cpp's Messages stream sends its
// error object there, typed "server_error" and the like), or an "error"
// member in a document with no type or type "error" (llama.cpp's
// Responses stream sends a bare {"error": {...}}; Anthropic's error
// event nests it).
func (p *parser) eventError(f *eventFields, v jsonscan.Value) error {
	named := p.errEvent
	p.errEvent = false
	t := eventType(f.typ)
	switch {
	case f.err.Truthy() && (named || len(t) == 0 || string(t) == "error"):
		return serverError(errorMessage(f.err))
	case named || string(t) == "error":
		return serverError(errorMessage(v))
	}
	return nil
}

// eventType is an event's "type" without its quotes, a slice of the
// document (decoded only when spelled with escapes); nil when absent.
func eventType(typ jsonscan.Value) []byte {
	if typ.Kind != jsonscan.String {
		return nil
	}
	raw := typ.Raw[1 : len(typ.Raw)-1]
	if bytes.IndexByte(raw, '\\') >= 0 {
		return typ.AppendString(nil)
	}
	return raw
}

func (p *parser) responsesEvent(t []byte, f *eventFields, v jsonscan.Value, at time.Time) error {
	switch string(t) {
	case "response.output_text.delta", "response.refusal.delta":
		return p.delta(f.delta, false, at)
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		return p.delta(f.delta, true, at)
	case "response.completed", "response.incomplete":
		p.done = true
		p.responsesUsage(f.response)
		if string(t) == "response.incomplete" {
			p.stop = stopLength
		} else {
			p.stop = stopOther
		}
	case "response.failed":
		p.done = true
		e, _ := f.response.Get("error")
		if !e.Truthy() {
			e = f.response
		}
		return serverError(errorMessage(e))
	case "":
		if p.whole {
			return p.responsesDoc(v, at)
		}
		return errors.New("an event without a type")
	}
	return nil
}

// responsesUsage reads a response object's usage: input_tokens,
// output_tokens, output_tokens_details.reasoning_tokens.
func (p *parser) responsesUsage(r jsonscan.Value) {
	u, _ := r.Get("usage")
	if n, ok := intMember(u, "input_tokens"); ok && n > 0 {
		p.rec.PromptLen = n
	}
	if n, ok := intMember(u, "output_tokens"); ok {
		p.outputLen, p.reported, p.served = n, n, true
	}
	d, _ := u.Get("output_tokens_details")
	if n, ok := intMember(d, "reasoning_tokens"); ok {
		p.serverReasoning = n
	}
	if st, _ := r.Get("status"); string(st.Raw) == `"incomplete"` {
		p.stop = stopLength
	} else if string(st.Raw) == `"completed"` {
		p.stop = stopOther
	}
}

// responsesDoc reads a whole (non-streamed) response object: the text of
// its message items, the reasoning of its reasoning items.
func (p *parser) responsesDoc(r jsonscan.Value, at time.Time) error {
	if e, _ := r.Get("error"); e.Truthy() {
		return serverError(errorMessage(e))
	}
	out, _ := r.Get("output")
	if out.Kind != jsonscan.Array {
		return errors.New("the response has no output array")
	}
	it := out.Elements()
	for item, ok := it.Next(); ok; item, ok = it.Next() {
		kind, _ := item.Get("type")
		reasoning := string(kind.Raw) == `"reasoning"`
		parts, _ := item.Get("content")
		pi := parts.Elements()
		for part, ok := pi.Next(); ok; part, ok = pi.Next() {
			if txt, _ := part.Get("text"); txt.Kind == jsonscan.String {
				if err := p.delta(txt, reasoning, at); err != nil {
					return err
				}
			}
		}
	}
	p.responsesUsage(r)
	return nil
}

func (p *parser) messagesEvent(t []byte, f *eventFields, v jsonscan.Value, at time.Time) error {
	switch string(t) {
	case "content_block_delta":
		dt, _ := f.delta.Get("type")
		switch string(dt.Raw) {
		case `"text_delta"`:
			txt, _ := f.delta.Get("text")
			return p.delta(txt, false, at)
		case `"thinking_delta"`:
			txt, _ := f.delta.Get("thinking")
			return p.delta(txt, true, at)
		}
	case "message_start":
		u, _ := f.message.Get("usage")
		p.anthropicInput(u)
	case "message_delta":
		if n, ok := intMember(f.usage, "output_tokens"); ok {
			p.outputLen, p.reported, p.served = n, n, true
		}
		p.anthropicStop(f.delta)
	case "message_stop":
		p.done = true
	case "message":
		if p.whole {
			return p.messagesDoc(v, at)
		}
	}
	return nil
}

// anthropicInput takes a Messages usage's prompt length: input_tokens
// counts only the tokens after the last cache breakpoint, so the cached
// and cache-written tokens are added back.
func (p *parser) anthropicInput(u jsonscan.Value) {
	n, ok := intMember(u, "input_tokens")
	if !ok {
		return
	}
	for _, name := range []string{"cache_read_input_tokens", "cache_creation_input_tokens"} {
		if c, ok := intMember(u, name); ok && c > 0 {
			n += c
		}
	}
	if n > 0 {
		p.rec.PromptLen = n
	}
}

// anthropicStop notes stop_reason: max_tokens is the length limit.
func (p *parser) anthropicStop(d jsonscan.Value) {
	sr, _ := d.Get("stop_reason")
	switch {
	case sr.Kind != jsonscan.String:
	case string(sr.Raw) == `"max_tokens"`:
		p.stop = stopLength
	default:
		p.stop = stopOther
	}
}

// messagesDoc reads a whole Messages reply: its text and thinking blocks.
func (p *parser) messagesDoc(m jsonscan.Value, at time.Time) error {
	content, _ := m.Get("content")
	it := content.Elements()
	for block, ok := it.Next(); ok; block, ok = it.Next() {
		kind, _ := block.Get("type")
		switch string(kind.Raw) {
		case `"text"`:
			txt, _ := block.Get("text")
			if err := p.delta(txt, false, at); err != nil {
				return err
			}
		case `"thinking"`:
			txt, _ := block.Get("thinking")
			if err := p.delta(txt, true, at); err != nil {
				return err
			}
		}
	}
	u, _ := m.Get("usage")
	p.anthropicInput(u)
	if n, ok := intMember(u, "output_tokens"); ok {
		p.outputLen, p.reported, p.served = n, n, true
	}
	p.anthropicStop(m)
	return nil
}

// delta takes a chunk of text, reasoning or not: any chunk with text is a
// token for TTFT and ITL (as the reference counts reasoning_content), the
// first that is not reasoning sets TTFO.
func (p *parser) delta(v jsonscan.Value, reasoning bool, at time.Time) error {
	if v.Kind != jsonscan.String {
		if v.Truthy() {
			return fmt.Errorf("a delta is a JSON %s, not a string", v.Kind)
		}
		return nil
	}
	p.chunk = v.AppendString(p.chunk[:0])
	if len(p.chunk) == 0 {
		return nil
	}
	switch {
	case !p.whole:
		p.token(at, len(p.chunk))
	case !p.started: // a whole reply: its parts are one chunk, TTFT its latency
		p.started = true
		p.rec.TTFT = at.Sub(p.st).Seconds()
	}
	p.text = append(p.text, p.chunk...)
	p.split(reasoning, at)
	return nil
}

// split keeps the reasoning apart from the content of the chunk just
// taken (p.chunk), and times the first content.
func (p *parser) split(reasoning bool, at time.Time) {
	if reasoning {
		p.reasoning = append(p.reasoning, p.chunk...)
		return
	}
	if !p.sawContent {
		p.sawContent = true
		p.rec.TTFO = at.Sub(p.st).Seconds()
	}
}

func intMember(v jsonscan.Value, name string) (int, bool) {
	x, ok := v.Get(name)
	if !ok {
		return 0, false
	}
	n, ok := x.Int()
	return int(n), ok
}
