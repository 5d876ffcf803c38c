package backend

import (
	"bytes"
	"fmt"
	"time"

	"benchserve/internal/jsonscan"
	"benchserve/internal/py/pyjson"
)

// The parts the event protocols share (Responses, Messages): each event
// is an "event: <type>" line then a "data: <json>" line whose "type"
// repeats it; no data: [DONE] ends the stream, a terminal event does.

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

// eventFields are the top-level members the event parsers read, taken in
// the one pass that validates the document.
type eventFields struct {
	typ, delta, response, err, message, usage jsonscan.Value
	seq, index                                jsonscan.Value
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
	case jsonscan.KeyIs(k, "sequence_number"):
		f.seq = v
	case jsonscan.KeyIs(k, "index"):
		f.index = v
	}
}

// event reads a Responses or Messages document by its "type".
func (p *parser) event(b []byte, at time.Time) error {
	if p.ev == nil {
		p.ev = new(eventFields)
	}
	*p.ev = eventFields{}
	v, err := jsonscan.ParseObject(b, p.ev.pick)
	if err != nil {
		return err
	}
	if v.Kind != jsonscan.Object {
		return fmt.Errorf("expected a JSON object, got %s", v.Kind)
	}
	if err := p.eventError(p.ev, v); err != nil {
		return err
	}
	if p.ev.seq.Kind != jsonscan.Invalid {
		p.sequence(p.ev.seq)
	}
	return p.proto.event(p, eventType(p.ev.typ), v, at)
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
