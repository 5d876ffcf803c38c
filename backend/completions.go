package backend

import (
	"time"

	"benchserve/internal/py/pyjson"
)

// OpenAI completions (POST /v1/completions): the prompt, max_tokens,
// choices[0].text in each chunk, the usage chunk's completion_tokens.
var protoCompletions = &protocol{
	name: "completions", path: "/v1/completions",
	body:     (*Client).completionsBody,
	chunk:    (*parser).completionsChunk,
	output:   outputCount,
	cached:   detailsCached,
	end:      doneLine,
	logprobs: LogprobsTop,
	finishes: true,
}

func (c *Client) completionsBody(in *Input) *pyjson.Object {
	o := &pyjson.Object{}
	o.Set("model", pyjson.String(in.Model))
	o.Set("prompt", prompt(in))
	o.Set("best_of", jsonOne)
	o.Set("max_tokens", pyjson.Int(in.OutputLen))
	o.Set("stream", boolJSON(c.opt.Stream))
	c.setDefaults(o, in)
	if c.opt.ReturnLogprob && c.opt.TopLogprobsNum > 0 {
		o.Set("logprobs", pyjson.Int(c.opt.TopLogprobsNum))
	}
	o.Update(in.Extra)
	greedy(o, in, jsonZero)
	c.askUsage(o, in.Extra)
	setLoRA(o, in)
	if len(in.Images) > 0 {
		o.Set("image_data", pyjson.Strings(in.Images))
	}
	return o
}

func (p *parser) completionsChunk(at time.Time) error {
	p.promptLen(&p.f)
	if p.c.opt.CacheReport {
		p.sglextCache(&p.f)
	}
	return p.choiceText(true, at)
}
