package backend

import (
	"errors"
	"time"

	"benchserve/internal/jsonscan"
	"benchserve/internal/py/pyjson"
	"benchserve/record"
)

// TensorRT-LLM's Triton generate_stream: it always streams, each chunk's
// text_output is appended (every chunk is a token, text or not), the
// latency is the last chunk's, and the output length is the requested one.
var protoTRT = &protocol{
	name: "trt", path: "/v2/models/ensemble/generate_stream",
	body:           (*Client).trtBody,
	chunk:          (*parser).trt,
	output:         func(_ *parser, r *record.Record) { r.OutputSource = record.OutputRequested },
	stream:         streamAlways,
	latencyAtChunk: true,
	textInPlace:    true,
}

func (c *Client) trtBody(in *Input) *pyjson.Object {
	o := &pyjson.Object{}
	o.Set("accumulate_tokens", jsonTrue)
	o.Set("text_input", prompt(in))
	o.Set("temperature", trtGreedy)
	o.Set("top_p", pyjson.Float(1.0))
	o.Set("max_tokens", pyjson.Int(in.OutputLen))
	o.Set("stream", jsonTrue)
	o.Set("min_length", pyjson.Int(in.OutputLen))
	o.Set("end_id", pyjson.Int(1048576))
	o.Update(in.Extra)
	greedy(o, in, trtGreedy)
	if !c.opt.IgnoreEOS {
		o.Delete("min_length")
		o.Delete("end_id")
	}
	return o
}

// trtGreedy is the temperature the reference sends TensorRT-LLM: its
// greedy decoding (Triton refuses 0).
var trtGreedy = pyjson.Float(0.000001)

func (p *parser) trt(at time.Time) error {
	f := &p.f
	if f.textOutput.Kind != jsonscan.String {
		return errors.New("the chunk has no text_output string")
	}
	p.text = f.textOutput.AppendString(p.text)
	// Every chunk counts, even one with empty text.
	p.token(at, 0)
	p.latency = at.Sub(p.st).Seconds()
	return nil
}
