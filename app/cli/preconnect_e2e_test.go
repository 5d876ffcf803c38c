package cli

import (
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// refusing closes the next n connections it accepts once armed (a gateway
// at its connection limit).
type refusing struct {
	net.Listener
	armed atomic.Int32
}

func (l *refusing) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil || l.armed.Add(-1) < 0 {
			return c, err
		}
		c.Close()
	}
}

// Connections refused before the run give a warning, and the run goes on
// with those it has (the reference, which connects per request, would
// just run).
func TestPreconnectRefusedGoesOn(t *testing.T) {
	t.Parallel()
	f := &fakeServer{}
	ln := &refusing{}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/completions" && f.requests.Load() == 0 {
			ln.armed.Store(2) // the warmup is in: refuse two of the connections opened next
		}
		f.serve(w, r)
	}))
	var err error
	if ln.Listener, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	f.srv.Listener = ln
	f.srv.StartTLS()
	t.Cleanup(f.srv.Close)
	code, stdout, stderr := run(t, nil, "--backend", "vllm", "--base-url", f.srv.URL, "--insecure", "--tokenizer", "o200k_base",
		"--dataset-name", "random-ids", "--num-prompts", "8", "--random-input-len", "4", "--random-output-len", "2",
		"--max-concurrency", "4", "--output-file", filepath.Join(t.TempDir(), "r.jsonl"))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "warning: opened 2 of 4 connections") || field(t, stdout, "Successful requests:") != "8" {
		t.Errorf("stderr %q; successful %s", stderr, field(t, stdout, "Successful requests:"))
	}
}
