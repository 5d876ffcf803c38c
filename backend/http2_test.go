package backend

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"benchserve/record"
	"benchserve/sim"
)

// serveSimTLS serves a simulator over TLS (h2 offered when h2 is set),
// counting the requests that came over HTTP/2.
func serveSimTLS(t *testing.T, h2 bool) (*httptest.Server, *atomic.Int64, string) {
	t.Helper()
	cfg, _ := sim.Preset(sim.PresetInstant)
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var n2 atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 {
			n2.Add(1)
		}
		s.Handler().ServeHTTP(w, r)
	}))
	srv.EnableHTTP2 = h2
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, &n2, cfg.Model
}

func rootsOf(srv *httptest.Server) *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return &tls.Config{RootCAs: pool}
}

// --http2 speaks h2 over TLS: streamed and whole replies parse as on
// HTTP/1.1, and every request reached the server as HTTP/2.
func TestH2OverTLS(t *testing.T) {
	srv, n2, model := serveSimTLS(t, true)
	hc := NewH2Client(ClientOptions{TLS: rootsOf(srv)}, false)
	for _, stream := range []bool{true, false} {
		c, err := New("vllm", srv.URL, Options{Stream: stream, IgnoreEOS: true}, nil, hc)
		if err != nil {
			t.Fatal(err)
		}
		var rec record.Record
		c.Do(context.Background(), &Input{Text: "hello there", OutputLen: 5, Model: model}, &rec, time.Now())
		if !rec.Success || rec.Text == "" {
			t.Fatalf("stream %v: success %v, text %q, error %q", stream, rec.Success, rec.Text, rec.Error)
		}
		if stream && rec.Gaps.Len() != 4 {
			t.Errorf("stream: %d gaps, want 4", rec.Gaps.Len())
		}
	}
	if n2.Load() != 2 {
		t.Errorf("%d requests over HTTP/2, want 2", n2.Load())
	}
}

// A TLS server that does not choose h2 in ALPN fails the request with one
// line naming --http2.
func TestH2RefusedByHTTP1Server(t *testing.T) {
	srv, _, model := serveSimTLS(t, false)
	c, err := New("vllm", srv.URL, Options{Stream: true}, nil, NewH2Client(ClientOptions{TLS: rootsOf(srv)}, false))
	if err != nil {
		t.Fatal(err)
	}
	var rec record.Record
	c.Do(context.Background(), &Input{Text: "hi", OutputLen: 2, Model: model}, &rec, time.Now())
	if rec.Success || !strings.Contains(rec.Error, "--http2") || strings.ContainsAny(rec.Error, "\r\n") {
		t.Errorf("success %v, error %q", rec.Success, rec.Error)
	}
}
