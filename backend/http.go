package backend

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"benchserve/internal/netproxy"
)

// ClientOptions shape the HTTP client.
type ClientOptions struct {
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
}

// NewHTTPClient returns the client requests go through: HTTP/1.1 (ALPN
// asks for it over TLS), the proxy o.Proxy gives (see route), no compression (so a stream is never held back by gzip), a
// 4 KiB read buffer per connection (a read takes whatever has arrived;
// 4 KiB holds about 20 chunks of a stream, and larger buffers measured no
// cheaper per token while costing 12 MB at 1,000 connections), and no
// client-wide timeout (Do bounds each request). Both schemes go through
// transport, which keeps its own connections.
func NewHTTPClient(o ClientOptions) *http.Client {
	if o.MaxConns <= 0 {
		o.MaxConns = 4096
	}
	const readBuffer = 4 << 10
	dialer := &net.Dialer{KeepAlive: 30 * time.Second, Timeout: o.ConnectTimeout}
	return &http.Client{Transport: &transport{dialer: dialer, tls: o.TLS, connect: o.ConnectTimeout,
		keep: o.KeepAlive, maxIdle: o.MaxConns, maxAge: idleTimeout, bufSize: readBuffer, proxy: o.Proxy}}
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

// Sizes for the error text of an HTTP error status.
const (
	errShow = 4 << 10 // bytes of the body quoted in the error
	errRead = 1 << 20 // bytes read to learn the body's size
)

// statusError is "<status> <reason>: <body>", the body trimmed, on one line
// and cut at 4 KiB with a note of its full size.
func statusError(resp *http.Response) string {
	status := resp.Status
	if code := strconv.Itoa(resp.StatusCode); status == "" || status == code {
		status = strings.TrimSpace(code + " " + http.StatusText(resp.StatusCode))
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, errRead+1))
	body := bytes.TrimSpace(b)
	var note string
	switch {
	case len(b) > errRead:
		note = " ... (more than 1 MiB in all)"
	case err != nil:
		note = " ... (reading the body failed: " + err.Error() + ")"
	case len(body) > errShow:
		note = " ... (" + strconv.Itoa(len(body)) + " bytes in all)"
	}
	if len(body) > errShow {
		cut := errShow
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
		body = body[:cut]
	}
	if len(body) == 0 && note == "" {
		return status + ": (empty body)"
	}
	return status + ": " + string(oneLine(body)) + note
}

// oneLine turns line breaks into spaces (a CRLF into one space).
func oneLine(b []byte) []byte {
	if !bytes.ContainsAny(b, "\r\n") {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
			out = append(out, ' ')
		case '\n':
			out = append(out, ' ')
		default:
			out = append(out, b[i])
		}
	}
	return out
}
