package backend

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strings"
)

// NewH2Client returns a client that speaks HTTP/2 only: over TLS with
// ALPN h2 (https URLs), or, cleartext, h2c with prior knowledge (http
// URLs). Requests share one connection per server, up to its stream
// limit, and go through the RoundTripper path of Client (http1.Exchange
// reads each body as it is read from its stream, so chunks are timed by
// those reads, never by the kernel). o's ConnectTimeout, TLS and Dial
// apply; its proxy and receiver do not. It is net/http's h2 (the code of
// golang.org/x/net/http2, whose own Transport is deprecated for it).
func NewH2Client(o ClientOptions, cleartext bool) *http.Client {
	d := &net.Dialer{Timeout: o.ConnectTimeout}
	dial := d.DialContext
	if o.Dial != nil {
		dial = o.Dial
	}
	var p http.Protocols
	t := &http.Transport{DisableCompression: true, Protocols: &p, DialContext: dial}
	if cleartext {
		p.SetUnencryptedHTTP2(true)
		return &http.Client{Transport: t}
	}
	p.SetHTTP2(true)
	base := &tls.Config{}
	if o.TLS != nil {
		base = o.TLS.Clone()
	}
	base.NextProtos = []string{"h2"}
	// Our own handshake, to say plainly when the server does not speak h2.
	t.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if o.ConnectTimeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, o.ConnectTimeout)
			defer cancel()
		}
		raw, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		cfg := base
		if cfg.ServerName == "" {
			cfg = base.Clone()
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		c := tls.Client(raw, cfg)
		if err := c.HandshakeContext(ctx); err != nil {
			raw.Close()
			// Go's TLS has no type for a received no_application_protocol alert.
			if strings.Contains(err.Error(), "no application protocol") {
				return nil, &noH2Error{addr: addr}
			}
			return nil, err
		}
		if got := c.ConnectionState().NegotiatedProtocol; got != "h2" {
			c.Close()
			return nil, &noH2Error{addr: addr, got: got}
		}
		return c, nil
	}
	return &http.Client{Transport: t}
}

// noH2Error is a TLS server that did not agree to h2 in ALPN.
type noH2Error struct{ addr, got string }

func (e *noH2Error) Error() string {
	got := e.got
	if got == "" {
		got = "none"
	}
	return "--http2: the server at " + e.addr + " does not speak h2 (ALPN chose " + got + "); drop --http2 to speak HTTP/1.1"
}
