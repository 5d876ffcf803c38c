package backend

import (
	"time"

	"benchserve/internal/py/pyjson"
)

// Baseten Truss predict: the completions shape, without usage; its
// streams need no [DONE], and its requests no routing key.
var protoTruss = &protocol{
	name: "truss", path: "/v1/models/model:predict",
	body:         (*Client).trussBody,
	chunk:        (*parser).trussChunk,
	output:       outputCount,
	noRoutingKey: true,
}

func (c *Client) trussBody(in *Input) *pyjson.Object {
	o := &pyjson.Object{}
	o.Set("model", pyjson.String(in.Model))
	o.Set("prompt", prompt(in))
	o.Set("temperature", jsonZero)
	o.Set("best_of", jsonOne)
	o.Set("max_tokens", pyjson.Int(in.OutputLen))
	o.Set("stream", boolJSON(c.opt.Stream))
	o.Set("ignore_eos", boolJSON(c.opt.IgnoreEOS))
	o.Update(in.Extra)
	greedy(o, in, jsonZero)
	return o
}

func (p *parser) trussChunk(at time.Time) error { return p.choiceText(false, at) }
