package backend

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"time"

	"benchserve/record"
	"benchserve/wire/sse"
)

// exchange is one request's response as the event loop reads it: each
// read's bytes are decoded (inbound), split into lines (sse.Splitter) and
// handed to the parser as they come, timed as the transport's path times
// them (clock.go). The loop calls received for each read and closed at
// the connection's end; the request's continuation then concludes the
// record from what it gathered (Client.conclude).
type exchange struct {
	c     *Client
	cn    *scratch
	in    inbound
	lines *sse.Splitter
	// whole holds the body of a reply read whole, or of an error status
	// (up to limit bytes, after which reading stops: cut).
	whole []byte
	limit int
	cut   bool

	// The reads: at, delay and kernel describe the last (clock.go's
	// readClock); pending: it has not yet brought body bytes.
	at                 time.Time
	delay              time.Duration
	kernel, pending    bool
	reads, kernelReads int

	// err is the outcome: nil, a transport error (no head came: in.resp
	// is nil) or the reading's error, worded for the record.
	err     error
	bodyErr error // the error a body or line handler stopped with

	lineFn, bodyFn func([]byte) error // x.line and x.body, bound once
}

// errStop stops the decoder once a handler has set bodyErr.
var errStop = errors.New("stop")

func (x *exchange) init(cn *scratch) {
	x.cn = cn
	x.lines = sse.NewSplitter(0)
	x.lineFn, x.bodyFn = x.line, x.body
}

// clear drops what x holds of the last request, keeping its buffers.
func (x *exchange) clear() {
	x.in.reset(nil)
	x.lines.Reset()
	*x = exchange{cn: x.cn, in: x.in, lines: x.lines, lineFn: x.lineFn, bodyFn: x.bodyFn}
}

// start readies x for a response to req, read into cn's parser.
func (x *exchange) start(c *Client, req *http.Request) {
	x.clear()
	x.c, x.in.req, x.in.streamed = c, req, c.streams()
	x.whole = x.cn.body[:0]
}

// received takes the n bytes of one read, which returned at now with the
// kernel's receive time ns (0: none). It reports whether the response
// ended.
func (x *exchange) received(b []byte, now time.Time, ns int64) bool {
	x.at, x.delay, x.kernel = arrivalAt(now, ns, x.cn.p.st, x.at)
	x.pending = true
	if err := x.in.feed(b, x.bodyFn); err != nil {
		x.fail(err)
		return true
	}
	if x.in.done || x.cut {
		x.end()
		return true
	}
	return false
}

// closed is the connection's end: err nil for end of file, else the read's
// error.
func (x *exchange) closed(err error) {
	if err == nil {
		err = x.in.end()
	}
	if err != nil {
		x.fail(err)
		return
	}
	x.end()
}

// body takes a piece of the body's data.
func (x *exchange) body(b []byte) error {
	if x.in.whole() {
		return x.keep(b)
	}
	if x.pending {
		x.pending = false
		x.reads++
		if x.kernel {
			x.kernelReads++
			x.cn.delays.Add(x.delay)
		}
	}
	if err := x.lines.Feed(b, x.lineFn); err != nil {
		if x.bodyErr == nil {
			x.bodyErr = kindErrorf(record.KindTooLarge, "line %d of the response is longer than the %d MiB limit", x.lines.Line()+1, sse.DefaultMaxLine>>20)
		}
		return errStop
	}
	return nil
}

// keep adds b to a body read whole, up to its limit.
func (x *exchange) keep(b []byte) error {
	if x.limit == 0 {
		x.limit = maxBody
		if x.in.resp.StatusCode != http.StatusOK {
			x.limit = errRead + 1
		}
	}
	if len(x.whole)+len(b) > x.limit {
		b = b[:x.limit-len(x.whole)]
		x.cut = true
	}
	x.whole = append(x.whole, b...)
	return nil
}

// line hands one line to the parser.
func (x *exchange) line(line []byte) error {
	p := &x.cn.p
	p.readIdx, p.readDelay = x.reads, x.delay
	if err := p.line(line, x.at); err != nil {
		x.bodyErr = lineError(x.lines.Line(), line, err)
		return errStop
	}
	return nil
}

// end completes a response whose body ended.
func (x *exchange) end() {
	if !x.in.whole() {
		if err := x.lines.End(x.lineFn); err != nil {
			x.err = x.bodyErr
			return
		}
		x.cn.p.rec.KernelTimed = x.reads > 0 && x.kernelReads == x.reads
		x.err = x.c.streamEnd(&x.cn.p)
		return
	}
	if x.cut && x.in.resp.StatusCode == http.StatusOK {
		x.err = kindErrorf(record.KindTooLarge, "the response is larger than the %d MiB limit", maxBody>>20)
	}
}

// fail ends the response with err.
func (x *exchange) fail(err error) {
	switch {
	case err == errStop:
		x.err = x.bodyErr
	case x.in.resp == nil:
		x.err = err // no response: the caller's transport error
	case !x.in.whole():
		x.cn.p.rec.KernelTimed = x.reads > 0 && x.kernelReads == x.reads
		x.err = readError(x.lines.Line(), err)
	case x.in.resp.StatusCode != http.StatusOK:
		x.err = err // the error status stands; its body is cut short
	default:
		x.err = readError(0, err)
	}
}

// whole reports whether the body is kept whole rather than streamed.
func (in *inbound) whole() bool { return !in.streamed || in.resp.StatusCode != http.StatusOK }

// errorBody is the body of an error status as it came, then the reading's
// error, for statusError.
func (x *exchange) errorBody() io.Reader {
	return io.MultiReader(bytes.NewReader(x.whole), errReader{x.err})
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err == nil {
		return 0, io.EOF
	}
	return 0, e.err
}
