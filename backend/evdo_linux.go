//go:build linux

package backend

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"benchserve/record"
)

// eventsFor is the transport that sends c's requests through the event
// loop: plain HTTP, on Linux, through NewHTTPClient's transport, unless
// BENCHSERVE_RECEIVE=poller.
func eventsFor(c *Client) *transport {
	t, ok := c.http.Transport.(*transport)
	if !ok || !strings.HasPrefix(c.url, "http://") || !eventsOn() {
		return nil
	}
	return t
}

// posted stands for every request in the parsing of responses, which
// needs only its method: the request itself, and its body, are garbage
// once written (at thousands of streams, most of a request's memory).
var posted = &http.Request{Method: http.MethodPost}

// evreq is one request on the event loop, from its first write to its
// record: what a goroutine would otherwise hold on its stack while the
// loop reads. While the response streams, nothing waits for it: the loop
// starts a goroutine (resume) when it ends.
type evreq struct {
	c      *Client
	t      *transport
	ctx    context.Context
	cancel context.CancelFunc
	in     *Input
	rec    *record.Record
	epoch  time.Time
	cn     *scratch
	then   func()

	buf     *bytes.Buffer // the request's bytes until written
	key     string
	st      time.Time // before the first attempt
	s       *sock
	reused  bool
	retried bool
	n       int // bytes of the request written
	stop    func() bool
}

// startEvents is Start on the event loop. It keeps Do's rules: the clock,
// the gate, one retry on a kept connection the server had closed, the
// errors' words.
func (c *Client) startEvents(ctx context.Context, t *transport, in *Input, rec *record.Record, epoch time.Time, then func()) {
	cn := getScratch()
	ctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	e := &cn.ev
	*e = evreq{c: c, t: t, ctx: ctx, cancel: cancel, in: in, rec: rec, epoch: epoch, cn: cn, then: then}
	cn.note.gate = in.Gate
	rec.OutputLen = in.OutputLen
	rec.ID = in.ID
	var err error
	if e.buf, e.key, err = c.wire(ctx, in, t); err != nil {
		fail(rec, record.KindOther, fmt.Sprintf("building the request: %v", err))
		e.done()
		return
	}
	e.st = time.Now()
	e.attempt()
}

// attempt writes the request on a connection and hands the connection to
// its loop, which calls resume once the response has ended; when it
// cannot, it finishes the request itself.
func (e *evreq) attempt() {
	c, cn, x, note := e.c, e.cn, &e.cn.x, &e.cn.note
	for {
		var err error
		if e.buf == nil { // a retry: the request built again
			if e.buf, _, err = c.wire(e.ctx, e.in, e.t); err != nil {
				e.finish(err)
				return
			}
		}
		if e.s, e.reused, err = e.t.getSock(e.ctx, e.key, e.retried); err != nil {
			e.finish(err)
			return
		}
		s := e.s
		note.dialed, note.start = !e.reused, time.Time{}
		x.start(c, posted)
		s.x = x
		e.stop = context.AfterFunc(e.ctx, s.shutdown)
		e.n = 0
		passed := e.in.Gate.pass(func() {
			e.n, err = s.write(e.buf.Bytes(), func() { note.start = time.Now() })
		})
		putWire(e.buf)
		e.buf = nil
		if !passed {
			e.stop()
			e.t.putSock(s)
			e.rec.Sent, e.rec.Start = false, 0
			e.done()
			return
		}
		if err == nil {
			sent := e.st
			if !note.dialed {
				sent = note.start
			}
			cn.p.reset(c, sent, e.rec, e.in.OutputLen)
			select {
			case <-cn.wake:
			default:
			}
			if err = s.loop.watch(s, sockReading); err == nil {
				return // resume goes on
			}
		}
		if !e.ended(err) {
			return
		}
	}
}

// resume goes on with the request once the loop is done with its
// response (the loop starts it on a goroutine of its own).
func (e *evreq) resume() {
	var err error
	if x := &e.cn.x; x.in.resp == nil {
		err = x.err // no response came
	}
	if e.ended(err) {
		e.attempt()
	}
}

// ended completes an attempt that failed with err or whose response has
// ended. It reports whether to try again on a new connection; otherwise
// the request is finished.
func (e *evreq) ended(err error) (again bool) {
	stopped := e.stop()
	s, x := e.s, &e.cn.x
	if err != nil {
		s.close()
		// As the transport: a kept connection the server had closed is
		// tried once more on a new one, when no byte came back.
		closed := e.n == 0 || closedByPeer(err)
		if e.reused && closed && x.in.got == 0 && !e.retried && e.ctx.Err() == nil {
			e.retried = true
			return true
		}
		e.finish(err)
		return false
	}
	e.c.conclude(e.ctx, e.cn, e.rec)
	if e.t.keep && stopped && x.err == nil && x.in.reusable() {
		e.t.putSock(s)
	} else {
		s.close()
	}
	e.finish(nil)
	return false
}

// finish stamps the request's start and send delay, words a transport
// error, and hands the record on.
func (e *evreq) finish(err error) {
	note, rec, st := &e.cn.note, e.rec, e.st
	if !note.start.IsZero() {
		rec.SendDelay = note.start.Sub(st).Seconds()
		if !note.dialed {
			st = note.start
		}
	}
	rec.Start = st.Sub(e.epoch).Seconds()
	if err != nil {
		kind, msg := e.c.transportError(e.ctx, err)
		fail(rec, kind, msg)
	}
	e.done()
}

// done gives back what the request held and calls its then.
func (e *evreq) done() {
	putWire(e.buf)
	e.cancel()
	then := e.then
	putScratch(e.cn)
	then()
}

// conclude completes rec from the response the loop read.
func (c *Client) conclude(ctx context.Context, cn *scratch, rec *record.Record) {
	x := &cn.x
	resp := x.in.resp
	cn.body = x.whole
	c.takeID(resp, rec)
	if resp.StatusCode != http.StatusOK {
		resp.Body = io.NopCloser(x.errorBody())
		fail(rec, statusKind(resp.StatusCode), statusError(resp))
		return
	}
	err := x.err
	if err == nil && x.in.whole() {
		err = c.wholeDoc(&cn.p, x.whole, x.at, x.kernel) // timed by its last read
	}
	c.finishWith(ctx, &cn.p, err)
	c.addDelays(&cn.delays)
}

// wire is in's request as it goes out, head and body, in a pooled
// buffer, and the key of its server's connections. Without keep-alive
// it asks the server to close the connection, as the transport does.
func (c *Client) wire(ctx context.Context, in *Input, t *transport) (*bytes.Buffer, string, error) {
	req, err := c.request(ctx, in)
	if err != nil {
		return nil, "", err
	}
	req.Close = !t.keep
	buf := reqBufs.Get().(*bytes.Buffer)
	buf.Reset()
	key := connKey(req)
	if err := t.writeHead(req, key, buf); err != nil {
		putWire(buf)
		return nil, "", err
	}
	return buf, key, nil
}

func putWire(buf *bytes.Buffer) {
	if buf != nil && buf.Cap() <= 1<<20 {
		reqBufs.Put(buf)
	}
}
