package backend

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"benchserve/internal/jsonscan"
	"benchserve/record"
)

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

// decodeCacheDetails decodes sglang's cached_tokens_details object.
func decodeCacheDetails(raw []byte) *record.CacheDetails {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	num := func(k string) int {
		if x, ok := m[k].(float64); ok {
			return int(x)
		}
		return 0
	}
	backend, _ := m["storage_backend"].(string)
	return &record.CacheDetails{
		Device: num("device"), Host: num("host"), Storage: num("storage"),
		StorageBackend: backend, Raw: bytes.Clone(raw),
	}
}
