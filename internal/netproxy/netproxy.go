// Package netproxy is the proxy choice of HTTP_PROXY, HTTPS_PROXY and
// NO_PROXY, read as Go's http.ProxyFromEnvironment reads them (through
// golang.org/x/net/http/httpproxy, the code behind it), but from a getenv
// the caller gives, so that the command, not a library, reads the
// environment.
package netproxy

import (
	"fmt"
	"net/http"
	"net/url"

	"golang.org/x/net/http/httpproxy"
)

// Func returns the proxy for a request's URL, nil for a direct
// connection.
type Func func(*url.URL) (*url.URL, error)

// FromEnv reads the variables with getenv, upper case first, then lower,
// as Go does; nil when neither proxy variable is set, so that a run
// without a proxy asks nothing per request. Requests to localhost and
// loopback addresses never go through a proxy (Go's rule too).
func FromEnv(getenv func(string) string) Func {
	either := func(upper, lower string) string {
		if v := getenv(upper); v != "" {
			return v
		}
		return getenv(lower)
	}
	httpProxy, httpsProxy := either("HTTP_PROXY", "http_proxy"), either("HTTPS_PROXY", "https_proxy")
	if httpProxy == "" && httpsProxy == "" {
		return nil
	}
	cfg := &httpproxy.Config{
		HTTPProxy:  httpProxy,
		HTTPSProxy: httpsProxy,
		NoProxy:    either("NO_PROXY", "no_proxy"),
		CGI:        getenv("REQUEST_METHOD") != "",
	}
	return Func(cfg.ProxyFunc())
}

// Transport is net/http's default transport with the proxy of f (nil:
// none): for downloads (Hub files, dataset files), which net/http carries.
func Transport(f Func) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	if f != nil {
		t.Proxy = func(r *http.Request) (*url.URL, error) { return f(r.URL) }
	}
	return t
}

// Name is the variable that sets the proxy of a URL of this scheme, for
// messages.
func Name(scheme string) string {
	if scheme == "https" {
		return "HTTPS_PROXY"
	}
	return "HTTP_PROXY"
}

// Check reports the proxy target goes through (nil: direct) and an error
// when it is one the benchmark's transport cannot use: only http://
// proxies (plain requests in absolute form, https by CONNECT).
func Check(f Func, target *url.URL) (*url.URL, error) {
	if f == nil {
		return nil, nil
	}
	p, err := f(target)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", Name(target.Scheme), err)
	}
	if p != nil && p.Scheme != "http" {
		return nil, fmt.Errorf("%s=%s: benchmark requests go only through http:// proxies (plain HTTP in absolute form, https by CONNECT), not %s://", Name(target.Scheme), p.Redacted(), p.Scheme)
	}
	return p, nil
}
