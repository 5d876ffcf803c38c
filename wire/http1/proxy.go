package http1

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"benchserve/internal/netproxy"
)

// A route is how connections to one server are made: directly, or through
// a forward proxy (HTTP_PROXY, HTTPS_PROXY): plain HTTP is sent to the
// proxy in absolute form ("POST http://host/path"), https goes through a
// CONNECT tunnel. Either way the socket read is the client's own, to the
// proxy, so kernel receive times are taken as on a direct connection.
type route struct {
	proxy *url.URL // nil: direct
	auth  string   // Proxy-Authorization, from the proxy URL's user info
	err   error
}

// routeFor is the route to key's server, decided once per server.
func (t *Transport) routeFor(key string) *route {
	if t.proxy == nil {
		return &direct
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.routes[key]; r != nil {
		return r
	}
	scheme, addr := splitKey(key)
	r := &route{}
	r.proxy, r.err = netproxy.Check(t.proxy, &url.URL{Scheme: scheme, Host: addr})
	if r.proxy != nil && r.proxy.User != nil {
		pass, _ := r.proxy.User.Password()
		r.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(r.proxy.User.Username()+":"+pass))
	}
	if t.routes == nil {
		t.routes = map[string]*route{}
	}
	t.routes[key] = r
	return r
}

var direct route

// addr is where a connection to addr is dialled: the proxy's address, or
// addr itself.
func (r *route) addr(addr string) string {
	if r.proxy == nil {
		return addr
	}
	if r.proxy.Port() == "" {
		return net.JoinHostPort(r.proxy.Hostname(), "80")
	}
	return r.proxy.Host
}

// forward reports plain HTTP through the proxy: requests in absolute form.
func (r *route) forward(scheme string) bool { return r.proxy != nil && scheme == "http" }

// writeHead writes req, head and body, as it goes on a connection of key:
// in absolute form with the proxy's credentials through a forward proxy.
func (t *Transport) writeHead(req *http.Request, key string, buf *bytes.Buffer) error {
	r := t.routeFor(key)
	if r.err != nil {
		return r.err
	}
	if !r.forward(req.URL.Scheme) {
		return req.Write(buf)
	}
	if r.auth != "" {
		q := *req
		q.Header = req.Header.Clone()
		q.Header.Set("Proxy-Authorization", r.auth)
		req = &q
	}
	return req.WriteProxy(buf)
}

// tunnel asks the proxy on conn for a tunnel to addr (CONNECT) and reads
// its answer; the TLS handshake with the server then goes through it.
func (t *Transport) tunnel(ctx context.Context, conn net.Conn, addr string, r *route) error {
	if t.connect > 0 {
		conn.SetDeadline(time.Now().Add(t.connect)) //nolint:errcheck // a closed conn fails the write below
		defer conn.SetDeadline(time.Time{})         //nolint:errcheck
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: addr}, Host: addr, Header: http.Header{}}
	if r.auth != "" {
		req.Header.Set("Proxy-Authorization", r.auth)
	}
	if err := req.Write(conn); err != nil {
		return proxyError(r, addr, err)
	}
	// One byte at a time would be slow; a buffer may take bytes of the
	// tunnel, but the server sends none before the client's hello.
	br := bufio.NewReaderSize(conn, 1024)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return proxyError(r, addr, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("proxy %s refused CONNECT %s: %s", r.proxy.Redacted(), addr, resp.Status)
	}
	if br.Buffered() > 0 {
		return fmt.Errorf("proxy %s sent bytes after its CONNECT answer", r.proxy.Redacted())
	}
	return nil
}

func proxyError(r *route, addr string, err error) error {
	return fmt.Errorf("proxy %s, CONNECT %s: %w", r.proxy.Redacted(), addr, err)
}
