package backend

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"benchserve/internal/jsonscan"
	"benchserve/internal/py/pyjson"
)

// OpenAI chat completions (POST /v1/chat/completions): the messages,
// max_completion_tokens, choices[0].delta's reasoning and content, the
// usage chunk's completion_tokens.
var protoChat = &protocol{
	name: "chat", path: "/v1/chat/completions",
	body:           (*Client).chatBody,
	chunk:          (*parser).chat,
	whole:          (*parser).chatDoc,
	output:         outputCount,
	cached:         detailsCached,
	end:            doneLine,
	splitReasoning: true,
	finishes:       true,
}

func (c *Client) chatBody(in *Input) *pyjson.Object {
	o := &pyjson.Object{}
	o.Set("model", pyjson.String(in.Model))
	o.Set("messages", messages(in))
	o.Set("max_completion_tokens", pyjson.Int(in.OutputLen))
	o.Set("stream", boolJSON(c.opt.Stream))
	c.setDefaults(o, in)
	o.Update(in.Extra)
	greedy(o, in, jsonZero)
	c.askUsage(o, in.Extra)
	setLoRA(o, in)
	return o
}

func (p *parser) chat(at time.Time) error {
	f := &p.f
	counted := p.usageOutputLen(f)
	p.promptLen(f)
	if d, ok := f.usage.Get("completion_tokens_details"); ok {
		if n, ok := intMember(d, "reasoning_tokens"); ok {
			p.serverReasoning = n
		}
	}
	if p.c.opt.CacheReport {
		p.sglextCache(f)
	}
	first, ok := f.choices.First()
	if !ok {
		return nil
	}
	p.finishReason(first)
	p.choiceIndex(first)
	delta, _ := first.Get("delta")
	if err := p.chatContent(delta); err != nil {
		return fmt.Errorf("choices[0].delta.%w", err)
	}
	if len(p.chunk) == 0 {
		return nil
	}
	p.token(at, len(p.chunk))
	p.text = append(p.text, p.chunk...)
	p.chatSplit(at)
	if counted {
		p.chunkCount()
	}
	return nil
}

// chatSplit keeps a chat chunk's reasoning (its first reasonLen bytes)
// apart from its content.
func (p *parser) chatSplit(at time.Time) {
	all := p.chunk
	if p.reasonLen > 0 {
		p.reasoning = append(p.reasoning, all[:p.reasonLen]...)
	}
	if len(all) > p.reasonLen && !p.sawContent {
		p.sawContent = true
		p.rec.TTFO = at.Sub(p.st).Seconds()
	}
}

// chatContent sets p.chunk to (reasoning_content or reasoning or "") +
// (content or ""), the reference's _combine_openai_chat_content.
func (p *parser) chatContent(m jsonscan.Value) error {
	var rc, r, c jsonscan.Value
	it := m.Members()
	for k, v, ok := it.Next(); ok; k, v, ok = it.Next() {
		switch {
		case jsonscan.KeyIs(k, "content"):
			c = v
		case jsonscan.KeyIs(k, "reasoning_content"):
			rc = v
		case jsonscan.KeyIs(k, "reasoning"):
			r = v
		}
	}
	rname := "reasoning"
	if rc.Truthy() {
		r, rname = rc, "reasoning_content"
	}
	if r.Kind != jsonscan.String && r.Truthy() {
		return fmt.Errorf("%s is a JSON %s, not a string", rname, r.Kind)
	}
	if c.Kind != jsonscan.String && c.Truthy() {
		return fmt.Errorf("content is a JSON %s, not a string", c.Kind)
	}
	p.chunk = r.AppendString(p.chunk[:0])
	p.reasonLen = len(p.chunk)
	if len(p.chunk) == 0 {
		p.hot = c // the content alone makes the chunk
	}
	p.chunk = c.AppendString(p.chunk)
	return nil
}

// chatDoc reads a non-streamed chat completion: TTFT is the latency, and
// choices[0].meta_info may carry the speculative-decoding figures.
func (p *parser) chatDoc(doc []byte, at time.Time) error {
	var f fields
	v, err := jsonscan.ParseObject(doc, f.pick)
	if err != nil {
		return err
	}
	if v.Kind != jsonscan.Object {
		return fmt.Errorf("expected a JSON object, got %s", v.Kind)
	}
	if err := f.serverError(v); err != nil {
		return err
	}
	first, ok := f.choices.First()
	if !ok {
		return errors.New("no choices[0]")
	}
	p.finishReason(first)
	msg, _ := first.Get("message")
	if msg.Kind != jsonscan.Object {
		return errors.New("choices[0] has no message object")
	}
	if err := p.chatContent(msg); err != nil {
		return fmt.Errorf("choices[0].message.%w", err)
	}
	p.text = append(p.text[:0], p.chunk...)
	p.started = true
	p.rec.TTFT = at.Sub(p.st).Seconds()
	p.chatSplit(at)
	p.usageOutputLen(&f)
	p.promptLen(&f)
	if d, ok := f.usage.Get("completion_tokens_details"); ok {
		if n, ok := intMember(d, "reasoning_tokens"); ok {
			p.serverReasoning = n
		}
	}
	if meta, _ := first.Get("meta_info"); meta.Kind == jsonscan.Object {
		p.specInfo(meta.Raw)
	}
	if p.c.opt.CacheReport {
		p.sglextCache(&f)
	}
	return nil
}

// specInfo reads the speculative-decoding figures; missing, null or
// mistyped ones stay zero, as "or 0.0" leaves them in the reference.
func (p *parser) specInfo(raw []byte) {
	var m struct {
		AcceptLength      *float64 `json:"spec_accept_length"`
		CapLength         *float64 `json:"spec_cap_length"`
		BlockAcceptLength *float64 `json:"spec_block_accept_length"`
		CapLensHistogram  []int    `json:"spec_cap_lens_histogram"`
	}
	_ = json.Unmarshal(raw, &m) // keeps the fields that decoded
	r := p.rec
	if m.AcceptLength != nil {
		r.SpecAcceptLength = *m.AcceptLength
	}
	if m.CapLength != nil {
		r.SpecCapLength = *m.CapLength
	}
	if m.BlockAcceptLength != nil {
		r.SpecBlockAcceptLength = *m.BlockAcceptLength
	}
	r.SpecCapLensHistogram = m.CapLensHistogram
}
