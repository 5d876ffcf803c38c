package backend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"benchserve/internal/hist"
	"benchserve/internal/jsonscan"
	"benchserve/record"
	"benchserve/wire/sse"
)

// maxBody caps a whole (non-streamed) response, like a stream's longest line.
const maxBody = sse.DefaultMaxLine

// keepBuffer is the largest buffer a pooled reader keeps between requests.
const keepBuffer = 1 << 20

// scratch holds one request's buffers (lines, body, parser, clock), reused
// through a pool.
type scratch struct {
	lines  *sse.Reader
	clock  readClock // times the Reads of a stream (clock.go)
	body   []byte
	p      parser
	note   sendNote
	delays hist.Few // the request's read delays, added to the client's at its end
	// The event loop's: the response as it reads it, the request while
	// it streams, the signal of room to write, and ev.resume, bound once.
	x      exchange
	ev     evreq
	wake   chan struct{}
	resume func()
}

var scratches sync.Pool

// newScratch is the pool's New, set in init: a scratch's resume leads back
// to the pool, which a variable's initializer may not refer to.
func newScratch() any {
	c := &scratch{lines: sse.NewReader(nil, 0), wake: make(chan struct{}, 1)}
	c.x.init(c)
	c.resume = c.ev.resume
	return c
}

func init() { scratches.New = newScratch }

func getScratch() *scratch { return scratches.Get().(*scratch) }

func putScratch(c *scratch) {
	if c.lines.BufferSize() > keepBuffer {
		c.lines = sse.NewReader(nil, 0)
	}
	if cap(c.body) > keepBuffer {
		c.body = nil
	}
	c.lines.Reset(nil)
	if c.x.lines.BufferSize() > keepBuffer {
		c.x.init(c)
	}
	c.x.clear()
	c.ev = evreq{}
	c.clock = readClock{}
	c.note = sendNote{}
	c.delays.Reset()
	if cap(c.p.text) > keepBuffer {
		c.p.text = nil
	}
	if cap(c.p.tmpl) > keepBuffer {
		c.p.tmpl = nil
	}
	if c.p.itl.Len() > keepBuffer/4 {
		c.p.itl = record.Gaps{}
	}
	if cap(c.p.chunkLens) > keepBuffer/4 {
		c.p.chunkLens = nil
	}
	c.p = parser{text: c.p.text, chunk: c.p.chunk, cacheRaw: c.p.cacheRaw, tmpl: c.p.tmpl, itl: c.p.itl, chunkLens: c.p.chunkLens}
	scratches.Put(c)
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
	if t := eventsFor(c); t != nil {
		done := make(chan struct{})
		c.startEvents(ctx, t, in, rec, epoch, func() { close(done) })
		<-done
		return
	}
	ctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	cn := getScratch()
	defer putScratch(cn)
	cn.note.gate = in.Gate
	rec.OutputLen = in.OutputLen
	rec.ID = in.ID
	req, err := c.request(ctx, in)
	if err != nil {
		fail(rec, record.KindOther, fmt.Sprintf("building the request: %v", err))
		return
	}
	req = req.WithContext(context.WithValue(ctx, noteKey{}, &cn.note))

	// The clock starts as the request's bytes are written, on a connection
	// that was ready (kept, or opened before the run); a request that had
	// to connect first starts it before connecting, as the reference does.
	// Building the request, and waiting for a processor, is then not in
	// its TTFT: it is its send delay.
	st := time.Now()
	resp, err := c.http.Do(req)
	if n := &cn.note; !n.start.IsZero() {
		rec.SendDelay = n.start.Sub(st).Seconds()
		if !n.dialed {
			st = n.start
		}
	}
	rec.Start = st.Sub(epoch).Seconds()
	if err != nil {
		if cn.note.notSent {
			rec.Sent, rec.Start = false, 0
			return
		}
		kind, msg := c.transportError(ctx, err)
		fail(rec, kind, msg)
		return
	}
	defer resp.Body.Close()
	c.takeID(resp, rec)
	if resp.StatusCode != http.StatusOK {
		fail(rec, statusKind(resp.StatusCode), statusError(resp))
		return
	}
	c.read(ctx, cn, resp.Body, rec, st, in.OutputLen)
	c.addDelays(&cn.delays)
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

// Start sends one request as Do does, and returns; then is called once
// rec is complete. On the event loop nothing waits while the response
// streams: then runs on a goroutine started when it has ended (or at once,
// on this one, when the request could not go out). Elsewhere Start is Do
// followed by then.
func (c *Client) Start(ctx context.Context, in *Input, rec *record.Record, epoch time.Time, then func()) {
	if t := eventsFor(c); t != nil {
		c.startEvents(ctx, t, in, rec, epoch, then)
		return
	}
	c.Do(ctx, in, rec, epoch)
	then()
}

// read parses a 200 response into rec; st is when the request was sent.
func (c *Client) read(ctx context.Context, cn *scratch, body io.Reader, rec *record.Record, st time.Time, outputLen int) {
	p := &cn.p
	p.reset(c, st, rec, outputLen)
	var err error
	if c.streams() {
		err = c.readStream(body, cn)
	} else {
		err = c.readWhole(body, cn)
	}
	c.finishWith(ctx, p, err)
}

// streams reports whether a 200 reply is read as a stream: trt always
// streams, embeddings never do.
func (c *Client) streams() bool {
	return c.kind == KindTRT || (c.opt.Stream && c.kind != KindEmbeddings)
}

// finishWith completes the record from what the parser gathered and the
// reading's error.
func (c *Client) finishWith(ctx context.Context, p *parser, err error) {
	p.counts()
	if err != nil {
		kind, msg, ok := c.ctxFailure(ctx)
		if !ok {
			kind, msg = kindOf(err), err.Error()
		}
		p.fail(kind, msg)
		return
	}
	if p.empty() {
		p.fail(record.KindEmpty, p.emptyError())
		return
	}
	p.finish()
}

// readStream reads the body line by line. An OpenAI or /generate SSE stream
// must end with [DONE]: without it the server stopped mid-generation (a
// server that answers with plain JSON lines is spared the rule).
func (c *Client) readStream(body io.Reader, cn *scratch) error {
	r, p, clk := cn.lines, &cn.p, &cn.clock
	clk.reset(body, p.st, &cn.delays)
	r.Reset(clk)
	for {
		line, read, err := r.Next()
		p.readIdx, p.readDelay = read, clk.delay
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, sse.ErrLineTooLong) {
				return kindErrorf(record.KindTooLarge, "line %d of the response is longer than the %d MiB limit", r.Line()+1, sse.DefaultMaxLine>>20)
			}
			return readError(r.Line(), err)
		}
		if err := p.line(line, clk.at); err != nil {
			return lineError(r.Line(), line, err)
		}
	}
	p.rec.KernelTimed = clk.kernelTimed()
	return c.streamEnd(p)
}

