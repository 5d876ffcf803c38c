package bench

import (
	"net/url"
	"strconv"
	"strings"
)

// validate checks what can be checked before the first network call, so
// that a bad value is a usage error at once rather than a failure after
// the readiness wait.
func validate(cfg *Config) error {
	return checkTarget(cfg)
}

// checkTarget refuses a server address that no connection could reach:
// a port out of range, or a --base-url that is not an http(s) URL.
func checkTarget(cfg *Config) error {
	if cfg.BaseURL == nil {
		if cfg.Port != nil && (*cfg.Port < 1 || *cfg.Port > 65535) {
			return usage("--port %d: must be between 1 and 65535", *cfg.Port)
		}
		return nil
	}
	raw := *cfg.BaseURL
	shown := redact(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return usage("--base-url %s: not a URL (%v)", shown, unquoteURLErr(err))
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return usage("--base-url %s: port %s is out of range (1-65535)", shown, p)
		}
	}
	return nil
}

// unquoteURLErr drops the URL that url.Parse repeats in its errors: the
// message already shows it, with any password hidden.
func unquoteURLErr(err error) string {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err.Error()
	}
	return strings.TrimSpace(err.Error())
}
