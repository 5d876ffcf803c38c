package backend

// The body parts the protocols share; each protocol's body is in its file.

import (
	"benchserve/internal/py/pyjson"
)

// Encoded constants.
var (
	jsonTrue  = pyjson.Bool(true)
	jsonFalse = pyjson.Bool(false)
	jsonOne   = pyjson.Int(1)
	jsonZero  = pyjson.Float(0)
)

func boolJSON(b bool) []byte {
	if b {
		return jsonTrue
	}
	return jsonFalse
}

// prompt encodes the prompt as the reference's payload holds it.
func prompt(in *Input) []byte {
	switch {
	case in.Messages != nil:
		return in.Messages
	case in.IDs != nil:
		return pyjson.Ints(in.IDs)
	}
	return pyjson.String(in.Text)
}

// setDefaults adds temperature 0.0 and ignore_eos unless the extra body
// brings its own (completions and chat).
func (c *Client) setDefaults(o *pyjson.Object, in *Input) {
	if !has(in.Extra, "temperature") {
		o.Set("temperature", jsonZero)
	}
	if !has(in.Extra, "ignore_eos") {
		o.Set("ignore_eos", boolJSON(c.opt.IgnoreEOS))
	}
}

// greedy sets a probe's temperature to zero (the protocol's value for
// greedy decoding), whatever the extra body said.
func greedy(o *pyjson.Object, in *Input, zero []byte) {
	if in.Probe {
		o.Set("temperature", zero)
	}
}

func has(o *pyjson.Object, key string) bool { return o != nil && o.Has(key) }

// setLoRA is the reference's hack for SGLang's and vLLM's LoRA conventions.
func setLoRA(o *pyjson.Object, in *Input) {
	if in.LoRA != "" {
		name := pyjson.String(in.LoRA)
		o.Set("model", name)
		o.Set("lora_path", name)
	}
}

// usageOn is stream_options asking for the usage chunk.
var usageOn = []byte(`{"include_usage": true}`)

// askUsage asks a streamed request of a backend with Spec.Usage
// (completions and chat) for the server's token counts, so that the
// output length is the server's rather than the requested maximum:
// stream_options.include_usage is set to true, as
// Python's setdefault would, among the extra body's keys (where the
// reference puts it for multi-turn rounds). A stream_options of the
// user's that is not an object (null: ask for nothing), or that has an
// include_usage, is kept as given.
func (c *Client) askUsage(o, extra *pyjson.Object) {
	if !c.opt.Stream || !c.spec.Usage {
		return
	}
	var raw []byte
	ok := false
	if extra != nil {
		raw, ok = extra.Get("stream_options")
	}
	if !ok {
		if c.opt.ContinuousUsage {
			o.Set("stream_options", usageEveryChunk)
			return
		}
		o.Set("stream_options", usageOn)
		return
	}
	opts, err := pyjson.ParseObject(raw)
	if err != nil || opts.Has("include_usage") {
		return
	}
	opts.Set("include_usage", jsonTrue)
	if c.opt.ContinuousUsage && !opts.Has("continuous_usage_stats") {
		opts.Set("continuous_usage_stats", jsonTrue)
	}
	o.Set("stream_options", opts.Bytes())
}

// usageEveryChunk asks for the usage in every chunk as well (vLLM's and
// SGLang's continuous_usage_stats), for the per-token ITL.
var usageEveryChunk = []byte(`{"include_usage": true, "continuous_usage_stats": true}`)

// messages builds the chat messages: the list prompt as given, or one user
// message whose content is the text, or image parts followed by the text.
func messages(in *Input) []byte {
	if in.Messages != nil {
		return in.Messages
	}
	if in.IDs != nil {
		return pyjson.Ints(in.IDs)
	}
	b := []byte(`[{"role": "user", "content": `)
	if len(in.Images) == 0 {
		b = pyjson.AppendString(b, in.Text)
		return append(b, "}]"...)
	}
	b = append(b, '[')
	for _, img := range in.Images {
		b = append(b, `{"type": "image_url", "image_url": {"url": `...)
		b = pyjson.AppendString(b, img)
		b = append(b, "}}, "...)
	}
	b = append(b, `{"type": "text", "text": `...)
	b = pyjson.AppendString(b, in.Text)
	return append(b, "}]}]"...)
}
