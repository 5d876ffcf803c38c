package backend

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"benchserve/internal/jsonscan"
	"benchserve/record"
)

// maxTokenJump bounds the new tokens one /generate chunk may report, since
// each becomes an ITL entry: a broken counter must not exhaust memory.
const maxTokenJump = 1 << 20

// parser applies one backend's rules to the lines (or the one document) of
// a response. It is reused across requests through a pool.
type parser struct {
	c    *Client
	kind Kind
	st   time.Time // just before the request was sent
	rec  *record.Record

	text      []byte // generated text
	chunk     []byte // the current chunk's text
	itl       record.Gaps
	chunkLens []int32   // only when c.spec.ChunkLens
	started   bool      // the first token came (TTFT is set)
	last      time.Time // the reference's most_recent_timestamp
	latency   float64
	lines     int  // data lines handled
	sse       bool // some line had the "data:" prefix
	done      bool // saw [DONE]
	errEvent  bool // the last line was "event: error" (Responses, Messages)
	whole     bool // the reply was one JSON document, not a stream

	requested     int // the requested output length
	outputLen     int
	lastOutputLen int
	reported      int  // completion tokens the server reported
	served        bool // some completion_tokens came (reported holds the last)
	stop          int8 // the last finish_reason: 0 none, stopLength or stopOther

	// The chunks with content, and those bunched (record.Record.Chunks);
	// readIdx and readDelay describe the read that brought the line
	// being handled, lastRead the read of the content chunk before.
	chunks, bunched, lateBunched int
	readIdx, lastRead            int
	readDelay                    time.Duration
	// runaway is the length at which the reply counts as running past
	// its limit (0: never), warned that Options.Runaway was called.
	runaway int
	warned  bool

	cached    int
	cacheRaw  []byte // the last cached_tokens_details object
	haveCache bool
	textLit   bool // text holds the JSON string literal of the text (native)

	// tmpl is the last chunk parsed in full when its content came from one
	// string, tmpl[hotStart:hotEnd] (hotEnd 0: no template). A chunk equal
	// to it outside that string needs no parse (see quick).
	tmpl             []byte
	hotStart, hotEnd int
	// reasoning is the reasoning text of the reply (chat's
	// reasoning_content, Responses' reasoning, Anthropic's thinking),
	// serverReasoning the server's count of its tokens (-1: none);
	// sawContent: a chunk of content (not reasoning) came (TTFO is set).
	reasoning       []byte
	serverReasoning int
	sawContent      bool
	reasonLen       int // the reasoning bytes at the start of p.chunk (chat)
	// cum is, per chunk with content, the server's running count of
	// completion tokens that came with it (-1: none came).
	cum     []int32
	hot     jsonscan.Value // set by completions and chat: the content string
	noQuick bool           // tests: parse every chunk in full
}

// reset readies a pooled parser for a request of c, keeping its buffers.
func (p *parser) reset(c *Client, st time.Time, rec *record.Record, outputLen int) {
	p.itl.Reset()
	*p = parser{
		c: c, kind: c.kind, st: st, rec: rec, last: st, outputLen: outputLen, requested: outputLen,
		lastRead: -1, runaway: runawayAt(outputLen),
		text: p.text[:0], chunk: p.chunk[:0], cacheRaw: p.cacheRaw[:0], tmpl: p.tmpl[:0],
		itl: p.itl, chunkLens: p.chunkLens[:0], reasoning: p.reasoning[:0], serverReasoning: -1, cum: p.cum[:0],
	}
}

// serverError is an error object the server sent inside a 200 response.
type serverError string

func (e serverError) Error() string { return string(e) }

// line handles one stripped, non-empty line of a stream.
func (p *parser) line(line []byte, at time.Time) error {
	b := line
	if len(b) == 0 || b[0] == ':' { // an SSE comment, such as a keep-alive
		return nil
	}
	if p.kind == KindResponses || p.kind == KindMessages {
		// Their events name themselves in "event:" lines, which the
		// data's "type" repeats, except an error's (see eventError).
		if ev, ok := bytes.CutPrefix(b, []byte("event:")); ok {
			p.errEvent = string(bytes.TrimSpace(ev)) == "error"
			return nil
		}
		if bytes.HasPrefix(b, []byte("id:")) || bytes.HasPrefix(b, []byte("retry:")) {
			return nil
		}
	}
	if e, ok := bytes.CutPrefix(b, []byte("error:")); ok {
		// llama.cpp builds of 2025 sent a mid-stream error in a
		// non-standard "error:" field, not in a data line.
		p.lines++
		return serverError(errorLine(bytes.TrimSpace(e)))
	}
	if bytes.HasPrefix(b, []byte("data:")) {
		b = bytes.TrimLeft(b[5:], " \t")
		p.sse = true
	}
	p.lines++
	if p.kind != KindTRT {
		p.latency = at.Sub(p.st).Seconds()
	}
	if string(b) == "[DONE]" {
		p.done = true
		return nil
	}
	err := p.doc(b, at)
	if se, ok := err.(*jsonscan.SyntaxError); ok {
		se.Offset += cap(line) - cap(b) // count from the start of the line
	}
	return err
}

