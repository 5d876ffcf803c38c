package backend

import (
	"bytes"
	"errors"
	"time"

	"benchserve/internal/jsonscan"
	"benchserve/internal/py/pyjson"
)

// The OpenAI Responses API (POST /v1/responses): events (see events.go)
// whose text and reasoning deltas make the reply; response.completed,
// response.incomplete or response.failed ends the stream.
var protoResponses = &protocol{
	name: "responses", path: "/v1/responses",
	body:     (*Client).responsesBody,
	events:   true,
	event:    (*parser).responsesEvent,
	output:   outputCount,
	end:      "its terminal event (response.completed or response.incomplete)",
	finishes: true,
}

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
	greedy(o, in, jsonZero)
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

func (p *parser) responsesEvent(t []byte, v jsonscan.Value, at time.Time) error {
	f := p.ev
	switch string(t) {
	case "response.output_text.delta", "response.refusal.delta":
		return p.delta(f.delta, false, at)
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		return p.delta(f.delta, true, at)
	case "response.completed", "response.incomplete":
		p.done, p.finished = true, true
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
