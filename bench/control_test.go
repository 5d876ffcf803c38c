package bench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"benchserve/backend"
)

func statusServer(t *testing.T, code int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) }))
	t.Cleanup(srv.Close)
	return srv
}

// An answer that waiting cannot change ends the readiness wait at once,
// saying what to do; anything else is retried until the timeout.
func TestWaitReadyHopeless(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(tlsSrv.Close)
	cases := []struct {
		url     string
		auth    http.Header
		timeout int
		want    string
		quick   bool
	}{
		{statusServer(t, 401).URL, http.Header{}, 30, "answered 401 Unauthorized to the readiness check: no key was sent: set OPENAI_API_KEY", true},
		{statusServer(t, 403).URL, http.Header{"Authorization": {"Bearer k"}}, 30,
			"answered 403 Forbidden to the readiness check: the key from OPENAI_API_KEY or API_KEY was refused: check it; the check does not send --header", true},
		{tlsSrv.URL, http.Header{}, 30, "has a certificate that does not verify (", true},
		{statusServer(t, 503).URL, http.Header{}, 1, "is not ready after 1s (last attempt: HTTP 503 Service Unavailable); check --host/--port/--base-url", false},
	}
	for _, c := range cases {
		ctl := &control{base: c.url, auth: c.auth, http: backend.NewHTTPClient(backend.ClientOptions{})}
		start := time.Now()
		err := ctl.waitReady(context.Background(), io.Discard, c.url+"/v1/models", c.timeout)
		took := time.Since(start)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to contain %q", c.url, err, c.want)
		}
		if ee, ok := err.(*ExitError); !ok || ee.Code != ExitFailure {
			t.Errorf("%s: err = %#v, want exit code 1", c.url, err)
		}
		if c.quick && took > 3*time.Second {
			t.Errorf("%s: took %v; a hopeless answer must not be retried", c.url, took)
		}
	}
}

func TestCheckTarget(t *testing.T) {
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }
	cases := []struct {
		cfg  Config
		want string // "" for none
	}{
		{Config{Host: "0.0.0.0"}, ""},
		{Config{Host: "::1", Port: num(8000)}, ""},
		{Config{Host: "[fe80::1%eth0]", Port: num(1)}, ""},
		{Config{Host: "h", Port: num(65536)}, "--port 65536: must be between 1 and 65535"},
		{Config{Host: "localhost:3000"}, "--host localhost:3000: give the port with --port (--host localhost --port 3000)"},
		{Config{Host: "http://localhost:3000"}, "--host http://localhost:3000: a host name, not a URL; use --base-url http://localhost:3000"},
		{Config{Host: "a:b:c"}, "--host a:b:c: not a host name or IP address"},
		{Config{BaseURL: str("https://api.example.com/v1/")}, ""},
		{Config{BaseURL: str("http://[::1]:8000")}, ""},
		{Config{BaseURL: str("localhost:3000")}, "--base-url localhost:3000: no scheme; did you mean --base-url http://localhost:3000?"},
		{Config{BaseURL: str("127.0.0.1:3000")}, "--base-url 127.0.0.1:3000: no scheme; did you mean --base-url http://127.0.0.1:3000?"},
		{Config{BaseURL: str("htp://x")}, "--base-url htp://x: unsupported scheme htp:// (use http:// or https://)"},
		{Config{BaseURL: str("http://")}, "--base-url http://: no host"},
		{Config{BaseURL: str("http://u:secret@h:0")}, "--base-url http://u:xxxxx@h:0: port 0 is out of range (1-65535)"},
		{Config{BaseURL: str("http://h:x")}, "--base-url http://h:x: not a URL (invalid port \":x\" after host)"},
	}
	for _, c := range cases {
		got := ""
		if err := checkTarget(&c.cfg); err != nil {
			got = err.Error()
			if ee, ok := err.(*ExitError); !ok || ee.Code != ExitUsage {
				t.Errorf("%+v: %#v is not a usage error", c.cfg, err)
			}
		}
		if got != c.want {
			t.Errorf("%+v:\n got %q\nwant %q", c.cfg, got, c.want)
		}
	}
}

// A vLLM server without dev mode has no /reset_prefix_cache: the error
// says how to get it.
func TestFlushNotFound(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	ctl := &control{base: srv.URL, http: backend.NewHTTPClient(backend.ClientOptions{})}
	err := ctl.flush(context.Background(), "vllm-chat", 60)
	want := "--flush-cache: POST " + srv.URL + "/reset_prefix_cache answered 404 Not Found: 404 page not found; vLLM serves /reset_prefix_cache only when started with VLLM_SERVER_DEV_MODE=1"
	if err == nil || err.Error() != want {
		t.Errorf("vllm: err = %v, want %q", err, want)
	}
	if err := ctl.flush(context.Background(), "sglang", 60); err == nil || strings.Contains(err.Error(), "VLLM_SERVER_DEV_MODE") {
		t.Errorf("sglang: err = %v, want a 404 without the vLLM hint", err)
	}
}
