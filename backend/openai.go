package backend

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"benchserve/internal/jsonscan"
	"benchserve/record"
)

// The parts the OpenAI-like protocols share (completions, chat, truss;
// native and trt read their members through fields too).

// serverError reports an error the server sent in a 200 response: an
// "error" member (OpenAI, SGLang, Triton), or vLLM's older bare error
// object, {"object": "error", "message": ...}.
func (f *fields) serverError(v jsonscan.Value) error {
	switch {
	case f.err.Truthy():
		return serverError(errorMessage(f.err))
	case f.object.Kind == jsonscan.String && string(f.object.Raw) == `"error"`:
		return serverError(errorMessage(v))
	}
	return nil
}

// fields picks the top-level members the parsers read.
type fields struct {
	choices, usage, meta, sglext, text, textOutput, err, object jsonscan.Value
}

// pick keeps the member if it is one the parsers read.
func (f *fields) pick(k []byte, val jsonscan.Value) {
	switch string(k) {
	case "choices":
		f.choices = val
	case "usage":
		f.usage = val
	case "meta_info":
		f.meta = val
	case "sglext":
		f.sglext = val
	case "text":
		f.text = val
	case "text_output":
		f.textOutput = val
	case "error":
		f.err = val
	case "object":
		f.object = val
	default:
		if bytes.IndexByte(k, '\\') >= 0 { // a key spelled with escapes
			for _, name := range fieldNames {
				if jsonscan.KeyIs(k, name) {
					f.pick([]byte(name), val)
					return
				}
			}
		}
	}
}

var fieldNames = []string{"choices", "usage", "meta_info", "sglext", "text", "text_output", "error", "object"}

// finishReason notes choices[0].finish_reason, when it is a string.
func (p *parser) finishReason(choice jsonscan.Value) {
	fr, _ := choice.Get("finish_reason")
	if fr.Kind != jsonscan.String {
		return
	}
	p.finished = true
	if string(fr.Raw) == `"length"` {
		p.stop = stopLength
	} else {
		p.stop = stopOther
	}
}

// promptLen is the reference's _record_server_prompt_len: usage, or failing
// that meta_info, carries prompt_tokens, which replace the dataset's count.
func (p *parser) promptLen(f *fields) {
	reported := f.usage
	if !reported.Truthy() {
		reported = f.meta
	}
	pt, _ := reported.Get("prompt_tokens")
	p.promptTokens(pt)
}

// promptTokens takes a prompt_tokens member (Invalid: absent).
func (p *parser) promptTokens(pt jsonscan.Value) {
	if pt.Truthy() {
		if n, ok := pt.Int(); ok {
			p.rec.PromptLen = int(n)
		}
	}
}

// usageOutputLen takes usage.completion_tokens when the chunk has one,
// and reports whether it had.
func (p *parser) usageOutputLen(f *fields) bool {
	if ct, ok := f.usage.Get("completion_tokens"); ok {
		if n, ok := ct.Int(); ok {
			p.runningCount(int(n))
			p.outputLen = int(n)
			p.reported, p.served = int(n), true
			return true
		}
	}
	return false
}

// outputCount is a successful reply's output length and where it comes
// from: the server's completion_tokens (a 0 that came with text, as
// Ollama sends in every chunk, is no count); else, when the server said
// it stopped before the limit, the text's own tokens; else, as the
// reference, the requested length.
func (p *parser) outputCount() (int, record.OutputSource) {
	r := p.rec
	switch {
	case p.served && (p.reported > 0 || len(p.text) == 0):
		return p.reported, record.OutputServer
	case p.stop == stopOther && r.TextCounted:
		return r.TextTokens, record.OutputRetokenized
	}
	return p.requested, record.OutputRequested
}

// sglextCache keeps the last non-empty sglext.cached_tokens_details, decoded
// once the response is complete.
func (p *parser) sglextCache(f *fields) {
	if d, ok := f.sglext.Get("cached_tokens_details"); ok && d.Kind == jsonscan.Object && d.Truthy() {
		p.cacheRaw = append(p.cacheRaw[:0], d.Raw...)
		p.haveCache = true
	}
}

// stringField returns a string member, or "" for a missing or falsy one; a
// truthy non-string is an error (the reference would fail on it too).
func stringField(v jsonscan.Value, name string) (jsonscan.Value, error) {
	f, _ := v.Get(name)
	switch {
	case f.Kind == jsonscan.String:
		return f, nil
	case f.Truthy():
		return jsonscan.Value{}, fmt.Errorf("%s is a JSON %s, not a string", name, f.Kind)
	}
	return jsonscan.Value{}, nil
}

// choiceText reads choices[0].text, the completions shape (truss's too);
// with usage, the usage's completion_tokens are the output length.
func (p *parser) choiceText(usage bool, at time.Time) error {
	f := &p.f
	if f.choices.Kind != jsonscan.Array {
		return errors.New("the chunk has no choices array")
	}
	first, ok := f.choices.First()
	if !ok {
		// A usage-only chunk ("choices": []); the reference fails on it.
		if usage {
			p.usageOutputLen(f)
		}
		return nil
	}
	text, err := stringField(first, "text")
	if err != nil {
		return fmt.Errorf("choices[0].%w", err)
	}
	p.finishReason(first)
	p.choiceIndex(first)
	p.hot = text
	if len(text.Raw) <= 2 {
		// llama.cpp sends its usage with the last choice, whose text is
		// empty, and no usage-only chunk after it.
		if usage {
			p.usageOutputLen(f)
		}
		return nil
	}
	p.content(text, at)
	if usage && p.usageOutputLen(f) {
		p.chunkCount()
	}
	return nil
}

// chunkCount notes that the chunk just taken came with the server's
// running count of completion tokens (p.reported; OpenAI streams with
// usage in every chunk), for the per-token ITL.
func (p *parser) chunkCount() {
	if len(p.cum) > 0 {
		p.cum[len(p.cum)-1] = int32(min(p.reported, 1<<31-1))
	}
}

// outputCount is the output-length rule of the OpenAI-like protocols
// (and of Responses and Messages): see parser.outputCount.
func outputCount(p *parser, r *record.Record) { r.OutputLen, r.OutputSource = p.outputCount() }

// detailsCached is the cached tokens of sglext.cached_tokens_details
// (SGLang's OpenAI APIs).
func detailsCached(_ *parser, d *record.CacheDetails) (int, bool) {
	if d == nil {
		return 0, false
	}
	return d.Device + d.Host + d.Storage, true
}
