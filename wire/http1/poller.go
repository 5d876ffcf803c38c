package http1

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"syscall"
	"time"

	"benchserve/wire/netstamp"
)

// pconn is a connection read through Go's poller: the state machine's
// poller receiver, and RoundTrip's connection.
type pconn struct {
	conn   net.Conn         // the TLS connection for https
	raw    syscall.RawConn  // the socket's, nil when it has none
	stamps netstamp.Stamped // nil without kernel receive times
	br     *bufio.Reader    // RoundTrip's reads through pc; nil until it reads
	nread  int64            // bytes read through pc
	limit  int64            // > 0: a Read past it fails (RoundTrip's head limit)
	key    string
}

// Read reads conn for RoundTrip's buffer, counting.
func (pc *pconn) Read(p []byte) (int, error) {
	if pc.limit > 0 && pc.nread >= pc.limit {
		return 0, errHeadTooLong
	}
	n, err := pc.conn.Read(p)
	pc.nread += int64(n)
	return n, err
}

func (pc *pconn) write(x *Exchange, b []byte) (int, error) {
	x.first()
	return pc.conn.Write(b)
}

// receive reads the response on this goroutine until it ends.
func (pc *pconn) receive(x *Exchange) (bool, error) {
	x.readFrom(pc.conn, pc.stamps)
	return false, nil
}

// readFrom reads a response from r until it ends, each read timed with the
// kernel's receive time of its newest bytes when stamps (nil: none) knows
// it: the poller receiver's reading.
func (x *Exchange) readFrom(r io.Reader, stamps netstamp.Stamped) {
	buf := x.readBuf()
	for {
		n, err := r.Read(buf)
		if n > 0 {
			var ns int64
			if stamps != nil {
				ns = stamps.LastArrival()
			}
			if x.received(buf[:n], time.Now(), ns) {
				return
			}
		}
		if err == io.EOF {
			x.closed(nil)
			return
		}
		if err != nil {
			x.closed(err)
			return
		}
	}
}

func (pc *pconn) shutdown()   { pc.conn.Close() }
func (pc *pconn) close()      { pc.conn.Close() }
func (pc *pconn) alive() bool { return alive(pc.raw) }

// dial opens a new connection to key, with its TLS handshake for https.
func (t *Transport) dial(ctx context.Context, key string) (*pconn, error) {
	scheme, addr := splitKey(key)
	r := t.routeFor(key)
	if r.err != nil {
		return nil, r.err
	}
	dial := t.dialer.DialContext
	if t.dialFn != nil {
		dial = t.dialFn
	}
	conn, err := dial(ctx, "tcp", r.addr(addr))
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
	return pc, nil
}

// tlsFor is the TLS configuration for addr: the user's, with the server
// name and HTTP/1.1 by ALPN, and a session cache so that new connections
// resume.
func (t *Transport) tlsFor(addr string) *tls.Config {
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
