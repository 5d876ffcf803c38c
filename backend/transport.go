package backend

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"benchserve/internal/netproxy"
	"benchserve/wire/netstamp"
)

// transport sends HTTP/1.1 requests, plain or over TLS, on keep-alive
// connections it holds itself: the calling goroutine writes the request and
// reads the response, with no goroutine of the connection's own (net/http's
// Transport runs two per connection and passes every request and response
// between them, which costs CPU and stack memory at every request). Every
// connection reads through wire/netstamp, so https is timed with the
// kernel's receive times as plain HTTP is, and it decodes chunked bodies
// itself (see chunked). The head is written by Request.Write and read by
// http.ReadResponse.
type transport struct {
	dialer  *net.Dialer
	tls     *tls.Config // nil: verified against the system's roots
	connect time.Duration
	keep    bool          // keep connections for reuse
	maxIdle int           // per host
	maxAge  time.Duration // of an idle connection (idleTimeout)
	bufSize int           // each connection's read buffer

	mu        sync.Mutex
	idle      map[string][]*pconn // by scheme://host:port, the most recently used last
	idleSocks map[string][]*sock  // the event loop's, likewise
	tlsBy     map[string]*tls.Config

	proxy  netproxy.Func // nil: every connection direct
	routes map[string]*route
}

var _ http.RoundTripper = (*transport)(nil)

// idleTimeout is how long an unused connection is kept: less than the 5 s
// after which uvicorn (SGLang, vLLM, LMDeploy) closes an idle connection,
// so that a request is never written on one the server is closing.
const idleTimeout = 4 * time.Second

// pconn is a connection with its read buffer.
type pconn struct {
	conn      net.Conn         // the TLS connection for https
	raw       syscall.RawConn  // the socket's, nil when it has none
	stamps    netstamp.Stamped // nil without kernel receive times
	br        *bufio.Reader    // reads through pc, counting
	nread     int64            // bytes read from conn
	key       string
	idleSince time.Time
}

func (pc *pconn) Read(p []byte) (int, error) {
	n, err := pc.conn.Read(p)
	pc.nread += int64(n)
	return n, err
}

// sendNote passes facts about one request between Do and the transport,
// through the request's context.
type sendNote struct {
	// gate, once closed, keeps the request from being written: the run
	// was interrupted while it waited to go out.
	gate *Gate
	// notSent: the gate stopped it. start: when its first byte was about
	// to be written. dialed: it went out on a connection opened for it.
	notSent bool
	dialed  bool
	start   time.Time
}

type noteKey struct{}

// errNotSent is a request the gate stopped before any byte went out.
var errNotSent = errors.New("not sent: the run was interrupted")

