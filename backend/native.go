package backend

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"benchserve/internal/jsonscan"
	"benchserve/internal/py/pyjson"
	"benchserve/record"
)

// SGLang's native /generate: the text and the sampling settings; each
// chunk holds the cumulative text and meta_info.completion_tokens, which
// is the output length.
var protoNative = &protocol{
	name: "native", path: "/generate",
	body:     (*Client).nativeBody,
	chunk:    (*parser).native,
	output:   func(p *parser, r *record.Record) { r.OutputLen, r.OutputSource = p.outputLen, record.OutputServer },
	cached:   func(p *parser, _ *record.CacheDetails) (int, bool) { return p.cached, true },
	end:      doneLine,
	sampling: true,
	finishes: true,
	logprobs: LogprobsBoth,
}

func (c *Client) nativeBody(in *Input) *pyjson.Object {
	sp := &pyjson.Object{}
	temp := c.opt.Temperature
	if in.Probe {
		temp = 0
	}
	sp.Set("temperature", pyjson.Float(temp))
	sp.Set("max_new_tokens", pyjson.Int(in.OutputLen))
	sp.Set("ignore_eos", boolJSON(c.opt.IgnoreEOS))
	if c.opt.TopP < 1.0 {
		sp.Set("top_p", pyjson.Float(c.opt.TopP))
	}
	o := &pyjson.Object{}
	if in.Messages == nil && in.IDs == nil {
		o.Set("text", pyjson.String(in.Text))
	} else {
		o.Set("input_ids", prompt(in))
	}
	o.Set("sampling_params", sp.Bytes())
	o.Set("stream", boolJSON(c.opt.Stream))
	if in.LoRA == "" {
		o.Set("lora_path", pyjson.Null)
	} else {
		o.Set("lora_path", pyjson.String(in.LoRA))
	}
	o.Set("return_logprob", boolJSON(c.opt.ReturnLogprob))
	o.Set("return_routed_experts", boolJSON(c.opt.ReturnRoutedExperts))
	o.Set("logprob_start_len", pyjson.Int(c.opt.LogprobStartLen))
	o.Update(in.Extra) // {..., **extra}: a known key keeps its place
	if c.opt.TopLogprobsNum > 0 {
		o.Set("top_logprobs_num", pyjson.Int(c.opt.TopLogprobsNum))
	}
	if c.opt.TokenIDsLogprob != nil {
		o.Set("token_ids_logprob", pyjson.Ints(c.opt.TokenIDsLogprob))
	}
	if len(in.Images) > 0 {
		o.Set("image_data", pyjson.Strings(in.Images))
	}
	return o
}

// maxTokenJump bounds the new tokens one /generate chunk may report, since
// each becomes an ITL entry: a broken counter must not exhaust memory.
const maxTokenJump = 1 << 20

// metaFields are the meta_info members native reads, taken in one walk
// (the last of repeated keys, as Get does; Invalid when absent).
type metaFields struct {
	accept, prompt, completion, cached, cacheDetails, finish jsonscan.Value
}

var metaNames = []string{"spec_accept_length", "prompt_tokens", "completion_tokens", "cached_tokens", "cached_tokens_details", "finish_reason"}

func (m *metaFields) pick(k []byte, v jsonscan.Value) {
	switch string(k) {
	case "spec_accept_length":
		m.accept = v
	case "prompt_tokens":
		m.prompt = v
	case "completion_tokens":
		m.completion = v
	case "cached_tokens":
		m.cached = v
	case "cached_tokens_details":
		m.cacheDetails = v
	case "finish_reason":
		m.finish = v
	default:
		if bytes.IndexByte(k, '\\') >= 0 {
			for _, name := range metaNames {
				if jsonscan.KeyIs(k, name) {
					m.pick([]byte(name), v)
					return
				}
			}
		}
	}
}

func (p *parser) native(at time.Time) error {
	f := &p.f
	var m metaFields
	it := f.meta.Members()
	for k, v, ok := it.Next(); ok; k, v, ok = it.Next() {
		m.pick(k, v)
	}
	if !m.finish.IsNull() {
		p.finished = true
	}
	if sal := m.accept; !sal.IsNull() {
		if x, ok := sal.Float(); ok {
			p.rec.SpecAcceptLength = x
		}
	}
	if f.usage.Truthy() {
		p.promptLen(f)
	} else {
		p.promptTokens(m.prompt)
	}
	if p.whole {
		if n, ok := m.completion.Int(); ok {
			p.reported = int(n)
		}
	}
	if p.c.opt.CacheReport {
		p.cached = 0
		if n, ok := m.cached.Int(); ok {
			p.cached = int(n)
		}
		p.haveCache = false
		if d := m.cacheDetails; d.Kind == jsonscan.Object && d.Truthy() {
			p.cacheRaw = append(p.cacheRaw[:0], d.Raw...)
			p.haveCache = true
		}
	}
	switch {
	case f.text.Kind == jsonscan.String && len(f.text.Raw) > 2:
	case f.text.Truthy():
		return fmt.Errorf("text is a JSON %s, not a string", f.text.Kind)
	default:
		return nil
	}
	// The text is cumulative: each chunk replaces it. It is decoded once,
	// when the reply ends (plainText).
	p.text, p.textLit = append(p.text[:0], f.text.Raw...), true
	n, isInt := m.completion.Int()
	if !isInt {
		return errors.New("a chunk with text has no integer meta_info.completion_tokens")
	}
	if p.started && n < int64(p.lastOutputLen) {
		p.integ |= record.BadIndex // the running count went back
	}
	p.outputLen = int(n)
	if n != int64(p.lastOutputLen) || !p.started {
		p.countChunk(int(n))
	}
	if !p.started {
		p.started = true
		p.rec.TTFT = at.Sub(p.st).Seconds()
	} else {
		newTokens := n - int64(p.lastOutputLen)
		if newTokens == 0 {
			return nil // the gap rolls into the next chunk
		}
		if newTokens > maxTokenJump {
			return fmt.Errorf("meta_info.completion_tokens jumped by %d in one chunk", newTokens)
		}
		// The chunk's gap spread over its tokens, to the nanosecond.
		gap := (at.Sub(p.last) + time.Duration(newTokens/2)) / time.Duration(newTokens)
		for range newTokens {
			p.itl.Append(gap)
		}
	}
	p.last = at
	p.lastOutputLen = int(n)
	return nil
}
