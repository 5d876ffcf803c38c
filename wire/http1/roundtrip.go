package http1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// RoundTrip sends req and reads its response's head, for the callers that
// want an http.Response (the control-plane calls, a batch's stream): the
// body is read from the connection as the caller reads it (chunked
// bodies by chunked), and closing it after EOF gives the connection back.
// It shares the pool, the proxy routes, the head limit and the rule of one
// retry on a kept connection with Exchange; its connections read through
// Go's poller.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return nil, fmt.Errorf("unsupported protocol scheme %q", req.URL.Scheme)
	}
	if !t.keep && !req.Close {
		r := *req // a RoundTripper must not change the request
		r.Close = true
		req = &r
	}
	key := reqKey(req)
	note, _ := req.Context().Value(noteKey{}).(*SendNote)
	for retried := false; ; retried = true {
		c, reused, err := t.get(req.Context(), key, retried, false)
		if err != nil {
			return nil, err
		}
		pc := c.(*pconn)
		if note != nil {
			note.Dialed = !reused
		}
		resp, written, err := t.exchange(pc, req, note)
		if err == nil {
			return resp, nil
		}
		if retryable(req.Context(), reused, retried, written, pc.nread, err) && req.GetBody != nil {
			body, gerr := req.GetBody()
			if gerr == nil {
				r := *req
				r.Body = body
				req = &r
				continue
			}
		}
		return nil, err
	}
}

// retryable reports whether an attempt that failed with err is sent again
// on a new connection: a kept connection the server had closed fails at
// once, or takes the request and ends (its FIN came after the check for
// it, before the write), so the request goes again, once, when no byte
// of a response came. A reset is not retried: a server that resets a
// request it read has answered it. written is how many of the request's
// bytes went out, got how many of the response's came.
func retryable(ctx context.Context, reused, retried bool, written int, got int64, err error) bool {
	return reused && !retried && got == 0 && ctx.Err() == nil && (written == 0 || closedByPeer(err))
}

// closedByPeer reports the error of a connection the server had closed:
// end of file, or EPIPE once its FIN had come.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.EPIPE)
}

// SendNote learns, through a request's context (WithNote), when RoundTrip
// wrote it: Start, as its first byte was about to go out, and Dialed, on a
// connection opened for it.
type SendNote struct {
	Start  time.Time
	Dialed bool
}

type noteKey struct{}

// WithNote is ctx carrying note for RoundTrip to fill.
func WithNote(ctx context.Context, note *SendNote) context.Context {
	return context.WithValue(ctx, noteKey{}, note)
}

// reqBufs hold requests while they are written: head and body go out in
// one write.
var reqBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func putBuf(buf *bytes.Buffer) {
	if buf != nil && buf.Cap() <= 1<<20 {
		reqBufs.Put(buf)
	}
}

// exchange writes req on pc and reads the response head. written is how
// many bytes of the request went out.
func (t *Transport) exchange(pc *pconn, req *http.Request, note *SendNote) (resp *http.Response, written int, err error) {
	ctx := req.Context()
	// The request's context ends it by closing the connection.
	stop := context.AfterFunc(ctx, func() { pc.conn.Close() })
	fail := func(err error) (*http.Response, int, error) {
		stop()
		pc.conn.Close()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, written, err
	}
	pc.nread = 0
	if pc.br == nil {
		pc.br = bufio.NewReaderSize(pc, t.bufSize)
	}
	buf := reqBufs.Get().(*bytes.Buffer)
	buf.Reset()
	err = t.writeHead(req, pc.key, buf)
	if err == nil {
		if note != nil {
			note.Start = time.Now()
		}
		written, err = pc.conn.Write(buf.Bytes())
	}
	putBuf(buf)
	if err != nil {
		return fail(err)
	}
	for {
		resp, err = t.readHead(pc, req)
		if err != nil {
			return fail(err)
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		// An informational 1xx: the real response follows.
	}
	rc := resp.Body
	if isChunked(resp) {
		// net/http's chunked reader has read nothing yet: the body starts
		// at the buffer's next byte.
		rc = nil
	}
	resp.Body = &body{t: t, pc: pc, rc: rc, ch: chunked{br: pc.br}, ctx: ctx, stop: stop, reuse: t.keep && !resp.Close}
	return resp, written, nil
}

// readHead reads one response head from pc, of at most maxHead bytes.
func (t *Transport) readHead(pc *pconn, req *http.Request) (*http.Response, error) {
	from := pc.nread - int64(pc.br.Buffered())
	pc.limit = from + maxHead + int64(t.bufSize) // enough to read a head of maxHead
	resp, err := http.ReadResponse(pc.br, req)
	pc.limit = 0
	if errors.Is(err, errHeadTooLong) || (err == nil && pc.nread-int64(pc.br.Buffered())-from > maxHead) {
		if err == nil {
			resp.Body.Close()
		}
		return nil, errHeadTooLong
	}
	return resp, err
}

func isChunked(resp *http.Response) bool {
	return len(resp.TransferEncoding) == 1 && resp.TransferEncoding[0] == "chunked"
}

// putConn keeps pc for reuse, or closes it.
func (t *Transport) putConn(pc *pconn) {
	if pc.br != nil && pc.br.Buffered() > 0 { // bytes nobody asked for: the stream is out of step
		pc.conn.Close()
		return
	}
	t.put(pc.key, pc, false)
}
