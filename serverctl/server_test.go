package serverctl

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
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
		srv := &Server{Base: c.url, Auth: c.auth, HTTP: backend.NewHTTPClient(backend.ClientOptions{})}
		start := time.Now()
		err := srv.WaitReady(context.Background(), io.Discard, c.url+"/v1/models", c.timeout)
		took := time.Since(start)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to contain %q", c.url, err, c.want)
		}
		if c.quick && took > 3*time.Second {
			t.Errorf("%s: took %v; a hopeless answer must not be retried", c.url, took)
		}
	}
}

// A vLLM server without dev mode has no /reset_prefix_cache: the error
// says how to get it.
func TestFlushNotFound(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	ctl := &Server{Base: srv.URL, HTTP: backend.NewHTTPClient(backend.ClientOptions{})}
	err := ctl.Flush(context.Background(), FlushVLLM, 60)
	want := "--flush-cache: POST " + srv.URL + "/reset_prefix_cache answered 404 Not Found: 404 page not found; vLLM serves /reset_prefix_cache only when started with VLLM_SERVER_DEV_MODE=1"
	if err == nil || err.Error() != want {
		t.Errorf("vllm: err = %v, want %q", err, want)
	}
	if err := ctl.Flush(context.Background(), FlushSGLang, 60); err == nil || strings.Contains(err.Error(), "VLLM_SERVER_DEV_MODE") {
		t.Errorf("sglang: err = %v, want a 404 without the vLLM hint", err)
	}
}

func TestAcceptLength(t *testing.T) {
	cases := map[string]float64{ // -1: no accept length
		`{"internal_states":[{"avg_spec_accept_length":3.25}]}`:           3.25,
		`{"internal_states":[{}]}`:                                        -1,
		`{"internal_states":[]}`:                                          -1,
		`{"decode":[{"internal_states":[{"avg_spec_accept_length":2}]}]}`: 2,
		`{"decode":[],"internal_states":[{"avg_spec_accept_length":9}]}`:  -1,
		`not json`: -1,
	}
	for in, want := range cases {
		got := -1.0
		if v := AcceptLength([]byte(in)); v != nil {
			got = *v
		}
		if got != want {
			t.Errorf("AcceptLength(%s) = %v, want %v", in, got, want)
		}
	}
	if AcceptLength(nil) != nil {
		t.Error("nil body gave an accept length")
	}
}

// A --base-url ending in /v1 gets every path a second /v1: its 404 ends
// the readiness wait at the first answer, saying to drop /v1. Without /v1
// a 404 is retried (a server still loading may not route yet).
func TestWaitReadyBaseURLWithV1(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	ctl := &Server{Base: srv.URL + "/v1", HTTP: backend.NewHTTPClient(backend.ClientOptions{})}
	err := ctl.WaitReady(context.Background(), io.Discard, ctl.Base+"/v1/models", 60)
	want := "--base-url ends in /v1: the paths are appended to it (" + srv.URL + "/v1/v1/models answered 404); drop /v1"
	if err == nil || err.Error() != want || hits.Load() != 1 {
		t.Errorf("err = %v after %d requests, want %q after 1", err, hits.Load(), want)
	}
	// Without the readiness wait, the model lookup says the same.
	if _, err := ctl.FirstModel(context.Background()); err == nil || !strings.HasSuffix(err.Error(), "; --base-url ends in /v1: the paths are appended to it; drop /v1") {
		t.Errorf("FirstModel: %v", err)
	}
	hits.Store(0)
	ctl.Base = srv.URL
	if err := ctl.WaitReady(context.Background(), io.Discard, ctl.Base+"/v1/models", 1); err == nil || strings.Contains(err.Error(), "drop /v1") || hits.Load() < 1 {
		t.Errorf("without /v1: err = %v after %d requests", err, hits.Load())
	}
}

// An older SGLang answers only /get_server_info: Info (the accept length
// after a run) and InfoStrict (one-batch) read it there; a server that
// answers /server_info is not asked the older name.
func TestServerInfoOlderName(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	ask := func(p string) {
		mu.Lock()
		asked = append(asked, p)
		mu.Unlock()
	}
	seen := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), asked...)
	}
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ask(r.URL.Path)
		if r.URL.Path != "/get_server_info" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `{"internal_states": [{"avg_spec_accept_length": 2.5}]}`)
	}))
	t.Cleanup(old.Close)
	ctl := &Server{Base: old.URL, HTTP: backend.NewHTTPClient(backend.ClientOptions{})}
	if a := AcceptLength(ctl.Info(context.Background())); a == nil || *a != 2.5 {
		t.Errorf("accept length %v; asked %v", a, seen())
	}
	if body, err := ctl.InfoStrict(context.Background()); err != nil || !strings.Contains(string(body), "2.5") {
		t.Errorf("InfoStrict: %s, %v", body, err)
	}
	mu.Lock()
	asked = nil
	mu.Unlock()
	cur := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ask(r.URL.Path)
		io.WriteString(w, `{"internal_states": [{"avg_spec_accept_length": 3}]}`)
	}))
	t.Cleanup(cur.Close)
	ctl.Base = cur.URL
	if a := AcceptLength(ctl.Info(context.Background())); a == nil || *a != 3 || len(seen()) != 1 || seen()[0] != "/server_info" {
		t.Errorf("accept length %v; asked %v", a, seen())
	}
}
