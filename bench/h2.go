package bench

import (
	"net/http"
	"net/url"

	"benchserve/backend"
	"benchserve/internal/netproxy"
	"benchserve/serverctl"
)

// httpClient is the client of cfg's requests: the HTTP/1.1 state machine,
// or HTTP/2 with --http2 (TLS, ALPN h2) or --h2c (cleartext, prior
// knowledge).
func httpClient(cfg *Config, o backend.ClientOptions) *http.Client {
	switch {
	case cfg.H2C:
		return backend.NewH2Client(o, true)
	case cfg.HTTP2:
		return backend.NewH2Client(o, false)
	}
	return backend.NewHTTPClient(o)
}

// checkH2 refuses --http2 and --h2c where they cannot apply, before any
// request: the scheme of each base URL, --no-keepalive, and a proxy (h2 is
// spoken direct only).
func checkH2(cfg *Config, bases []string, getenv func(string) string) error {
	if !cfg.HTTP2 && !cfg.H2C {
		return nil
	}
	flag, scheme := "--http2", "https"
	if cfg.H2C {
		flag, scheme = "--h2c", "http"
	}
	switch {
	case cfg.HTTP2 && cfg.H2C:
		return usage("--http2 and --h2c: choose one (--http2 for https:// servers, --h2c for http:// ones)")
	case cfg.NoKeepalive:
		return usage("%s: HTTP/2 sends every request as a stream of one kept connection; drop --no-keepalive", flag)
	}
	for _, b := range bases {
		u, err := url.Parse(b)
		if err != nil {
			continue // the URL's own error is reported where it is used
		}
		if u.Scheme != scheme {
			if cfg.H2C {
				return usage("--h2c: cleartext h2 needs an http:// URL, got %s (use --http2 for https://)", serverctl.Redact(b))
			}
			return usage("--http2: h2 over TLS needs an https:// URL, got %s (use --h2c for cleartext h2)", serverctl.Redact(b))
		}
		if p, err := netproxy.Check(netproxy.FromEnv(getenv), u); err == nil && p != nil {
			return usage("%s: requests to %s would go through the proxy %s; HTTP/2 is spoken direct only (NO_PROXY=%s sends them direct)",
				flag, u.Host, p.Redacted(), u.Hostname())
		}
	}
	return nil
}
