package backend

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

// Body returns the request body for in, byte for byte what the reference
// tool's json.dumps(payload) sends.
func (c *Client) Body(in *Input) []byte {
	var o *pyjson.Object
	switch c.kind {
	case KindNative:
		o = c.nativeBody(in)
	case KindCompletions:
		o = c.completionsBody(in)
	case KindChat:
		o = c.chatBody(in)
	case KindEmbeddings:
		o = embeddingsBody(in)
	case KindTRT:
		o = c.trtBody(in)
	case KindTruss:
		o = c.trussBody(in)
	case KindResponses:
		o = c.responsesBody(in)
	case KindMessages:
		o = c.messagesBody(in)
	default:
		o = &pyjson.Object{}
	}
	return o.Bytes()
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

func (c *Client) nativeBody(in *Input) *pyjson.Object {
	sp := &pyjson.Object{}
	sp.Set("temperature", pyjson.Float(c.opt.Temperature))
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

func has(o *pyjson.Object, key string) bool { return o != nil && o.Has(key) }

// setLoRA is the reference's hack for SGLang's and vLLM's LoRA conventions.
func setLoRA(o *pyjson.Object, in *Input) {
	if in.LoRA != "" {
		name := pyjson.String(in.LoRA)
		o.Set("model", name)
		o.Set("lora_path", name)
	}
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
	c.askUsage(o, in.Extra)
	setLoRA(o, in)
	if len(in.Images) > 0 {
		o.Set("image_data", pyjson.Strings(in.Images))
	}
	return o
}

func (c *Client) chatBody(in *Input) *pyjson.Object {
	o := &pyjson.Object{}
	o.Set("model", pyjson.String(in.Model))
	o.Set("messages", messages(in))
	o.Set("max_completion_tokens", pyjson.Int(in.OutputLen))
	o.Set("stream", boolJSON(c.opt.Stream))
	c.setDefaults(o, in)
	o.Update(in.Extra)
	c.askUsage(o, in.Extra)
	setLoRA(o, in)
	return o
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

func embeddingsBody(in *Input) *pyjson.Object {
	o := &pyjson.Object{}
	o.Set("input", prompt(in))
	o.Set("model", pyjson.String(in.Model))
	setLoRA(o, in)
	o.Update(in.Extra)
	return o
}

func (c *Client) trtBody(in *Input) *pyjson.Object {
	o := &pyjson.Object{}
	o.Set("accumulate_tokens", jsonTrue)
	o.Set("text_input", prompt(in))
	o.Set("temperature", pyjson.Float(0.000001))
	o.Set("top_p", pyjson.Float(1.0))
	o.Set("max_tokens", pyjson.Int(in.OutputLen))
	o.Set("stream", jsonTrue)
	o.Set("min_length", pyjson.Int(in.OutputLen))
	o.Set("end_id", pyjson.Int(1048576))
	o.Update(in.Extra)
	if !c.opt.IgnoreEOS {
		o.Delete("min_length")
		o.Delete("end_id")
	}
	return o
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
	return o
}
