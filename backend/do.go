package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"benchserve/record"
	"benchserve/wire/http1"
)

// keepBuffer is the largest buffer a pooled parser keeps between requests.
const keepBuffer = 1 << 20

// scratch is one request in flight: the wire's state machine, of which
// scratch is the Handler, and the parser its lines go to; reused through
// a pool.
type scratch struct {
	x         http1.Exchange
	p         parser
	c         *Client
	in        *Input
	outputLen int
	send      http1.Send
	then      func()
	noQuick   bool // tests: parse every chunk in full
}

var scratches = sync.Pool{New: func() any {
	cn := &scratch{}
	cn.x.Init(cn)
	return cn
}}

func getScratch() *scratch { return scratches.Get().(*scratch) }

func putScratch(cn *scratch) {
	cn.x.Clear()
	if cap(cn.p.text) > keepBuffer {
		cn.p.text = nil
	}
	if cap(cn.p.tmpl) > keepBuffer {
		cn.p.tmpl = nil
	}
	if cn.p.itl.Len() > keepBuffer/4 {
		cn.p.itl = record.Gaps{}
	}
	if cap(cn.p.chunkLens) > keepBuffer/4 {
		cn.p.chunkLens = nil
	}
	cn.p = parser{text: cn.p.text, chunk: cn.p.chunk, cacheRaw: cn.p.cacheRaw, tmpl: cn.p.tmpl, itl: cn.p.itl, chunkLens: cn.p.chunkLens, audioHead: cn.p.audioHead, ev: cn.p.ev}
	cn.c, cn.in, cn.then, cn.send, cn.noQuick = nil, nil, nil, http1.Send{}, false
	scratches.Put(cn)
}

// Do sends one request and fills rec: Start (seconds since epoch, stamped
// just before its bytes are written, or before connecting when it had to
// connect), Success, Latency, TTFT, Gaps, ChunkLens (see
// Spec.ChunkLens), Text or its token count (see Options.Counter),
// PromptLen (when the server reports prompt_tokens), OutputLen and its
// source, SendDelay, the chunk counts, ID, Error and the cache and
// speculative-decoding fields. The caller has set the input lengths and
// PromptLen. All failures end up in rec.Error, as one line, classified in
// rec.ErrorKind. When in.Gate was closed before the request could be
// written, nothing is sent and rec.Sent is cleared.
func (c *Client) Do(ctx context.Context, in *Input, rec *record.Record, epoch time.Time) {
	done := make(chan struct{})
	c.Start(ctx, in, rec, epoch, func() { close(done) })
	<-done
}

// Start sends one request as Do does, and returns; then is called once
// rec is complete. On the event loop nothing waits while the response
// streams: then runs on a goroutine started when it has ended (or at once,
// on this one, when the request could not go out). Through Go's poller,
// or another RoundTripper, Start is Do followed by then.
func (c *Client) Start(ctx context.Context, in *Input, rec *record.Record, epoch time.Time, then func()) {
	cn := getScratch()
	cn.c, cn.in, cn.outputLen, cn.then = c, in, in.OutputLen, then
	rec.OutputLen = in.OutputLen
	rec.ID = in.ID
	if c.proto.audioIn {
		countAudioIn(in, rec)
	}
	cn.send = http1.Send{Record: rec, Epoch: epoch, Gate: in.Gate, Timeout: c.opt.Timeout, Stream: c.streams(),
		Cancel: in.Cancel, CancelAfter: in.CancelAfter}
	cn.x.Start(ctx, c.rt, &cn.send)
}

// Request is the request to the server, with its body (http1.Handler).
func (cn *scratch) Request(ctx context.Context) (*http.Request, error) {
	return cn.c.request(ctx, cn.in)
}

// Begin readies the parser for the response to a request sent at st.
func (cn *scratch) Begin(st time.Time) {
	cn.p.reset(cn.c, st, cn.send.Record, cn.outputLen)
	cn.p.noQuick = cn.noQuick
	cn.p.multi = cn.in != nil && multiChoice(cn.in.Extra)
	cn.p.keep = cn.in != nil && cn.in.Probe
}

// Head keeps the server's request id.
func (cn *scratch) Head(resp *http.Response) { cn.c.takeID(resp, cn.send.Record) }

