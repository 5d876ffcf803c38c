package http1

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"time"

	"benchserve/record"
	"benchserve/wire/sse"
)

// The response half of the state machine: each read's bytes are decoded
// (inbound), split into lines (sse.Splitter) and handed to the Handler as
// they come, each line timed by the read that completed it (clock.go). A
// receiver calls received for each read and closed at the connection's
// end; a body from a RoundTripper goes to body directly (pull).

// maxBody caps a whole (non-streamed) response, like a stream's longest line.
const maxBody = sse.DefaultMaxLine

// errStop stops the decoder once a handler has set bodyErr.
var errStop = errors.New("stop")

// ready readies x for the response to an attempt.
func (x *Exchange) ready() {
	x.in.reset(posted)
	x.in.streamed = x.stream
	x.lines.Reset()
	x.whole, x.limit, x.cut = x.whole[:0], 0, false
	x.at, x.delay, x.kernel, x.pending = time.Time{}, 0, false, false
	x.reads, x.kernelReads = 0, 0
	x.err, x.bodyErr = nil, nil
}

// arrived times a read that returned at now with the kernel's receive
// time ns (0: none).
func (x *Exchange) arrived(now time.Time, ns int64) {
	x.at, x.delay, x.kernel = arrivalAt(now, ns, x.floor, x.at)
	x.pending = true
}

// received takes the bytes of one read, which returned at now with the
// kernel's receive time ns (0: none). It reports whether the response
// ended.
func (x *Exchange) received(b []byte, now time.Time, ns int64) bool {
	x.arrived(now, ns)
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
func (x *Exchange) closed(err error) {
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
func (x *Exchange) body(b []byte) error {
	if x.in.whole() {
		return x.keep(b)
	}
	if x.pending {
		x.pending = false
		x.reads++
		if x.kernel {
			x.kernelReads++
			x.delays.Add(x.delay)
		}
	}
	if err := x.lines.Feed(b, x.lineFn); err != nil {
		if x.bodyErr == nil {
			x.bodyErr = Errorf(record.KindTooLarge, "line %d of the response is longer than the %d MiB limit", x.lines.Line()+1, sse.DefaultMaxLine>>20)
		}
		return errStop
	}
	return nil
}

// keep adds b to a body read whole, up to its limit.
func (x *Exchange) keep(b []byte) error {
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

// line hands one line to the Handler.
func (x *Exchange) line(line []byte) error {
	if err := x.h.Line(line, x.lines.Line(), Arrival{At: x.at, Read: x.reads, Delay: x.delay}); err != nil {
		x.bodyErr = err
		return errStop
	}
	return nil
}

// end completes a response whose body ended.
func (x *Exchange) end() {
	if !x.in.whole() {
		if err := x.lines.End(x.lineFn); err != nil {
			x.err = x.bodyErr
			return
		}
		x.rec.KernelTimed = x.reads > 0 && x.kernelReads == x.reads
		x.err = x.h.End()
		return
	}
	if x.cut && x.in.resp.StatusCode == http.StatusOK {
		x.err = Errorf(record.KindTooLarge, "the response is larger than the %d MiB limit", maxBody>>20)
	}
}

// fail ends the response with err.
func (x *Exchange) fail(err error) {
	switch {
	case err == errStop:
		x.err = x.bodyErr
	case x.in.resp == nil:
		x.err = err // no response: the caller's transport error
	case !x.in.whole():
		x.rec.KernelTimed = x.reads > 0 && x.kernelReads == x.reads
		x.err = ReadError(x.lines.Line(), err)
	case x.in.resp.StatusCode != http.StatusOK:
		x.err = err // the error status stands; its body is cut short
	default:
		x.err = ReadError(0, err)
	}
}

// whole reports whether the body is kept whole rather than streamed.
func (in *inbound) whole() bool { return !in.streamed || in.resp.StatusCode != http.StatusOK }

// errorBody is the body of an error status as it came, then the reading's
// error, for StatusError.
func (x *Exchange) errorBody() io.Reader {
	return io.MultiReader(bytes.NewReader(x.whole), errReader{x.err})
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err == nil {
		return 0, io.EOF
	}
	return 0, e.err
}
