package backend

import (
	"bytes"
	"fmt"
	"time"

	"benchserve/internal/jsonscan"
	"benchserve/record"
)

// parser applies one backend's rules to the lines (or the one document) of
// a response. It is reused across requests through a pool.
type parser struct {
	c     *Client
	proto *protocol // c.proto
	st    time.Time // just before the request was sent
	rec   *record.Record

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

	// The members of the document being read, for the protocol's hooks:
	// f of an OpenAI-like one, ev of an event (made on the first).
	f  fields
	ev *eventFields

	// The stream integrity check (record.Integrity): the problems found,
	// whether a finish reason came, whether the request asked for several
	// choices (n > 1: choice indexes other than 0 are due), the last
	// sequence_number (Responses) and content block index (Messages).
	integ     record.Integrity
	finished  bool
	multi     bool
	lastSeq   int
	seqSeen   bool
	lastBlock int
	// keep: the text stays in the record (a probe's).
	keep bool
	// The audio of a speech reply: its bytes, and its first ones (for a
	// WAV header).
	audioBytes int
	audioHead  []byte
}

// reset readies a pooled parser for a request of c, keeping its buffers.
func (p *parser) reset(c *Client, st time.Time, rec *record.Record, outputLen int) {
	p.itl.Reset()
	*p = parser{
		c: c, proto: c.proto, st: st, rec: rec, last: st, outputLen: outputLen, requested: outputLen,
		lastRead: -1, runaway: runawayAt(outputLen), lastBlock: -1,
		text: p.text[:0], chunk: p.chunk[:0], cacheRaw: p.cacheRaw[:0], tmpl: p.tmpl[:0],
		itl: p.itl, chunkLens: p.chunkLens[:0], reasoning: p.reasoning[:0], serverReasoning: -1, cum: p.cum[:0],
		audioHead: p.audioHead[:0],
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
	if p.proto.events {
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
	if !p.proto.latencyAtChunk {
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
	if p.proto.events {
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
	if p.proto.splitReasoning {
		// A chunk the template path took is content alone.
		p.reasonLen = 0
		p.chatSplit(at)
	}
}

// parse handles a document in full.
func (p *parser) parse(b []byte, at time.Time) error {
	p.f = fields{}
	v, err := jsonscan.ParseObject(b, p.f.pick)
	if err != nil {
		return err
	}
	if v.Kind != jsonscan.Object {
		return fmt.Errorf("expected a JSON object, got %s", v.Kind)
	}
	if err := p.f.serverError(v); err != nil {
		return err
	}
	if p.proto.chunk == nil {
		return nil
	}
	return p.proto.chunk(p, at)
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

// empty reports a 200 reply that generated nothing, which counts as a
// failure (the reference counts it as a success): no chunk with content,
// no text and no completion tokens reported, streamed or not. A reply
// whose one token was a stop string has no text but 1 token: it
// succeeded. Embeddings generate nothing by design.
func (p *parser) empty() bool {
	p.plainText()
	if p.proto.embedding {
		return false
	}
	if p.proto.audio {
		return p.audioBytes == 0
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