// Line parses line n of a stream.
func (cn *scratch) Line(line []byte, n int, a http1.Arrival) error {
	p := &cn.p
	p.readIdx, p.readDelay = a.Read, a.Delay
	if err := p.line(line, a.At); err != nil {
		return lineError(n, line, err)
	}
	return nil
}

// End checks a stream read to its end.
func (cn *scratch) End() error { return cn.c.streamEnd(&cn.p) }

// Whole parses a reply read whole.
func (cn *scratch) Whole(body []byte, at time.Time, kernel bool) error {
	return cn.c.wholeDoc(&cn.p, body, at, kernel)
}

// Done completes the record of a 200 reply from what the parser gathered
// and the reading's error, gives the scratch back and calls then.
func (cn *scratch) Done(ok bool, err error) {
	c := cn.c
	if ok {
		c.finishWith(&cn.p, err)
		c.addDelays(cn.x.Delays())
	}
	then := cn.then
	putScratch(cn)
	then()
}

// request is in's request to the server, with its body.
func (c *Client) request(ctx context.Context, in *Input) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(c.Body(in)))
	if err != nil {
		return nil, err
	}
	req.Header = c.headerFor(in)
	if c.host != "" {
		req.Host = c.host
	}
	return req, nil
}

// takeID keeps the server's request id: it stands in for ours where ours
// was not sent (trt sends no headers, a --header may carry one of the
// user's), and is kept beside ours where it differs.
func (c *Client) takeID(resp *http.Response, rec *record.Record) {
	if id := resp.Header.Get("X-Request-Id"); id != "" && id != rec.ID {
		if c.ownID && rec.ID != "" {
			rec.ServerID = id
		} else {
			rec.ID = id
		}
	}
}

// streams reports whether a 200 reply is read as a stream: as asked,
// unless the protocol always streams (trt) or never does (embeddings).
func (c *Client) streams() bool {
	return c.proto.stream == streamAlways || (c.opt.Stream && c.proto.stream != streamNever)
}

// finishWith completes the record from what the parser gathered and the
// reading's error (worded and of a kind, by the wire, when the request's
// context ended it).
func (c *Client) finishWith(p *parser, err error) {
	p.counts()
	if err != nil {
		p.integrity(err)
		p.fail(kindOf(err), err.Error())
		return
	}
	if p.empty() {
		p.integrity(nil)
		p.fail(record.KindEmpty, p.emptyError())
		return
	}
	p.finish()
	p.usageChecks()
	p.integrity(nil)
	retokenizedCheck(p.rec)
}

// streamEnd checks a stream read to its end. An SSE stream must end as
// its protocol says (protocol.end: an OpenAI or /generate stream with
// [DONE]): without it the server stopped mid-generation (a server that
// answers with plain JSON lines is spared the rule).
func (c *Client) streamEnd(p *parser) error {
	p.streamEndChecks()
	switch {
	case p.lines == 0:
		return kindErrorf(record.KindEmpty, "the server answered 200 with no data lines")
	case p.sse && !p.done && c.proto.end != "":
		return kindErrorf(record.KindIncomplete, "the stream ended without %s, after %d data lines (the server stopped mid-generation)", c.proto.end, p.lines)
	}
	return nil
}

// wholeDoc parses a non-streamed response whose last byte came at at.
func (c *Client) wholeDoc(p *parser, buf []byte, at time.Time, kernel bool) error {
	p.rec.KernelTimed = kernel
	if c.proto.audio && len(buf) > 0 && buf[0] != '{' {
		// Audio is binary: no byte of it is space to trim.
		p.lines++
		p.whole = true
		p.latency = at.Sub(p.st).Seconds()
		return c.proto.whole(p, buf, at)
	}
	doc := bytes.TrimSpace(buf)
	if len(doc) == 0 {
		kind := record.KindEmpty
		if c.proto.embedding {
			kind = record.KindInvalid
		}
		return kindErrorf(kind, "the server answered 200 with an empty body")
	}
	if bytes.HasPrefix(doc, []byte("data:")) {
		for i, line := range bytes.Split(doc, []byte("\n")) {
			if line = bytes.TrimSpace(line); len(line) > 0 {
				if err := p.line(line, at); err != nil {
					return lineError(i+1, line, err)
				}
			}
		}
		return nil
	}
	p.lines++
	p.whole = true
	p.latency = at.Sub(p.st).Seconds()
	var err error
	if whole := c.proto.whole; whole != nil {
		err = whole(p, doc, at)
	} else {
		err = p.doc(doc, at)
	}
	var se serverError
	if err != nil && !errors.As(err, &se) {
		err = fmt.Errorf("the response: %w; it starts %q", err, excerpt(doc))
	}
	return err
}