// doc handles one JSON document: a stream chunk or a whole response.
func (p *parser) doc(b []byte, at time.Time) error {
	if p.kind == KindResponses || p.kind == KindMessages {
		return p.event(b, at)
	}
	if p.hotEnd > 0 && p.quick(b, at) {
		return nil
	}
	p.hotEnd, p.hot = 0, jsonscan.Value{}
	err := p.parse(b, at)
	if err == nil && p.hot.Kind == jsonscan.String && !p.whole && !p.noQuick {
		p.hotStart = cap(b) - cap(p.hot.Raw) // p.hot.Raw is a slice of b
		p.hotEnd = p.hotStart + len(p.hot.Raw)
		p.tmpl = append(p.tmpl[:0], b...)
	}
	return err
}

// quick handles a chunk that equals the template outside its content
// string, which holds a valid string literal: the chunk is then valid JSON
// and every other member is the template's, whose effects (prompt and
// completion tokens, cache details) are already applied, since the template
// is the last chunk parsed in full. Only the content remains to be taken.
// Streams mostly repeat one shape (vLLM and SGLang change only the text
// from chunk to chunk), so most chunks take this path.
func (p *parser) quick(b []byte, at time.Time) bool {
	pre, suf := p.tmpl[:p.hotStart], p.tmpl[p.hotEnd:]
	if len(b) < len(pre)+len(suf)+2 || string(b[:len(pre)]) != string(pre) || string(b[len(b)-len(suf):]) != string(suf) {
		return false
	}
	s := b[len(pre) : len(b)-len(suf)]
	if !jsonscan.IsString(s) {
		return false
	}
	p.content(jsonscan.Value{Kind: jsonscan.String, Raw: s}, at)
	return true
}

// plainText decodes the text native left as a JSON literal.
func (p *parser) plainText() {
	if p.textLit {
		p.chunk = jsonscan.Value{Kind: jsonscan.String, Raw: p.text}.AppendString(p.chunk[:0])
		p.text, p.chunk = p.chunk, p.text
		p.textLit = false
	}
}

// content takes a chunk's content string: a chunk with text is a token.
func (p *parser) content(v jsonscan.Value, at time.Time) {
	p.chunk = v.AppendString(p.chunk[:0])
	if len(p.chunk) == 0 {
		return
	}
	p.token(at, len(p.chunk))
	p.text = append(p.text, p.chunk...)
	if p.kind == KindChat {
		// A chunk the template path took is content alone.
		p.reasonLen = 0
		p.chatSplit(at)
	}
}

// parse handles a document in full.
func (p *parser) parse(b []byte, at time.Time) error {
	var f fields
	v, err := jsonscan.ParseObject(b, f.pick)
	if err != nil {
		return err
	}
	if v.Kind != jsonscan.Object {
		return fmt.Errorf("expected a JSON object, got %s", v.Kind)
	}
	if err := f.serverError(v); err != nil {
		return err
	}
	switch p.kind {
	case KindNative:
		return p.native(&f, at)
	case KindCompletions, KindTruss:
		return p.completions(&f, at)
	case KindChat:
		return p.chat(&f, at)
	case KindTRT:
		return p.trt(&f, at)
	}
	return nil
}

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

// errorLine is the message of an error line's JSON, or the line itself.
func errorLine(b []byte) string {
	if v, err := jsonscan.Parse(b); err == nil {
		return errorMessage(v)
	}
	return string(oneLine(b))
}

