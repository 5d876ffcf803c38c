package serverctl

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"benchserve/backend"
)

func statusServer(t *testing.T, code int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) }))
	t.Cleanup(srv.Close)
	return srv
}

// An answer that waiting cannot change ends the readiness wait at its
// first attempt, saying what to do; anything else is retried once a
// second until the timeout. In a synctest bubble against a server in
// memory: the attempts' times exactly.
func TestWaitReadyHopeless(t *testing.T) {
	cases := []struct {
		code    int
		auth    http.Header
		timeout int
		want    string
		tries   []time.Duration
	}{
		{401, http.Header{}, 30, "answered 401 Unauthorized to the readiness check: no key was sent: set OPENAI_API_KEY", []time.Duration{0}},
		{403, http.Header{"Authorization": {"Bearer k"}}, 30,
			"answered 403 Forbidden to the readiness check: the key from OPENAI_API_KEY or API_KEY was refused: check it; the check does not send --header", []time.Duration{0}},
		{503, http.Header{}, 2, "is not ready after 2s (last attempt: HTTP 503 Service Unavailable); check --host/--port/--base-url", []time.Duration{0, time.Second, 2 * time.Second}},
	}
	for _, c := range cases {
		synctest.Test(t, func(t *testing.T) {
			var tries []time.Duration
			start := time.Now()
			srv := &Server{Base: "http://server.test", Auth: c.auth, HTTP: &http.Client{Transport: roundTrip(func(*http.Request) (*http.Response, error) {
				tries = append(tries, time.Since(start))
				return answer(c.code, ""), nil
			})}}
			err := srv.WaitReady(context.Background(), io.Discard, srv.Base+"/v1/models", c.timeout)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%d: err = %v, want it to contain %q", c.code, err, c.want)
			}
			if !slices.Equal(tries, c.tries) {
				t.Errorf("%d: attempts at %v, want %v", c.code, tries, c.tries)
			}
		})
	}
	// A certificate that does not verify, over a real TLS connection: one
	// attempt, one connection.
	var conns atomic.Int32
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tlsSrv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	srv := &Server{Base: tlsSrv.URL, Auth: http.Header{}, HTTP: backend.NewHTTPClient(backend.ClientOptions{})}
	err := srv.WaitReady(context.Background(), io.Discard, tlsSrv.URL+"/v1/models", 30)
	if want := "has a certificate that does not verify ("; err == nil || !strings.Contains(err.Error(), want) || conns.Load() != 1 {
		t.Errorf("TLS: err = %v after %d connections, want it to contain %q after 1", err, conns.Load(), want)
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
	synctest.Test(t, func(t *testing.T) {
		hits := 0
		base := "http://server.test"
		ctl := &Server{Base: base + "/v1", HTTP: &http.Client{Transport: roundTrip(func(*http.Request) (*http.Response, error) {
			hits++
			return answer(404, "404 page not found\n"), nil
		})}}
		err := ctl.WaitReady(context.Background(), io.Discard, ctl.Base+"/v1/models", 60)
		want := "--base-url ends in /v1: the paths are appended to it (" + base + "/v1/v1/models answered 404); drop /v1"
		if err == nil || err.Error() != want || hits != 1 {
			t.Errorf("err = %v after %d requests, want %q after 1", err, hits, want)
		}
		// Without the readiness wait, the model lookup says the same.
		if _, err := ctl.FirstModel(context.Background()); err == nil || !strings.HasSuffix(err.Error(), "; --base-url ends in /v1: the paths are appended to it; drop /v1") {
			t.Errorf("FirstModel: %v", err)
		}
		// Without /v1 a 404 is retried, once a second until the timeout.
		hits = 0
		ctl.Base = base
		if err := ctl.WaitReady(context.Background(), io.Discard, ctl.Base+"/v1/models", 1); err == nil || strings.Contains(err.Error(), "drop /v1") || hits != 2 {
			t.Errorf("without /v1: err = %v after %d requests, want 2", err, hits)
		}
	})
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

// A readiness check that polled /v1/models and found it answers
// FirstModel too: one request, not two; the next FirstModel asks again.
func TestFirstModelFromReadiness(t *testing.T) {
	var asked []string
	srv := &Server{Base: "http://server.test", HTTP: &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		asked = append(asked, r.URL.Path)
		return answer(200, `{"object":"list","data":[{"id":"m`+strconv.Itoa(len(asked))+`"}]}`), nil
	})}}
	if err := srv.WaitReady(context.Background(), io.Discard, srv.Base+"/v1/models", 5); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"m1", "m2"} {
		if m, err := srv.FirstModel(context.Background()); err != nil || m != want {
			t.Errorf("FirstModel = %q, %v, want %s", m, err, want)
		}
	}
	if want := []string{"/v1/models", "/v1/models"}; !slices.Equal(asked, want) {
		t.Errorf("asked %v, want %v", asked, want)
	}
	// A readiness check of another path leaves /v1/models to FirstModel.
	asked = nil
	if err := srv.WaitReady(context.Background(), io.Discard, srv.Base+"/health", 5); err != nil {
		t.Fatal(err)
	}
	if m, err := srv.FirstModel(context.Background()); err != nil || m != "m2" {
		t.Errorf("after /health: FirstModel = %q, %v, want m2", m, err)
	}
	if want := []string{"/health", "/v1/models"}; !slices.Equal(asked, want) {
		t.Errorf("after /health: asked %v, want %v", asked, want)
	}
}