// lineError names the line of the stream that could not be used.
func lineError(n int, line []byte, err error) error {
	var se serverError
	if errors.As(err, &se) {
		return se
	}
	return fmt.Errorf("line %d of the response: %w; the line starts %q", n, err, excerpt(line))
}

func excerpt(b []byte) []byte {
	const n = 80
	if len(b) <= n {
		return b
	}
	return b[:n]
}

// fail marks rec failed with kind and msg.
func fail(rec *record.Record, kind, msg string) {
	rec.Success = false
	rec.Error = msg
	rec.ErrorKind = kind
	rec.OutputLen = 0
}

// fail ends a request that got a 200 but could not be read. Like the
// reference, it keeps the TTFT and ITL gathered so far (they appear in
// --output-details) but no text, except trt, which builds it in place.
func (p *parser) fail(kind, msg string) {
	p.plainText()
	r := p.rec
	fail(r, kind, msg)
	r.Gaps = p.itl.Clone()
	if p.c.spec.ChunkLens {
		r.ChunkLens = slices.Clone(p.chunkLens)
	}
	if p.proto.textInPlace {
		r.Text = string(p.text)
	}
}

// keepText stores the text of a successful reply, or only its token count
// (see Options.DropText).
func (p *parser) keepText() {
	r, c := p.rec, p.c
	if c.spec.ChunkLens {
		r.ChunkLens = slices.Clone(p.chunkLens)
	}
	text := string(p.text)
	needed := p.stop == stopOther && !(p.served && (p.reported > 0 || len(p.text) == 0))
	if c.opt.Counter != nil && (!c.opt.DeferCount || needed) {
		r.TextTokens, r.TextCounted = c.opt.Counter.Count(text), true
		if c.opt.DropText && !c.spec.ChunkLens && !p.keep {
			return
		}
	}
	r.Text = text
}

// CountText counts a successful reply's text that Do left uncounted
// (Options.DeferCount), and drops the text when Options.DropText says.
func (c *Client) CountText(r *record.Record) {
	if !r.Success || c.opt.Counter == nil {
		return
	}
	if !r.TextCounted {
		r.TextTokens, r.TextCounted = c.opt.Counter.Count(r.Text), true
		retokenizedCheck(r)
	}
	if c.opt.DropText && !c.spec.ChunkLens {
		r.Text = ""
	}
}

// splitCounts splits a chat-like reply's output into reasoning and
// content tokens: the server's reasoning count, else the reasoning text's
// own (0 without a tokenizer), and the rest content.
func (p *parser) splitCounts() {
	r := p.rec
	reasoning := p.serverReasoning
	if reasoning < 0 {
		reasoning = 0
		if len(p.reasoning) > 0 && p.c.opt.Counter != nil {
			reasoning = p.c.opt.Counter.Count(string(p.reasoning))
		}
	}
	r.ReasoningTokens = min(reasoning, r.OutputLen)
	r.ContentTokens = r.OutputLen - r.ReasoningTokens
	if !p.sawContent {
		r.TTFO, r.ContentTokens = 0, 0
	}
}

// finish completes a successful request.
func (p *parser) finish() {
	p.plainText()
	r := p.rec
	r.Success = true
	r.Error, r.ErrorKind = "", ""
	r.Latency = p.latency
	if !p.started && !p.proto.embedding {
		// The server counted tokens but sent no text (the one token was a
		// stop string): the first token came at the end, as in a whole reply.
		r.TTFT = p.latency
	}
	r.Gaps = p.itl.Clone()
	r.ChunkTokens = p.chunkTokens()
	p.keepText()
	p.proto.output(p, r)
	if p.c.spec.Chat {
		p.splitCounts()
	}
	if p.c.opt.CacheReport && p.proto.cached != nil {
		var d *record.CacheDetails
		if p.haveCache {
			d = decodeCacheDetails(p.cacheRaw)
		}
		if n, ok := p.proto.cached(p, d); ok {
			r.CachedTokens = n
		}
		r.CacheDetails = d
	}
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