// reqBufs hold requests while they are written: head and body go out in
// one write.
var reqBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// RoundTrip sends req and reads its response's header; the body is read
// from the connection as the caller reads it, and closing it (after EOF)
// gives the connection back.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return nil, fmt.Errorf("unsupported protocol scheme %q", req.URL.Scheme)
	}
	if !t.keep && !req.Close {
		r := *req // a RoundTripper must not change the request
		r.Close = true
		req = &r
	}
	key := connKey(req)
	note, _ := req.Context().Value(noteKey{}).(*sendNote)
	for retried := false; ; retried = true {
		pc, reused, err := t.get(req.Context(), key, retried)
		if err != nil {
			return nil, err
		}
		if note != nil {
			note.dialed = !reused
		}
		resp, written, err := t.exchange(pc, req, note)
		if err == nil {
			return resp, nil
		}
		// A kept connection the server had closed fails at once, or takes
		// the request and ends (its FIN came after the check for it, before
		// the write): send it again, once, on a new connection, when no
		// byte of a response came. A reset is not retried: a server that
		// resets a request it read has answered it.
		again := !written || closedByPeer(err)
		if reused && again && pc.nread == 0 && !retried && req.GetBody != nil && req.Context().Err() == nil && err != errNotSent {
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
func (t *transport) exchange(pc *pconn, req *http.Request, note *sendNote) (resp *http.Response, written bool, err error) {
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
	pc.nread = 0
	buf := reqBufs.Get().(*bytes.Buffer)
	buf.Reset()
	err = t.writeHead(req, pc.key, buf)
	if err == nil {
		var gate *Gate
		if note != nil {
			gate = note.gate
		}
		passed := gate.pass(func() {
			if note != nil {
				note.start = time.Now()
			}
			var n int
			n, err = pc.conn.Write(buf.Bytes())
			written = n > 0
		})
		if !passed {
			note.notSent = true
			reqBufs.Put(buf)
			stop()
			t.put(pc)
			return nil, false, errNotSent
		}
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
	rc := resp.Body
	if isChunked(resp) {
		// net/http's chunked reader has read nothing yet: the body starts
		// at the buffer's next byte.
		rc = nil
	}
	resp.Body = &body{t: t, pc: pc, rc: rc, ch: chunked{br: pc.br}, ctx: ctx, stop: stop, reuse: t.keep && !resp.Close}
	return resp, true, nil
}

// closedByPeer reports the error of a connection the server had closed:
// end of file, or EPIPE once its FIN had come.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.EPIPE)
}

func isChunked(resp *http.Response) bool {
	return len(resp.TransferEncoding) == 1 && resp.TransferEncoding[0] == "chunked"
}

// get returns a kept connection to key, or dials a new one (always when
// fresh is set).
func (t *transport) get(ctx context.Context, key string, fresh bool) (pc *pconn, reused bool, err error) {
	for t.keep && !fresh {
		var ok bool
		if pc, ok = popIdle(&t.mu, &t.idle, key); !ok {
			break
		}
		// The server may have closed it while it was idle, or be about
		// to.
		if time.Since(pc.idleSince) < t.maxAge && alive(pc.raw) {
			return pc, true, nil
		}
		pc.conn.Close()
	}
	pc, err = t.dial(ctx, key)
	return pc, false, err
}

// dial opens a new connection to key, with its TLS handshake for https.
func (t *transport) dial(ctx context.Context, key string) (*pconn, error) {
	scheme, addr := splitKey(key)
	r := t.routeFor(key)
	if r.err != nil {
		return nil, r.err
	}
	conn, err := t.dialer.DialContext(ctx, "tcp", r.addr(addr))
	if err != nil {
		return nil, err
	}
	// Reads learn when their bytes reached the socket, so that a chunk's
	// time is its arrival however late this busy process reads it.
	conn = netstamp.Wrap(conn)
	pc := &pconn{conn: conn, key: key}
	pc.stamps, _ = conn.(netstamp.Stamped)
	if sc, ok := conn.(syscall.Conn); ok {
		pc.raw, _ = sc.SyscallConn()
	}
	if scheme == "https" && r.proxy != nil {
		if err := t.tunnel(ctx, conn, addr, r); err != nil {
			conn.Close()
			return nil, err
		}
	}
	if scheme == "https" {
		tc := tls.Client(conn, t.tlsFor(addr))
		hctx := ctx
		if t.connect > 0 {
			var cancel context.CancelFunc
			hctx, cancel = context.WithTimeout(ctx, t.connect)
			defer cancel()
		}
		if err := tc.HandshakeContext(hctx); err != nil {
			conn.Close()
			return nil, err
		}
		pc.conn = tc
	}
	pc.br = bufio.NewReaderSize(pc, t.bufSize)
	return pc, nil
}

// tlsFor is the TLS configuration for addr: the user's, with the server
// name and HTTP/1.1 by ALPN, and a session cache so that new connections
// resume.
func (t *transport) tlsFor(addr string) *tls.Config {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.tlsBy[addr]; c != nil {
		return c
	}
	c := &tls.Config{}
	if t.tls != nil {
		c = t.tls.Clone()
	}
	if c.ServerName == "" {
		host, _, _ := net.SplitHostPort(addr)
		c.ServerName = host
	}
	c.NextProtos = []string{"http/1.1"}
	if c.ClientSessionCache == nil {
		c.ClientSessionCache = tls.NewLRUClientSessionCache(0)
	}
	if t.tlsBy == nil {
		t.tlsBy = map[string]*tls.Config{}
	}
	t.tlsBy[addr] = c
	return c
}

// put keeps pc for reuse, or closes it.
func (t *transport) put(pc *pconn) {
	if pc.br.Buffered() > 0 { // bytes nobody asked for: the stream is out of step
		pc.conn.Close()
		return
	}
	pc.idleSince = time.Now()
	if !pushIdle(&t.mu, &t.idle, pc.key, pc, t.maxIdle) {
		pc.conn.Close()
	}
}

// popIdle takes the most recently kept connection to key.
func popIdle[C any](mu *sync.Mutex, idle *map[string][]C, key string) (c C, ok bool) {
	mu.Lock()
	defer mu.Unlock()
	l := (*idle)[key]
	if len(l) == 0 {
		return c, false
	}
	c = l[len(l)-1]
	var zero C
	l[len(l)-1] = zero
	(*idle)[key] = l[:len(l)-1]
	return c, true
}

// pushIdle keeps c for reuse, unless key has max kept already.
func pushIdle[C any](mu *sync.Mutex, idle *map[string][]C, key string, c C, max int) bool {
	mu.Lock()
	defer mu.Unlock()
	if *idle == nil {
		*idle = map[string][]C{}
	}
	l := (*idle)[key]
	if len(l) >= max {
		return false
	}
	(*idle)[key] = append(l, c)
	return true
}

// CloseIdleConnections closes the kept connections.
func (t *transport) CloseIdleConnections() {
	t.mu.Lock()
	idle, socks := t.idle, t.idleSocks
	t.idle, t.idleSocks = nil, nil
	t.mu.Unlock()
	for _, l := range idle {
		for _, pc := range l {
			pc.conn.Close()
		}
	}
	for _, l := range socks {
		for _, s := range l {
			s.close()
		}
	}
}

// connKey is "scheme://host:port" for req, with the scheme's default port.
func connKey(req *http.Request) string {
	port := req.URL.Port()
	if port == "" {
		port = "80"
		if req.URL.Scheme == "https" {
			port = "443"
		}
	}
	return req.URL.Scheme + "://" + net.JoinHostPort(req.URL.Hostname(), port)
}

func splitKey(key string) (scheme, addr string) {
	if len(key) > 8 && key[:8] == "https://" {
		return "https", key[8:]
	}
	return "http", key[len("http://"):]
}

// dialWave bounds the connects preconnect makes at once.
const dialWave = 256

// preconnect dials n connections to key at once and keeps them, n capped
// by the idle limit. It returns how many it opened and the first error.
func (t *transport) preconnect(ctx context.Context, key string, n int) (int, error) {
	if !t.keep {
		return 0, nil
	}
	n = min(n, t.maxIdle)
	events := eventsOn()
	errs := make(chan error, n)
	// At most dialWave connects at a time: a server's listen queue
	// (somaxconn, often 4096) drops the SYNs of a larger burst, whose
	// connects then wait a second for the retry.
	wave := make(chan struct{}, dialWave)
	scheme, _ := splitKey(key)
	for range n {
		go func() {
			wave <- struct{}{}
			defer func() { <-wave }()
			if events && scheme == "http" {
				s, err := t.dialSock(ctx, key)
				if err == nil {
					t.putSock(s)
				}
				errs <- err
				return
			}
			pc, err := t.dial(ctx, key)
			if err == nil {
				t.put(pc)
			}
			errs <- err
		}()
	}
	var first error
	ok := 0
	for range n {
		if err := <-errs; err != nil {
			if first == nil {
				first = err
			}
		} else {
			ok++
		}
	}
	return ok, first
}

// getSock returns a kept socket of the event loop's to key, or dials a new
// one (always when fresh is set).
func (t *transport) getSock(ctx context.Context, key string, fresh bool) (s *sock, reused bool, err error) {
	for t.keep && !fresh {
		var ok bool
		if s, ok = popIdle(&t.mu, &t.idleSocks, key); !ok {
			break
		}
		if time.Since(s.idleSince) < t.maxAge && s.alive() {
			return s, true, nil
		}
		s.close()
	}
	s, err = t.dialSock(ctx, key)
	return s, false, err
}

// putSock keeps s for reuse, or closes it.
func (t *transport) putSock(s *sock) {
	s.idleSince = time.Now()
	s.x = nil
	if !pushIdle(&t.mu, &t.idleSocks, s.key, s, t.maxIdle) {
		s.close()
	}
}
