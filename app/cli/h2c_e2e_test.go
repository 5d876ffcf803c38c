package cli

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"benchserve/sim"
)

// An h2c run and an HTTP/1.1 run of the same plan against the simulator
// report the same request and token totals, and the h2c run's connections
// that carried anything all open with h2's preface (the client really
// spoke h2) while the HTTP/1.1 run's never do.
func TestH2CRunMatchesHTTP1(t *testing.T) {
	s, err := sim.New(steadySim(2*time.Millisecond, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pl := &prefaceListener{Listener: ln}
	if err := s.Start(pl); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	base := "http://" + ln.Addr().String()

	totals := func(extra ...string) (map[string]float64, int, int) {
		t.Helper()
		pl.reset()
		out := filepath.Join(t.TempDir(), "r.jsonl")
		args := append([]string{"--backend", "vllm", "--base-url", base, "--dataset-name", "random-ids",
			"--random-input-len", "16", "--random-output-len", "10", "--random-range-ratio", "1",
			"--num-prompts", "12", "--max-concurrency", "6", "--warmup-requests", "0", "--output-file", out}, extra...)
		code, stdout, stderr := run(t, nil, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", extra, code, stdout, stderr)
		}
		data, _ := os.ReadFile(out)
		var res map[string]any
		line := strings.ReplaceAll(strings.TrimSpace(string(data)), "Infinity", "null")
		if err := json.Unmarshal([]byte(line), &res); err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, k := range []string{"completed", "total_input_tokens", "total_output_tokens"} {
			v, ok := res[k].(float64)
			if !ok {
				t.Fatalf("%v: no %s in the result", extra, k)
			}
			got[k] = v
		}
		conns, h2 := pl.counts()
		return got, conns, h2
	}
	h1, c1, h2of1 := totals()
	h2, c2, h2of2 := totals("--h2c")
	if h1["completed"] != 12 || h1["total_output_tokens"] != 120 {
		t.Errorf("HTTP/1.1 totals %v, want 12 completed, 120 output tokens", h1)
	}
	for k, v := range h1 {
		if h2[k] != v {
			t.Errorf("%s: h2c %v, HTTP/1.1 %v", k, h2[k], v)
		}
	}
	if c1 == 0 || h2of1 != 0 {
		t.Errorf("HTTP/1.1 run: %d HTTP/1 connections, %d h2", c1, h2of1)
	}
	if c2 != 0 || h2of2 == 0 {
		t.Errorf("h2c run: %d HTTP/1 connections, %d h2", c2, h2of2)
	}
}

// prefaceListener counts the connections it accepts whose first bytes are
// h2's client preface, and those that began with something else (an
// HTTP/1 request). A connection closed unused (the loser of a dial race)
// is neither.
type prefaceListener struct {
	net.Listener
	mu       sync.Mutex
	h1s, h2s int
}

func (l *prefaceListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	return &prefaceConn{Conn: c, l: l}, nil
}

func (l *prefaceListener) reset() {
	l.mu.Lock()
	l.h1s, l.h2s = 0, 0
	l.mu.Unlock()
}

func (l *prefaceListener) counts() (int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.h1s, l.h2s
}

type prefaceConn struct {
	net.Conn
	l    *prefaceListener
	head []byte
	done bool
}

const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

func (c *prefaceConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.done {
		c.head = append(c.head, p[:n]...)
		if len(c.head) >= len(h2Preface) || err != nil {
			c.done = true
			c.l.mu.Lock()
			switch {
			case bytes.HasPrefix(c.head, []byte(h2Preface)):
				c.l.h2s++
			case len(c.head) > 0:
				c.l.h1s++
			}
			c.l.mu.Unlock()
		}
	}
	return n, err
}

// Over TLS against the simulator's self-signed certificate (--cacert):
// an --http2 run (ALPN h2) and an HTTPS HTTP/1.1 run report the same
// totals; the HTTP/1.1 one's responses are kernel-timed and the h2 one's
// never are (they come through net/http's h2). --sim --http2 serves and
// trusts a certificate of its own.
func TestHTTP2OverTLSMatchesHTTP1(t *testing.T) {
	cfg := steadySim(2*time.Millisecond, time.Millisecond)
	cert := filepath.Join(t.TempDir(), "cert.pem")
	cfg.TLSSelfSigned = cert
	_, base := newSim(t, cfg)
	if !strings.HasPrefix(base, "https://") {
		t.Fatalf("the simulator serves %s", base)
	}
	result := func(args ...string) map[string]any {
		t.Helper()
		out := filepath.Join(t.TempDir(), "r.jsonl")
		args = append([]string{"--backend", "vllm", "--dataset-name", "random-ids",
			"--random-input-len", "16", "--random-output-len", "10", "--random-range-ratio", "1",
			"--num-prompts", "12", "--max-concurrency", "6", "--warmup-requests", "0", "--output-file", out}, args...)
		code, stdout, stderr := run(t, nil, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
		return readLine(t, out)
	}
	h1 := result("--base-url", base, "--cacert", cert)
	h2 := result("--base-url", base, "--cacert", cert, "--http2")
	for _, k := range []string{"completed", "total_input_tokens", "total_output_tokens"} {
		if num(t, h1, k) != num(t, h2, k) {
			t.Errorf("%s: --http2 %v, HTTP/1.1 %v", k, h2[k], h1[k])
		}
	}
	if num(t, h1, "completed") != 12 || num(t, h1, "kernel_timed_pct") != 100 || num(t, h2, "kernel_timed_pct") != 0 {
		t.Errorf("completed %v; kernel-timed: HTTP/1.1 %v%%, h2 %v%%", h1["completed"], h1["kernel_timed_pct"], h2["kernel_timed_pct"])
	}
	if own := result("--sim", "--sim-preset", "instant", "--http2"); num(t, own, "completed") != 12 {
		t.Errorf("--sim --http2: completed %v", own["completed"])
	}
}
