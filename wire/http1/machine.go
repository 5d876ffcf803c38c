package http1

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"benchserve/internal/hist"
	"benchserve/record"
	"benchserve/wire/netstamp"
	"benchserve/wire/sse"
)

// Handler reads one request's response as the state machine hands it on.
// Its methods run on whichever goroutine moves the request along (the
// event loop's, for Line and End), one at a time.
type Handler interface {
	// Request builds the request; again for a retry.
	Request(ctx context.Context) (*http.Request, error)
	// Begin: the request went out, its clock starting at st; a retry
	// begins again.
	Begin(st time.Time)
	// Head is the response's head, whatever its status, once the
	// response has ended.
	Head(resp *http.Response)
	// Line is line n of a 200 response read as a stream. An error stops
	// the reading and is the request's.
	Line(line []byte, n int, a Arrival) error
	// End follows a stream's last line: its error says the stream was
	// incomplete.
	End() error
	// Whole is a 200 response's body read whole, its last byte having
	// arrived at at (by the kernel's receive time when kernel is set).
	Whole(body []byte, at time.Time, kernel bool) error
	// Done ends the request, once. ok: a 200's body was read, err being
	// the reading's error (nil, or worded and of a kind for the record),
	// and the handler completes the record. Otherwise the state machine
	// has stamped the failure (or cleared Record.Sent for a request the
	// gate stopped). The Exchange may be reused from then on.
	Done(ok bool, err error)
}

// Arrival is when a line came: At, the time of the read that completed it
// (the kernel's receive time of its newest bytes when known), the read's
// number (Read, from 1) and how long its bytes waited in the socket before
// it (Delay; 0 without a kernel receive time).
type Arrival struct {
	At    time.Time
	Read  int
	Delay time.Duration
}

// Send is one request's settings for Exchange.Start.
type Send struct {
	// Record receives the wire's facts: Start (seconds since Epoch,
	// stamped just before the request's bytes are written, or before
	// connecting when it had to connect), SendDelay, Sent (cleared when
	// the gate stopped it), KernelTimed, and the failure of a request that
	// got no response or an error status.
	Record *record.Record
	Epoch  time.Time
	// Gate, when set and closed before the request is written, keeps it
	// from being sent.
	Gate *Gate
	// Timeout bounds the request.
	Timeout time.Duration
	// Stream reads a 200's body as lines; else it is read whole.
	Stream bool
	// Cancel: the client cancels the request on purpose when its response
	// has not ended CancelAfter after it was fully written (through a
	// Transport): its connection is closed, not reused, and it fails with
	// record.KindCancelled and Record.CancelAt set.
	Cancel      bool
	CancelAfter time.Duration
}

// Exchange is the request state machine: one request from its first write
// to its record, reused request after request (Init once). It writes the
// request past the gate, stamps the send clock, sends it once more on a new
// connection when a kept one turns out closed, and reads the response
// (inbound, for the head, up to maxHead, and the framing), handing a 200's
// body to the Handler as timed lines or whole. The receivers move the
// bytes: a pconn reads on the request's goroutine, a sock on the event
// loop's, which resumes the request on a goroutine of its own once the
// response has ended. Nothing else waits while a response streams there.
type Exchange struct {
	h Handler

	// The request.
	t        *Transport
	ctx      context.Context
	cancel   context.CancelFunc
	rec      *record.Record
	epoch    time.Time
	gate     *Gate
	timeout  time.Duration
	stream   bool
	key      string
	events   bool          // its connections are the event loop's
	buf      *bytes.Buffer // the request's bytes until written
	st       time.Time     // before the first attempt
	c        conn
	reused   bool
	retried  bool
	dialed   bool      // the attempt's connection was opened for it
	start    time.Time // its first byte was about to be written
	n        int       // bytes of the request written
	gated    bool
	noStart  bool // Body, Response: the record's start is not stamped
	stop     func() bool
	resumeFn func() // x.resume, bound once
	wake     chan struct{}

	// The cancellation on purpose (Send.Cancel): the timer armed once the
	// request is written, its deadline, and whether it fired.
	cancelSel   bool
	cancelAfter time.Duration
	cancelTimer *time.Timer
	cancelAt    time.Time
	firedAt     *atomic.Int64 // when the timer fired, ns after cancelAt, plus one
	dropped     bool

	// The response: the decoder, the lines, the body kept whole (or an
	// error status's, up to limit bytes, after which reading stops: cut).
	in    inbound
	lines *sse.Splitter
	whole []byte
	limit int
	cut   bool
	// The reads: at, delay and kernel describe the last (clock.go);
	// pending: it has not yet brought body bytes.
	floor              time.Time
	at                 time.Time
	delay              time.Duration
	kernel, pending    bool
	reads, kernelReads int
	delays             hist.Few // the kernel-timed reads' delays
	rbuf               []byte   // a poller read's buffer

	// err is the outcome: nil, a transport error (no head came: in.resp
	// is nil) or the reading's error, worded for the record.
	err     error
	bodyErr error // the error a body or line handler stopped with

	lineFn, bodyFn func([]byte) error // x.line and x.body, bound once
}