// errorMessage is the error's non-empty message member, else the error
// itself: a string, or its JSON text.
func errorMessage(e jsonscan.Value) string {
	if m, _ := e.Get("message"); m.Kind == jsonscan.String && m.Truthy() {
		e = m
	}
	var s []byte
	if e.Kind == jsonscan.String {
		s = e.AppendString(nil)
	} else {
		s = append(s, e.Raw...)
	}
	return string(oneLine(s))
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

// Finish reasons.
const (
	stopLength int8 = 1 + iota // "length": the requested length was reached
	stopOther                  // any other: the server stopped early
)

// runawayAt is the length past which a reply of requested tokens counts
// as running past its limit.
func runawayAt(requested int) int {
	if requested <= 0 {
		return 0
	}
	return max(2*requested, requested+64)
}

// countChunk counts a chunk with content: bunched when it came in the same
// read as the chunk with content before it; and warns once when the reply
// has run past its limit (n is its length so far).
func (p *parser) countChunk(n int) {
	p.chunks++
	if p.readIdx == p.lastRead && p.chunks > 1 {
		p.bunched++
		if p.readDelay > LateRead {
			p.lateBunched++
		}
	}
	p.lastRead = p.readIdx
	if p.runaway > 0 && n >= p.runaway && !p.warned {
		p.warned = true
		if f := p.c.opt.Runaway; f != nil {
			f(p.requested, n)
		}
	}
}

// counts copies the chunk counts into the record.
func (p *parser) counts() {
	r := p.rec
	r.Chunks, r.Bunched, r.LateBunched = clamp32(p.chunks), clamp32(p.bunched), clamp32(p.lateBunched)
}

func clamp32(n int) int32 { return int32(min(n, 1<<31-1)) }

// finishReason notes choices[0].finish_reason, when it is a string.
func (p *parser) finishReason(choice jsonscan.Value) {
	fr, _ := choice.Get("finish_reason")
	if fr.Kind != jsonscan.String {
		return
	}
	if string(fr.Raw) == `"length"` {
		p.stop = stopLength
	} else {
		p.stop = stopOther
	}
}

// token records a chunk with content: the first sets TTFT, each later one
// adds a per-chunk ITL (and, for sglang-oai(-chat), its byte length).
func (p *parser) token(at time.Time, n int) {
	p.cum = append(p.cum, -1)
	p.countChunk(p.chunks + 1)
	if !p.started {
		p.started = true
		p.rec.TTFT = at.Sub(p.st).Seconds()
	} else {
		p.itl.Append(at.Sub(p.last))
		if p.c.spec.ChunkLens {
			p.chunkLens = append(p.chunkLens, int32(min(n, 1<<31-1)))
		}
	}
	p.last = at
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

// empty reports a 200 reply that generated nothing, which counts as a
// failure (the reference counts it as a success): no chunk with content,
// no text and no completion tokens reported, streamed or not. A reply
// whose one token was a stop string has no text but 1 token: it
// succeeded. Embeddings generate nothing by design.
func (p *parser) empty() bool {
	p.plainText()
	if p.kind == KindEmbeddings {
		return false
	}
	if p.whole {
		return len(p.text) == 0 && p.reported <= 0
	}
	return !p.started && p.reported <= 0
}

func (p *parser) emptyError() string {
	if p.whole {
		return "the server answered 200 with no output: empty text and no completion tokens"
	}
	return fmt.Sprintf("the server answered 200 with no output: no chunk with content and no completion tokens in %d data lines", p.lines)
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

func (p *parser) completions(f *fields, at time.Time) error {
	if p.kind == KindCompletions {
		p.promptLen(f)
		if p.c.opt.CacheReport {
			p.sglextCache(f)
		}
	}
	if f.choices.Kind != jsonscan.Array {
		return errors.New("the chunk has no choices array")
	}
	first, ok := f.choices.First()
	if !ok {
		// A usage-only chunk ("choices": []); the reference fails on it.
		if p.kind == KindCompletions {
			p.usageOutputLen(f)
		}
		return nil
	}
	text, err := stringField(first, "text")
	if err != nil {
		return fmt.Errorf("choices[0].%w", err)
	}
	p.finishReason(first)
	p.hot = text
	if len(text.Raw) <= 2 {
		// llama.cpp sends its usage with the last choice, whose text is
		// empty, and no usage-only chunk after it.
		if p.kind == KindCompletions {
			p.usageOutputLen(f)
		}
		return nil
	}
	p.content(text, at)
	if p.kind == KindCompletions && p.usageOutputLen(f) {
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

// chunkTokens is, per ITL gap, the tokens of the chunk that ended it, when
// every chunk with content came with the server's running count.
func (p *parser) chunkTokens() []int32 {
	if len(p.cum) < 2 || p.whole {
		return nil
	}
	out := make([]int32, len(p.cum)-1)
	for k := 1; k < len(p.cum); k++ {
		if p.cum[k] < 0 || p.cum[k-1] < 0 || p.cum[k] < p.cum[k-1] {
			return nil
		}
		out[k-1] = p.cum[k] - p.cum[k-1]
	}
	return out
}

func (p *parser) chat(f *fields, at time.Time) error {
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

// metaFields are the meta_info members native reads, taken in one walk
// (the last of repeated keys, as Get does; Invalid when absent).
type metaFields struct {
	accept, prompt, completion, cached, cacheDetails jsonscan.Value
}

var metaNames = []string{"spec_accept_length", "prompt_tokens", "completion_tokens", "cached_tokens", "cached_tokens_details"}

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

func (p *parser) native(f *fields, at time.Time) error {
	var m metaFields
	it := f.meta.Members()
	for k, v, ok := it.Next(); ok; k, v, ok = it.Next() {
		m.pick(k, v)
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

func (p *parser) trt(f *fields, at time.Time) error {
	if f.textOutput.Kind != jsonscan.String {
		return errors.New("the chunk has no text_output string")
	}
	p.text = f.textOutput.AppendString(p.text)
	// Every chunk counts, even one with empty text.
	p.token(at, 0)
	p.latency = at.Sub(p.st).Seconds()
	return nil
}
