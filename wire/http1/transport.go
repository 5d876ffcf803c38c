// Package http1 sends HTTP/1.1 requests and reads their responses with the
// arrival time of every byte: a connection pool of its own (plain, TLS,
// through a forward proxy), and one request state machine (Exchange) that
// writes a request once past the interrupt gate, starts its clock as its
// first byte goes out, sends it again once on a new connection when a kept
// one turns out closed, decodes the response (heads up to 1 MiB, chunked
// or not) and hands a 200's body on as timed lines or whole. Two receivers
// move the bytes in: Go's poller (a blocking read per request, with the
// kernel's receive times through wire/netstamp) and, on Linux, an event
// loop (epoll, one recvmsg per ready socket), whose sockets may read
// through io_uring instead (one io_uring_enter for many sockets' reads).
// Options.Receive chooses.
package http1

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"benchserve/internal/netproxy"
)

// Options shape a Transport.
type Options struct {
	// KeepAlive keeps up to MaxConns idle connections for reuse (MaxConns
	// <= 0: 4096); without it every request opens its own connection, as
	// the reference tool's session per request does.
	KeepAlive bool
	MaxConns  int
	// ConnectTimeout bounds the TCP connect and the TLS handshake; 0 means
	// no limit of its own.
	ConnectTimeout time.Duration
	// TLS is the TLS configuration; nil verifies servers against the
	// system's roots.
	TLS *tls.Config
	// Proxy chooses a forward proxy per server (nil: none); see route.
	Proxy netproxy.Func
	// Receive chooses the receiver of plain-HTTP responses: ReceiveAuto
	// (or ""), ReceiveUring, ReceiveEvents or ReceivePoller. https always
	// reads through Go's poller.
	Receive string
	// Dial, when set, opens every connection (a net.Pipe's end, say, so
	// that a test runs the whole client in memory); connections then read
	// through Go's poller whatever Receive says, since the event loop
	// needs a socket of its own.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// The receivers of Options.Receive.
const (
	// ReceiveAuto is the event loop on Linux, where it starts, and Go's
	// poller elsewhere. (Not ReceiveUring: it costs less CPU a chunk, but
	// under overload its first tokens were timed later; docs/performance.md,
	// "io_uring (issue 33)".)
	ReceiveAuto = "auto"
	// ReceiveUring is the event loop reading through io_uring (Linux 6.1
	// and later, io_uring enabled); where io_uring does not serve, the
	// event loop reading with epoll and recvmsg.
	ReceiveUring = "uring"
	// ReceiveEvents is the event loop, reading with epoll and recvmsg; a
	// request fails where there is none.
	ReceiveEvents = "events"
	// ReceivePoller is Go's poller.
	ReceivePoller = "poller"
)

// CheckReceive reports a value of Options.Receive that cannot be used
// here, naming it.
func CheckReceive(s string) error {
	switch s {
	case "", ReceiveAuto, ReceivePoller:
		return nil
	case ReceiveEvents, ReceiveUring:
		return eventLoops()
	}
	return fmt.Errorf("unknown receiver %q (choose auto, uring, events or poller)", s)
}

// Receiver names the receiver that plain-HTTP responses read through
// with Options.Receive set to receive, here: ReceiveUring,
// ReceiveEvents or ReceivePoller, and, when io_uring was wanted but does
// not serve, why.
func Receiver(receive string) (name, why string) {
	switch receive {
	case ReceivePoller:
		return ReceivePoller, ""
	case ReceiveUring:
		if err := ringLoops(); err != nil {
			why = err.Error()
		} else {
			return ReceiveUring, ""
		}
	}
	if eventLoops() != nil {
		return ReceivePoller, why
	}
	return ReceiveEvents, why
}

// TLSConfig is the TLS configuration for --cacert and --insecure: servers
// are verified against the system's roots plus the PEM certificates in
// cacert; insecure turns verification off.
func TLSConfig(cacert string, insecure bool) (*tls.Config, error) {
	if cacert == "" && !insecure {
		return nil, nil
	}
	cfg := &tls.Config{InsecureSkipVerify: insecure}
	if cacert != "" {
		pem, err := os.ReadFile(cacert)
		if err != nil {
			return nil, fmt.Errorf("--cacert: %v", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--cacert %s: no PEM certificate in the file", cacert)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// Transport keeps the connections requests go on: HTTP/1.1 (ALPN asks for
// it over TLS), no compression (so a stream is never held back by gzip),
// and no goroutine of a connection's own (net/http's Transport runs two
// per connection and passes every request and response between them,
// which costs CPU and stack memory at every request). Exchange sends the
// benchmark's requests through it; as an http.RoundTripper (RoundTrip)
// it serves the control-plane calls.
type Transport struct {
	dialer  *net.Dialer
	dialFn  func(ctx context.Context, network, addr string) (net.Conn, error) // Options.Dial
	tls     *tls.Config                                                       // nil: verified against the system's roots
	connect time.Duration
	keep    bool          // keep connections for reuse
	maxIdle int           // per host
	maxAge  time.Duration // of an idle connection (idleTimeout)
	bufSize int           // a poller connection's read buffer
	receive string

	mu        sync.Mutex
	idle      map[string][]kept // the poller's, by scheme://host:port, the most recently used last
	idleSocks map[string][]kept // the event loop's, likewise
	tlsBy     map[string]*tls.Config

	proxy  netproxy.Func // nil: every connection direct
	routes map[string]*route
}

var _ http.RoundTripper = (*Transport)(nil)

// idleTimeout is how long an unused connection is kept: less than the 5 s
// after which uvicorn (SGLang, vLLM, LMDeploy) closes an idle connection,
// so that a request is never written on one the server is closing.
const idleTimeout = 4 * time.Second

// readBuffer is a poller read's buffer: a read takes whatever has arrived;
// 4 KiB holds about 20 chunks of a stream, and larger buffers measured no
// cheaper per token while costing 12 MB at 1,000 connections.
const readBuffer = 4 << 10

// NewTransport returns a transport with the options o.
func NewTransport(o Options) *Transport {
	if o.MaxConns <= 0 {
		o.MaxConns = 4096
	}
	return &Transport{dialer: &net.Dialer{KeepAlive: 30 * time.Second, Timeout: o.ConnectTimeout}, dialFn: o.Dial,
		tls: o.TLS, connect: o.ConnectTimeout, keep: o.KeepAlive, maxIdle: o.MaxConns, maxAge: idleTimeout,
		bufSize: readBuffer, proxy: o.Proxy, receive: o.Receive}
}

// conn is a kept connection of either receiver, as the state machine
// drives it.
type conn interface {
	// write writes b, calling x.first just before its first byte goes
	// out; n is how many bytes went out.
	write(x *Exchange, b []byte) (n int, err error)
	// receive reads the response into x (x.received, x.closed). It
	// reports async when the reading goes on elsewhere, x.resume running
	// once it has ended; else the response has ended when it returns.
	receive(x *Exchange) (async bool, err error)
	// shutdown ends a read or write under way: the request's context
	// ended.
	shutdown()
	close()
	// alive reports whether an idle connection can still be used.
	alive() bool
}

type kept struct {
	c     conn
	since time.Time
}

// eventsFor reports whether requests to key read through the event loop,
// or the error that keeps them from it when ReceiveEvents asks for it.
func (t *Transport) eventsFor(key string) (bool, error) {
	if t.dialFn != nil || t.receive == ReceivePoller || !strings.HasPrefix(key, "http://") {
		return false, nil
	}
	if err := eventLoops(); err != nil {
		if t.receive == ReceiveEvents || t.receive == ReceiveUring {
			return false, err
		}
		return false, nil
	}
	return true, nil
}

// ringFor reports whether the event loop's sockets read through io_uring.
func (t *Transport) ringFor() bool { return t.receive == ReceiveUring && ringLoops() == nil }

// get returns a kept connection to key, or dials a new one (always when
// fresh is set), of the event loop's when events is set.
func (t *Transport) get(ctx context.Context, key string, fresh, events bool) (c conn, reused bool, err error) {
	idle := &t.idle
	if events {
		idle = &t.idleSocks
	}
	for t.keep && !fresh {
		k, ok := popIdle(&t.mu, idle, key)
		if !ok {
			break
		}
		// The server may have closed it while it was idle, or be about
		// to.
		if time.Since(k.since) < t.maxAge && k.c.alive() {
			return k.c, true, nil
		}
		k.c.close()
	}
	if events {
		s, err := t.dialSock(ctx, key, t.ringFor())
		if err != nil {
			return nil, false, err
		}
		return s, false, nil
	}
	pc, err := t.dial(ctx, key)
	if err != nil {
		return nil, false, err
	}
	return pc, false, nil
}

// put keeps c for reuse, or closes it.
func (t *Transport) put(key string, c conn, events bool) {
	idle := &t.idle
	if events {
		idle = &t.idleSocks
	}
	if !pushIdle(&t.mu, idle, key, kept{c, time.Now()}, t.maxIdle) {
		c.close()
	}
}

// popIdle takes the most recently kept connection to key.
func popIdle(mu *sync.Mutex, idle *map[string][]kept, key string) (k kept, ok bool) {
	mu.Lock()
	defer mu.Unlock()
	l := (*idle)[key]
	if len(l) == 0 {
		return k, false
	}
	k = l[len(l)-1]
	l[len(l)-1] = kept{}
	(*idle)[key] = l[:len(l)-1]
	return k, true
}

// pushIdle keeps k for reuse, unless key has max kept already.
func pushIdle(mu *sync.Mutex, idle *map[string][]kept, key string, k kept, max int) bool {
	mu.Lock()
	defer mu.Unlock()
	if *idle == nil {
		*idle = map[string][]kept{}
	}
	l := (*idle)[key]
	if len(l) >= max {
		return false
	}
	(*idle)[key] = append(l, k)
	return true
}

// CloseIdleConnections closes the kept connections.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle, socks := t.idle, t.idleSocks
	t.idle, t.idleSocks = nil, nil
	t.mu.Unlock()
	for _, m := range []map[string][]kept{idle, socks} {
		for _, l := range m {
			for _, k := range l {
				k.c.close()
			}
		}
	}
}

// connKey is "scheme://host:port" for u, with the scheme's default port.
func connKey(scheme, host, port string) string {
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

func reqKey(req *http.Request) string {
	return connKey(req.URL.Scheme, req.URL.Hostname(), req.URL.Port())
}

func splitKey(key string) (scheme, addr string) {
	if len(key) > 8 && key[:8] == "https://" {
		return "https", key[8:]
	}
	return "http", key[len("http://"):]
}

// dialWave bounds the connects Preconnect makes at once.
const dialWave = 256

// Preconnect opens n keep-alive connections to the server of rawURL at
// once (with their TLS handshakes, for https), of the receiver its
// requests will use, and keeps them: the first requests of a run then
// find a connection ready instead of each connecting on its own. n is
// capped by the idle limit; without keep-alive it opens none. It returns
// how many it opened and the first connect error.
func (t *Transport) Preconnect(ctx context.Context, req *http.Request, n int) (int, error) {
	if !t.keep {
		return 0, nil
	}
	key := reqKey(req)
	events, err := t.eventsFor(key)
	if err != nil {
		return 0, err
	}
	n = min(n, t.maxIdle)
	errs := make(chan error, n)
	// At most dialWave connects at a time: a server's listen queue
	// (somaxconn, often 4096) drops the SYNs of a larger burst, whose
	// connects then wait a second for the retry. A connect's goroutine
	// is made when it may go: n goroutines waiting their turn would hold
	// n stacks (22 MB when 10,000 were started at once).
	wave := make(chan struct{}, dialWave)
	for range n {
		wave <- struct{}{}
		go func() {
			defer func() { <-wave }()
			c, _, err := t.get(ctx, key, true, events)
			if err == nil {
				t.put(key, c, events)
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