// Init readies x for h's requests.
func (x *Exchange) Init(h Handler) {
	x.h = h
	x.lines = sse.NewSplitter(0)
	x.lineFn, x.bodyFn, x.resumeFn = x.line, x.body, x.resume
}

// wakeChan makes the event loop's wake-up channel on x's first use of the
// loop, not in Init: an Exchange made in a synctest bubble (a test's,
// through Go's poller) and pooled would otherwise carry a channel of the
// bubble out of it, which the runtime refuses to use.
func (x *Exchange) wakeChan() {
	if x.wake == nil {
		x.wake = make(chan struct{}, 1)
	}
}

// keepBuffer is the largest buffer x keeps between requests.
const keepBuffer = 1 << 20

// Clear drops what x holds of the last request, keeping its buffers.
func (x *Exchange) Clear() {
	if x.lines.BufferSize() > keepBuffer {
		x.lines = sse.NewSplitter(0)
	}
	if cap(x.whole) > keepBuffer {
		x.whole = nil
	}
	x.in.reset(nil)
	x.lines.Reset()
	x.delays.Reset()
	*x = Exchange{h: x.h, in: x.in, lines: x.lines, whole: x.whole[:0], delays: x.delays, rbuf: x.rbuf,
		lineFn: x.lineFn, bodyFn: x.bodyFn, resumeFn: x.resumeFn, wake: x.wake}
}

// Delays are the delays of the request's kernel-timed reads of its body:
// from the kernel's receive time of a read's newest bytes to the read.
func (x *Exchange) Delays() *hist.Few { return &x.delays }

// posted stands for every request in the parsing of responses, which
// needs only its method: the request itself, and its body, are garbage
// once written (at thousands of streams, most of a request's memory).
var posted = &http.Request{Method: http.MethodPost}

// Start sends one request through rt and reads its response into x's
// Handler, whose Done ends it: on this goroutine, or, through the event
// loop, on another once the response has ended. rt is a Transport, else
// any http.RoundTripper, through which the request then goes (no retry of
// its own, the gate checked before it is called, no send delay).
func (x *Exchange) Start(ctx context.Context, rt http.RoundTripper, s *Send) {
	x.ctx, x.cancel = context.WithTimeout(ctx, s.Timeout)
	x.rec, x.epoch, x.gate, x.timeout, x.stream = s.Record, s.Epoch, s.Gate, s.Timeout, s.Stream
	x.cancelSel, x.cancelAfter = s.Cancel, s.CancelAfter
	req, err := x.h.Request(x.ctx)
	if err != nil {
		fail(x.rec, record.KindOther, "building the request: "+err.Error())
		x.cancel()
		x.h.Done(false, nil)
		return
	}
	t, ok := rt.(*Transport)
	if !ok {
		x.roundTrip(rt, req)
		return
	}
	x.t = t
	x.key = reqKey(req)
	x.st = time.Now()
	if x.events, err = t.eventsFor(x.key); err == nil {
		x.buf, err = t.wire(req, x.key)
	}
	if err != nil {
		x.finish(err)
		return
	}
	x.attempt()
}

// wire is req as it goes out, head and body, in a pooled buffer. Without
// keep-alive it asks the server to close the connection.
func (t *Transport) wire(req *http.Request, key string) (*bytes.Buffer, error) {
	req.Close = !t.keep
	buf := reqBufs.Get().(*bytes.Buffer)
	buf.Reset()
	if err := t.writeHead(req, key, buf); err != nil {
		putBuf(buf)
		return nil, err
	}
	return buf, nil
}

