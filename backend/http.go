package backend

import (
	"crypto/tls"
	"net/http"

	"benchserve/wire/http1"
)

// ClientOptions shape the HTTP client: keep-alive, connection limits,
// TLS, the proxy, the receiver (http1.Options.Receive) and, for tests, a
// dialer of in-memory connections.
type ClientOptions = http1.Options

// Gate lets requests be written until it is closed (http1.Gate).
type Gate = http1.Gate

// NewHTTPClient returns the client requests go through: an http1.Transport
// with the options o, and no client-wide timeout (Do bounds each request).
func NewHTTPClient(o ClientOptions) *http.Client {
	return &http.Client{Transport: http1.NewTransport(o)}
}

// TLSConfig is the TLS configuration for --cacert and --insecure (see
// http1.TLSConfig).
func TLSConfig(cacert string, insecure bool) (*tls.Config, error) {
	return http1.TLSConfig(cacert, insecure)
}

// oneLine turns line breaks into spaces (a CRLF into one space).
func oneLine(b []byte) []byte { return http1.OneLine(b) }
