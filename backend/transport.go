package backend

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"benchserve/internal/netstamp"
)

// transport sends plain-HTTP requests on keep-alive connections it holds
// itself: the calling goroutine writes the request and reads the response,
// with no goroutine of the connection's own (net/http's Transport runs two
// per connection and passes every request and response between them, which
// costs CPU and stack memory at every request). The wire format is
// net/http's: Request.Write and ReadResponse. Other schemes (https) go to
// std.
type transport struct {
	std     *http.Transport
	dialer  *net.Dialer
	keep    bool // keep connections for reuse
	maxIdle int  // per host
	bufSize int  // each connection's read buffer

	mu   sync.Mutex
	idle map[string][]*pconn // by host:port, the most recently used last
}

var _ http.RoundTripper = (*transport)(nil)

// idleTimeout is how long an unused connection is kept, as in std.
const idleTimeout = 90 * time.Second

// pconn is a connection with its read buffer.
type pconn struct {
	conn      net.Conn
	raw       syscall.RawConn  // nil when the connection has none
	stamps    netstamp.Stamped // nil without kernel receive times
	br        *bufio.Reader
	key       string
	idleSince time.Time
}

// reqBufs hold requests while they are written: head and body go out in
// one write.
var reqBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// RoundTrip sends req and reads its response's header; the body is read
// from the connection as the caller reads it, and closing it (after EOF)
// gives the connection back.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" {
		return t.std.RoundTrip(req)
	}
	if !t.keep && !req.Close {
		r := *req // a RoundTripper must not change the request
		r.Close = true
		req = &r
	}
	key := hostPort(req)
	for retried := false; ; retried = true {
		pc, reused, err := t.get(req.Context(), key)
		if err != nil {
			return nil, err
		}
		resp, written, err := t.exchange(pc, req)
		if err == nil {
			return resp, nil
		}
		// A kept connection the server had closed fails at once: send
		// again on a new one, as net/http does when nothing was written.
		if reused && !written && !retried && req.GetBody != nil && req.Context().Err() == nil {
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

// exchange writes req on pc and reads the response header. written is
// false when no byte of the request went out.
func (t *transport) exchange(pc *pconn, req *http.Request) (resp *http.Response, written bool, err error) {
	ctx := req.Context()
	// The request's context ends it by closing the connection.
	stop := context.AfterFunc(ctx, func() { pc.conn.Close() })
	fail := func(err error) (*http.Response, bool, error) {
		stop()
		pc.conn.Close()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, written, err
	}
	buf := reqBufs.Get().(*bytes.Buffer)
	buf.Reset()
	err = req.Write(buf)
	if err == nil {
		var n int
		n, err = pc.conn.Write(buf.Bytes())
		written = n > 0
	}
	if buf.Cap() <= 1<<20 {
		reqBufs.Put(buf)
	}
	if err != nil {
		return fail(err)
	}
	for {
		resp, err = http.ReadResponse(pc.br, req)
		if err != nil {
			return fail(err)
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		// An informational 1xx: the real response follows.
	}
	resp.Body = &body{t: t, pc: pc, rc: resp.Body, ctx: ctx, stop: stop, reuse: t.keep && !resp.Close}
	return resp, true, nil
}

// get returns a kept connection to key, or dials a new one.
func (t *transport) get(ctx context.Context, key string) (pc *pconn, reused bool, err error) {
	for t.keep {
		t.mu.Lock()
		l := t.idle[key]
		if len(l) == 0 {
			t.mu.Unlock()
			break
		}
		pc = l[len(l)-1]
		l[len(l)-1] = nil
		t.idle[key] = l[:len(l)-1]
		t.mu.Unlock()
		// The server may have closed it while it was idle.
		if time.Since(pc.idleSince) < idleTimeout && alive(pc.raw) {
			return pc, true, nil
		}
		pc.conn.Close()
	}
	return t.dial(ctx, key)
}

// dial opens a new connection to key.
func (t *transport) dial(ctx context.Context, key string) (pc *pconn, reused bool, err error) {
	conn, err := t.dialer.DialContext(ctx, "tcp", key)
	if err != nil {
		return nil, false, err
	}
	// Reads learn when their bytes reached the socket, so that a chunk's
	// time is its arrival however late this busy process reads it.
	conn = netstamp.Wrap(conn)
	pc = &pconn{conn: conn, br: bufio.NewReaderSize(conn, t.bufSize), key: key}
	pc.stamps, _ = conn.(netstamp.Stamped)
	if sc, ok := conn.(syscall.Conn); ok {
		pc.raw, _ = sc.SyscallConn()
	}
	return pc, false, nil
}

// put keeps pc for reuse, or closes it.
func (t *transport) put(pc *pconn) {
	if pc.br.Buffered() > 0 { // bytes nobody asked for: the stream is out of step
		pc.conn.Close()
		return
	}
	pc.idleSince = time.Now()
	t.mu.Lock()
	if t.idle == nil {
		t.idle = map[string][]*pconn{}
	}
	if l := t.idle[pc.key]; len(l) < t.maxIdle {
		t.idle[pc.key] = append(l, pc)
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	pc.conn.Close()
}

// CloseIdleConnections closes the kept connections.
func (t *transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, l := range idle {
		for _, pc := range l {
			pc.conn.Close()
		}
	}
	t.std.CloseIdleConnections()
}

// hostPort is the address req goes to, with the default port.
func hostPort(req *http.Request) string {
	if req.URL.Port() != "" {
		return req.URL.Host
	}
	return net.JoinHostPort(req.URL.Hostname(), "80")
}

// body is a response body on a connection of t: read to its end and
// closed, it gives the connection back.
type body struct {
	t     *transport
	pc    *pconn
	rc    io.ReadCloser
	ctx   context.Context
	stop  func() bool
	reuse bool

	mu          sync.Mutex // Close may come from another goroutine
	eof, closed bool
}

// LastArrival is the kernel's receive time of the bytes the connection
// last read (Unix ns), 0 when unknown: the arrival of the newest bytes Read
// has returned, since the connection is read only when its buffer is empty.
func (b *body) LastArrival() int64 {
	if b.pc.stamps == nil {
		return 0
	}
	return b.pc.stamps.LastArrival()
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.mu.Lock()
		b.eof = true
		b.mu.Unlock()
	} else if err != nil && b.ctx.Err() != nil {
		err = b.ctx.Err()
	}
	return n, err
}

// Close gives the connection back after a complete body; otherwise it
// closes it (net/http would read the rest first, which for a stream can
// take as long as the generation).
func (b *body) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	eof := b.eof
	b.mu.Unlock()
	// stop is false once the context has closed the connection.
	if b.stop() && eof && b.reuse {
		b.rc.Close()
		b.t.put(b.pc)
		return nil
	}
	return b.pc.conn.Close()
}

// preconnect dials n connections to key at once and keeps them, n capped
// by the idle limit. It returns the first error.
func (t *transport) preconnect(ctx context.Context, key string, n int) error {
	if !t.keep {
		return nil
	}
	n = min(n, t.maxIdle)
	errs := make(chan error, n)
	for range n {
		go func() {
			pc, _, err := t.dial(ctx, key)
			if err == nil {
				t.put(pc)
			}
			errs <- err
		}()
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}