// attempt writes the request on a connection and has its receiver read
// the response; when the reading goes on on the event loop, resume
// continues.
func (x *Exchange) attempt() {
	t := x.t
	for {
		var err error
		if x.buf == nil { // a retry: the request built again
			var req *http.Request
			if req, err = x.h.Request(x.ctx); err == nil {
				x.buf, err = t.wire(req, x.key)
			}
			if err != nil {
				x.finish(err)
				return
			}
		}
		if x.c, x.reused, err = t.get(x.ctx, x.key, x.retried, x.events); err != nil {
			putBuf(x.buf)
			x.buf = nil
			x.finish(err)
			return
		}
		c := x.c
		x.dialed, x.start = !x.reused, time.Time{}
		x.ready()
		x.stop = context.AfterFunc(x.ctx, c.shutdown)
		x.n = 0
		passed := x.gate.pass(func() { x.n, err = c.write(x, x.buf.Bytes()) })
		putBuf(x.buf)
		x.buf = nil
		if !passed {
			x.stop()
			t.put(x.key, c, x.events)
			x.gated = true
			x.finish(nil)
			return
		}
		if err == nil {
			x.arm(c)
			x.floor = x.st
			if !x.dialed {
				x.floor = x.start
			}
			x.h.Begin(x.floor)
			var async bool
			if async, err = c.receive(x); err == nil {
				if async {
					return // resume goes on
				}
				err = x.outcome()
			}
		}
		if !x.ended(err) {
			return
		}
	}
}

// arm starts the timer of a request to cancel, now that it is fully
// written: at its deadline (an absolute instant on the monotonic clock)
// the connection is shut down, which ends the reading as a context's end
// does. The timer runs no goroutine until it fires.
func (x *Exchange) arm(c conn) {
	if !x.cancelSel {
		return
	}
	at, fired := time.Now().Add(x.cancelAfter), new(atomic.Int64)
	x.cancelAt, x.firedAt = at, fired
	x.cancelTimer = time.AfterFunc(time.Until(at), func() {
		fired.Store(int64(time.Since(at)) + 1)
		c.shutdown()
	})
}

// disarm stops the cancellation timer, noting whether it had fired.
func (x *Exchange) disarm() {
	if x.cancelTimer != nil {
		if !x.cancelTimer.Stop() {
			x.dropped = true
		}
		x.cancelTimer = nil
	}
}

// first is called just before the request's first byte is written.
func (x *Exchange) first() { x.start = time.Now() }

// readBuf is the buffer a poller read fills.
func (x *Exchange) readBuf() []byte {
	if x.rbuf == nil {
		x.rbuf = make([]byte, readBuffer)
	}
	return x.rbuf
}

// resume goes on with the request once the event loop is done with its
// response (the loop starts it on a goroutine of its own).
func (x *Exchange) resume() {
	if x.ended(x.outcome()) {
		x.attempt()
	}
}

// outcome is the error of an attempt whose response ended: the transport
// error when no response came.
func (x *Exchange) outcome() error {
	if x.in.resp == nil {
		return x.err
	}
	return nil
}

// ended completes an attempt that failed with err or whose response has
// ended. It reports whether to try again on a new connection; otherwise
// the request is finished.
func (x *Exchange) ended(err error) (again bool) {
	stopped := x.stop()
	x.disarm()
	c := x.c
	x.c = nil
	if err != nil {
		c.close()
		if !x.dropped && retryable(x.ctx, x.reused, x.retried, x.n, x.in.got, err) {
			x.retried = true
			return true
		}
		x.finish(err)
		return false
	}
	if x.t.keep && stopped && !x.dropped && x.err == nil && x.in.reusable() {
		x.t.put(x.key, c, x.events)
	} else {
		c.close()
	}
	x.finish(nil)
	return false
}

