package backend

import (
	"net/http"
	"strings"
	"time"

	"benchserve/internal/jsonscan"
	"benchserve/internal/py/pyjson"
)

// The Anthropic Messages API (POST /v1/messages): events (see events.go)
// content_block_delta with text or thinking, message_start's and
// message_delta's usage; message_stop ends the stream.
var protoMessages = &protocol{
	name: "messages", path: "/v1/messages",
	body:     (*Client).messagesBody,
	events:   true,
	event:    (*parser).messagesEvent,
	output:   outputCount,
	end:      "message_stop",
	finishes: true,
	auth:     anthropicHeaders,
}

// AnthropicVersion is the anthropic-version header the Messages API
// requires.
const AnthropicVersion = "2023-06-01"

// anthropicHeaders are the Messages API's: x-api-key from
// ANTHROPIC_API_KEY (replacing the OpenAI-style Authorization, which
// stays when it is not set: gateways that serve both take either), and
// the anthropic-version it requires.
func anthropicHeaders(h http.Header, getenv func(string) string) http.Header {
	h = h.Clone()
	if k := getenv("ANTHROPIC_API_KEY"); k != "" {
		h.Del("Authorization")
		h.Set("X-Api-Key", k)
	}
	h.Set("Anthropic-Version", AnthropicVersion)
	return h
}

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
	greedy(o, in, jsonZero)
	setLoRA(o, in)
	return o
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

func (p *parser) messagesEvent(t []byte, v jsonscan.Value, at time.Time) error {
	f := p.ev
	switch string(t) {
	case "content_block_delta":
		p.blockIndex(f.index, false)
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
			p.runningCount(n)
			p.outputLen, p.reported, p.served = n, n, true
		}
		p.anthropicStop(f.delta)
	case "content_block_start":
		p.blockIndex(f.index, true)
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
	if sr.Kind == jsonscan.String {
		p.finished = true
	}
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