// streamEnd checks a stream read to its end.
func (c *Client) streamEnd(p *parser) error {
	switch {
	case p.lines == 0:
		return kindErrorf(record.KindEmpty, "the server answered 200 with no data lines")
	case p.sse && !p.done && c.kind != KindTRT && c.kind != KindTruss:
		return kindErrorf(record.KindIncomplete, "the stream ended without %s, after %d data lines (the server stopped mid-generation)", streamEndName(c.kind), p.lines)
	}
	return nil
}

// streamEndName is what ends a complete stream of kind.
func streamEndName(kind Kind) string {
	switch kind {
	case KindResponses:
		return "its terminal event (response.completed or response.incomplete)"
	case KindMessages:
		return "message_stop"
	}
	return "data: [DONE]"
}

// readWhole reads a non-streamed response and parses it as one document,
// timed when its last byte came. A body that is a stream after all (the
// extra body may have turned streaming on) is read line by line.
func (c *Client) readWhole(body io.Reader, cn *scratch) error {
	buf := cn.body[:0]
	for {
		if len(buf) == cap(buf) {
			if len(buf) >= maxBody {
				return kindErrorf(record.KindTooLarge, "the response is larger than the %d MiB limit", maxBody>>20)
			}
			buf = slices.Grow(buf, max(4096, len(buf)))
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			cn.body = buf
			return readError(0, err)
		}
	}
	cn.body = buf
	at, kernel := wholeArrival(body, len(buf), cn.p.st)
	return c.wholeDoc(&cn.p, buf, at, kernel)
}

// wholeDoc parses a non-streamed response whose last byte came at at.
func (c *Client) wholeDoc(p *parser, buf []byte, at time.Time, kernel bool) error {
	p.rec.KernelTimed = kernel
	doc := bytes.TrimSpace(buf)
	if len(doc) == 0 {
		kind := record.KindEmpty
		if c.kind == KindEmbeddings {
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
	switch c.kind {
	case KindEmbeddings:
		err = embeddingsDoc(doc)
	case KindChat:
		err = p.chatDoc(doc, at)
	default:
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

// embeddingsDoc checks that an embeddings reply is JSON (the reference
// decodes it) and not an error object.
func embeddingsDoc(doc []byte) error {
	v, err := jsonscan.Parse(doc)
	if err != nil {
		return err
	}
	if e, _ := v.Get("error"); e.Truthy() {
		return serverError(errorMessage(e))
	}
	return nil
}

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
	if p.kind == KindTRT {
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
		if c.opt.DropText && !c.spec.ChunkLens {
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
	if !p.started && p.kind != KindEmbeddings {
		// The server counted tokens but sent no text (the one token was a
		// stop string): the first token came at the end, as in a whole reply.
		r.TTFT = p.latency
	}
	r.Gaps = p.itl.Clone()
	r.ChunkTokens = p.chunkTokens()
	p.keepText()
	switch p.kind {
	case KindNative:
		r.OutputLen, r.OutputSource = p.outputLen, record.OutputServer
	case KindCompletions, KindChat, KindTruss, KindResponses, KindMessages:
		r.OutputLen, r.OutputSource = p.outputCount()
	case KindTRT:
		r.OutputSource = record.OutputRequested
	case KindEmbeddings:
		r.OutputLen = 0
	}
	if p.c.spec.Chat {
		p.splitCounts()
	}
	if p.c.opt.CacheReport && (p.kind == KindNative || p.kind == KindCompletions || p.kind == KindChat) {
		var d *record.CacheDetails
		if p.haveCache {
			d = decodeCacheDetails(p.cacheRaw)
		}
		switch {
		case p.kind == KindNative:
			r.CachedTokens = p.cached
		case d != nil:
			r.CachedTokens = d.Device + d.Host + d.Storage
		}
		r.CacheDetails = d
	}
}