// finish stamps the record's wire facts (the start and send delay, a
// transport error or an error status) and ends the request: err is the
// transport error, when no response came.
func (x *Exchange) finish(err error) {
	rec := x.rec
	ok := false
	var rerr error
	if x.gated {
		rec.Sent, rec.Start = false, 0
	} else {
		if st := x.st; !x.noStart {
			if !x.start.IsZero() {
				rec.SendDelay = x.start.Sub(st).Seconds()
				if !x.dialed {
					st = x.start
				}
			}
			rec.Start = st.Sub(x.epoch).Seconds()
		}
		resp := x.in.resp
		switch {
		case err != nil || resp == nil:
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			kind, msg := TransportError(x.ctx, x.timeout, err)
			if x.dropped {
				kind, msg = x.cancelled()
			}
			fail(rec, kind, msg)
		case resp.StatusCode != http.StatusOK:
			x.h.Head(resp)
			resp.Body = io.NopCloser(x.errorBody())
			fail(rec, StatusKind(resp.StatusCode), StatusError(resp))
		default:
			x.in.header()
			x.h.Head(resp)
			ok, rerr = true, x.err
			if rerr == nil && x.in.whole() {
				rec.KernelTimed = x.kernel
				rerr = x.h.Whole(x.whole, x.at, x.kernel) // timed by its last read
			}
			if rerr != nil {
				if kind, msg, dead := ctxFailure(x.ctx, x.timeout); dead {
					rerr = &Error{Kind: kind, Msg: msg}
				}
				if x.dropped {
					kind, msg := x.cancelled()
					rerr = &Error{Kind: kind, Msg: msg}
				}
			}
		}
	}
	x.cancel()
	x.h.Done(ok, rerr)
}

// cancelled is the failure of a request the client cancelled on purpose,
// stamping when it did in the record.
func (x *Exchange) cancelled() (kind, msg string) {
	x.rec.CancelAt = x.cancelAt.Sub(x.epoch).Seconds()
	if late := x.firedAt.Load(); late > 0 {
		x.rec.CancelLate = time.Duration(late - 1).Seconds()
	}
	return record.KindCancelled, fmt.Sprintf("the client cancelled the request %.3f s after writing it (--request-cancellation-rate)", x.cancelAfter.Seconds())
}

// roundTrip is Start through a RoundTripper not a Transport.
func (x *Exchange) roundTrip(rt http.RoundTripper, req *http.Request) {
	x.st = time.Now()
	x.ready()
	if !x.gate.pass(func() {}) {
		x.gated = true
		x.finish(nil)
		return
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		x.finish(err)
		return
	}
	x.floor = x.st
	x.h.Begin(x.st)
	x.in.resp = resp
	x.pull(resp.Body)
	resp.Body.Close()
	x.finish(nil)
}

// Body reads a 200 response's body from r into x's Handler, as a body
// from a RoundTripper is read, its clock starting at st, and ends the
// request (Handler.Done) without stamping its start. It is the state
// machine's reading of a body, for the tests and benchmarks of a Handler.
func (x *Exchange) Body(ctx context.Context, r io.Reader, st time.Time, s *Send) {
	x.bare(ctx, st, s)
	x.in.resp = ok200
	x.pull(r)
	x.finish(nil)
}

// ok200 is the head Body's bodies come under; read only.
var ok200 = &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{}}

// Response is Body for a whole HTTP/1.1 response, head and framing, read
// from r as the poller receiver reads a connection (r as a
// netstamp.Stamped gives the kernel's receive times).
func (x *Exchange) Response(ctx context.Context, r io.Reader, st time.Time, s *Send) {
	x.bare(ctx, st, s)
	stamps, _ := r.(netstamp.Stamped)
	x.readFrom(r, stamps)
	x.finish(x.outcome())
}

// bare readies x for Body and Response.
func (x *Exchange) bare(ctx context.Context, st time.Time, s *Send) {
	x.ctx, x.cancel, x.noStart = ctx, func() {}, true
	x.rec, x.epoch, x.timeout, x.stream = s.Record, s.Epoch, s.Timeout, s.Stream
	x.st, x.floor = st, st
	x.ready()
	x.h.Begin(st)
}

// pull reads a body from r, each read timed as a receiver's.
func (x *Exchange) pull(r io.Reader) {
	stamps, _ := r.(netstamp.Stamped)
	buf := x.readBuf()
	for {
		n, err := r.Read(buf)
		if n > 0 {
			var ns int64
			if stamps != nil {
				ns = stamps.LastArrival()
			}
			x.arrived(time.Now(), ns)
			if e := x.body(buf[:n]); e != nil {
				x.fail(e)
				return
			}
			if x.cut {
				x.end()
				return
			}
		}
		if err == io.EOF {
			x.end()
			return
		}
		if err != nil {
			x.fail(err)
			return
		}
	}
}
