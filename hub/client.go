// Package hub downloads files from the Hugging Face Hub into the cache that
// Python's huggingface_hub keeps, laid out the same way, so that a file
// fetched by either tool is found by the other. Its Fetch, one file from a
// URL with resuming, a temporary file renamed into place and progress
// lines, is also how the other downloads (ModelScope's files, the Mooncake
// traces) are made.
package hub

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"benchserve/internal/netproxy"
)

// DefaultEndpoint is the Hub used when HF_ENDPOINT is not set.
const DefaultEndpoint = "https://huggingface.co"

// Client downloads files from a Hub. The zero value works: it uses
// DefaultEndpoint, no token, the default cache and http.DefaultClient's
// transport.
type Client struct {
	// Endpoint is the Hub's base URL, without a trailing slash.
	Endpoint string
	// Token, when set, is sent as "Authorization: Bearer <token>" to the Hub
	// (never to a CDN host that it redirects to).
	Token string
	// CacheDir is the hub cache (huggingface_hub's HF_HUB_CACHE).
	CacheDir string
	// Offline resolves files from the cache only, as HF_HUB_OFFLINE does.
	Offline bool
	// HTTP is the client to use; nil means a plain http.Client.
	HTTP *http.Client
	// Progress, if set, receives a progress line now and then while a large
	// file downloads.
	Progress io.Writer
}

// FromEnv returns a Client set up from the environment variables that
// huggingface_hub reads: HF_ENDPOINT, HF_TOKEN (else the token file
// $HF_TOKEN_PATH or $HF_HOME/token), HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME
// and HF_HUB_OFFLINE, with their older names as fallbacks, and the proxy
// variables, read with getenv (the command's environment: a library never
// reads the process's own; nil is an empty one).
func FromEnv(getenv func(string) string) *Client {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	return fromEnv(getenv, homeDir(getenv))
}

// homeDir is the user's home folder as os.UserHomeDir finds it, from getenv.
func homeDir(getenv func(string) string) string {
	if runtime.GOOS == "windows" {
		return getenv("USERPROFILE")
	}
	return getenv("HOME")
}

func fromEnv(getenv func(string) string, home string) *Client {
	expand := func(p string) string {
		if p == "~" {
			return home
		}
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			return filepath.Join(home, rest)
		}
		return p
	}
	first := func(names ...string) string {
		for _, n := range names {
			if v := getenv(n); v != "" {
				return v
			}
		}
		return ""
	}

	c := &Client{Endpoint: strings.TrimRight(getenv("HF_ENDPOINT"), "/")}
	if c.Endpoint == "" {
		c.Endpoint = DefaultEndpoint
	}

	hfHome := getenv("HF_HOME")
	if hfHome == "" {
		xdg := getenv("XDG_CACHE_HOME")
		if xdg == "" {
			xdg = "~/.cache"
		}
		hfHome = filepath.Join(xdg, "huggingface")
	}
	hfHome = expand(hfHome)

	c.CacheDir = first("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE")
	if c.CacheDir == "" {
		c.CacheDir = filepath.Join(hfHome, "hub")
	}
	c.CacheDir = expand(c.CacheDir)

	c.Token = strings.TrimSpace(first("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"))
	if c.Token == "" {
		path := getenv("HF_TOKEN_PATH")
		if path == "" {
			path = filepath.Join(hfHome, "token")
		}
		if b, err := os.ReadFile(expand(path)); err == nil {
			c.Token = strings.TrimSpace(string(b))
		}
	}

	c.Offline = isTrue(first("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))
	// Downloads honour HTTP_PROXY, HTTPS_PROXY and NO_PROXY, as
	// huggingface_hub's requests do, read with the same getenv.
	c.HTTP = &http.Client{Transport: netproxy.Transport(netproxy.FromEnv(getenv))}
	return c
}

// isTrue is huggingface_hub's _is_true: 1, true, yes or on, any case.
func isTrue(v string) bool {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "1", "TRUE", "YES", "ON":
		return true
	}
	return false
}

func (c *Client) endpoint() string {
	if c.Endpoint == "" {
		return DefaultEndpoint
	}
	return strings.TrimRight(c.Endpoint, "/")
}

func (c *Client) cacheDir() string { return c.CacheDir }

func (c *Client) httpClient() http.Client {
	if c.HTTP != nil {
		return *c.HTTP
	}
	return http.Client{}
}
