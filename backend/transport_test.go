package backend

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"benchserve/record"
)

// countingServer answers a short stream and counts the connections made.
func countingServer(t *testing.T, handler http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	var conns atomic.Int32
	if handler == nil {
		handler = func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: [DONE]\n\n")
		}
	}
	srv := httptest.NewUnstartedServer(handler)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// idleCount is the number of connections c keeps.
func idleCount(c *Client) int {
	tr := c.http.Transport.(*transport)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	n := 0
	for _, l := range tr.idle {
		n += len(l)
	}
	for _, l := range tr.idleSocks {
		n += len(l)
	}
	return n
}

func doOnce(t *testing.T, c *Client) *record.Record {
	t.Helper()
	rec := &record.Record{}
	c.Do(context.Background(), &Input{Text: "x", OutputLen: 8}, rec, time.Now())
	return rec
}

// A kept connection the server has closed is not used again: the next
// request goes out on a new one, and succeeds.
func TestTransportServerClosedIdle(t *testing.T) {
	srv, conns := countingServer(t, nil)
	c, _ := New("vllm", srv.URL, Options{Stream: true}, nil, NewHTTPClient(ClientOptions{KeepAlive: true}))
	if rec := doOnce(t, c); !rec.Success {
		t.Fatal(rec.Error)
	}
	srv.CloseClientConnections()
	for i := range 3 {
		if rec := doOnce(t, c); !rec.Success {
			t.Fatalf("request %d after the server closed the idle connection: %s", i, rec.Error)
		}
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// A response that asks to close the connection, a 1xx before the
// response, and a body cut short all leave no connection for reuse.
func TestTransportNoReuse(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: [DONE]\n\n")
	})
	c, _ := New("vllm", srv.URL, Options{Stream: true}, nil, NewHTTPClient(ClientOptions{KeepAlive: true}))
	for range 3 {
		if rec := doOnce(t, c); !rec.Success {
			t.Fatal(rec.Error)
		}
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("Connection: close: %d connections, want 3", n)
	}

	// An informational response first.
	url := rawServer(t, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 47\r\n\r\n"+
		"data: {\"choices\":[{\"text\":\"b\"}]}\n\ndata: [DONE]\n\n")
	rec := &record.Record{}
	client(t, "vllm", Options{Stream: true}).withURL(url).Do(context.Background(), &Input{Text: "x"}, rec, time.Now())
	if !rec.Success || rec.Text != "b" {
		t.Errorf("after a 100: %+v", rec)
	}
}

// At most MaxConns connections per host stay open between requests.
func TestTransportIdleLimit(t *testing.T) {
	srv, conns := countingServer(t, nil)
	c, _ := New("vllm", srv.URL, Options{Stream: true}, nil, NewHTTPClient(ClientOptions{KeepAlive: true, MaxConns: 2}))
	tr := c.http.Transport.(*transport)
	for round := range 2 {
		done := make(chan bool)
		for range 4 {
			go func() { done <- doOnce(t, c).Success }()
		}
		for range 4 {
			if !<-done {
				t.Fatal("a request failed")
			}
		}
		if idle := idleCount(c); idle > 2 {
			t.Errorf("round %d: %d idle connections, want at most 2", round, idle)
		}
	}
	c.CloseIdleConnections()
	if len(tr.idle) != 0 || conns.Load() < 2 {
		t.Errorf("after CloseIdleConnections: %d hosts kept, %d connections made", len(tr.idle), conns.Load())
	}
}

// https goes through net/http's Transport, with the TLS options.
func TestTransportTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: {\"choices\":[{\"text\":\"s\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	c, _ := New("vllm", srv.URL, Options{Stream: true}, nil, NewHTTPClient(ClientOptions{KeepAlive: true, TLS: &tls.Config{InsecureSkipVerify: true}}))
	if rec := doOnce(t, c); !rec.Success || rec.Text != "s" {
		t.Errorf("https: %+v", rec)
	}
	c, _ = New("vllm", srv.URL, Options{Stream: true}, nil, NewHTTPClient(ClientOptions{KeepAlive: true}))
	if rec := doOnce(t, c); rec.Success || rec.ErrorKind != record.KindConnect || !strings.Contains(rec.Error, "certificate") {
		t.Errorf("unverified certificate: %q (%s)", rec.Error, rec.ErrorKind)
	}
}

// The request goes out as net/http writes it, custom headers, Host and
// Connection: close (without keep-alive) included.
func TestTransportRequest(t *testing.T) {
	got := make(chan *http.Request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		got <- r
		io.WriteString(w, "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	h := http.Header{"Authorization": {"Bearer k"}, "Host": {"example.test"}, "X-Custom": {"1", "2"}}
	c, _ := New("vllm", srv.URL, Options{Stream: true}, h, NewHTTPClient(ClientOptions{KeepAlive: false}))
	if rec := doOnce(t, c); !rec.Success {
		t.Fatal(rec.Error)
	}
	r := <-got
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/completions" || r.Host != "example.test" || !r.Close ||
		r.Header.Get("Authorization") != "Bearer k" || strings.Join(r.Header["X-Custom"], ",") != "1,2" ||
		r.Header.Get("Content-Type") != "application/json" || r.Header.Get("User-Agent") != "Go-http-client/1.1" ||
		r.ContentLength != int64(len(body)) || !strings.Contains(string(body), `"prompt": "x"`) {
		t.Errorf("request: %s %s host %q close %v header %v body %s", r.Method, r.URL, r.Host, r.Close, r.Header, body)
	}
}

// Preconnect opens the connections the next requests use.
func TestPreconnect(t *testing.T) {
	srv, conns := countingServer(t, nil)
	c, _ := New("vllm", srv.URL, Options{Stream: true}, nil, NewHTTPClient(ClientOptions{KeepAlive: true, MaxConns: 8}))
	if n, err := c.Preconnect(context.Background(), 3); err != nil || n != 3 {
		t.Fatal(n, err)
	}
	if n := idleCount(c); n != 3 {
		t.Fatalf("%d connections kept, want 3", n)
	}
	done := make(chan bool)
	for range 3 {
		go func() { done <- doOnce(t, c).Success }()
	}
	for range 3 {
		if !<-done {
			t.Fatal("a request failed")
		}
	}
	// The server has served them all, on the 3 connections.
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections after 3 requests, want the 3 opened", n)
	}
	// Without keep-alive it opens nothing; a dead server is an error.
	c, _ = New("vllm", srv.URL, Options{Stream: true}, nil, NewHTTPClient(ClientOptions{KeepAlive: false}))
	if n, err := c.Preconnect(context.Background(), 3); err != nil || n != 0 || idleCount(c) != 0 {
		t.Errorf("without keep-alive: %d, %v, %d kept", n, err, idleCount(c))
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	c, _ = New("vllm", "http://"+addr, Options{Stream: true}, nil, NewHTTPClient(ClientOptions{KeepAlive: true}))
	if n, err := c.Preconnect(context.Background(), 2); n != 0 || err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("refused: %d, %v", n, err)
	}
}

// closeSecondServer answers the first request on each connection, then
// reads the next one and closes the connection without a word: a server
// that closed an idle connection as the request was written.
func closeSecondServer(t *testing.T) (string, *atomic.Int32) {
	var conns atomic.Int32
	url := rawAccept(t, nil, func(conn net.Conn, br *bufio.Reader) {
		conns.Add(1)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		const ev = "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: [DONE]\n\n"
		fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(ev), ev)
		if req, err = http.ReadRequest(br); err == nil {
			io.Copy(io.Discard, req.Body)
		}
	})
	return url, &conns
}

// A request written on a kept connection that the server closes without
// answering is sent again, once, on a new connection.
func TestTransportRetriesClosedKeptConnection(t *testing.T) {
	url, conns := closeSecondServer(t)
	c, _ := New("vllm", url, Options{Stream: true}, nil, NewHTTPClient(ClientOptions{KeepAlive: true}))
	for i := range 3 {
		if rec := doOnce(t, c); !rec.Success {
			t.Fatalf("request %d: %s", i, rec.Error)
		}
	}
	// Requests 2 and 3 each found the kept connection closed under them.
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections for 3 requests, want 3", n)
	}
}

// A connection idle for longer than the transport keeps them is closed
// rather than used: the server may be closing it at that moment.
func TestTransportIdleAge(t *testing.T) {
	srv, conns := countingServer(t, nil)
	hc := NewHTTPClient(ClientOptions{KeepAlive: true})
	hc.Transport.(*transport).maxAge = 50 * time.Millisecond
	c, _ := New("vllm", srv.URL, Options{Stream: true}, nil, hc)
	doOnce(t, c)
	doOnce(t, c)
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for 2 requests in a row, want 1", n)
	}
	time.Sleep(80 * time.Millisecond)
	if rec := doOnce(t, c); !rec.Success {
		t.Fatal(rec.Error)
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections after an idle spell longer than the limit, want 2", n)
	}
	if idleTimeout >= 5*time.Second {
		t.Errorf("idle connections are kept %v, not less than uvicorn's 5 s", idleTimeout)
	}
}

// https connections are opened before the run too, handshake included.
func TestPreconnectTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: {\"choices\":[{\"text\":\"s\"}]}\n\ndata: [DONE]\n\n")
	}))
	var handshakes atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			handshakes.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	c, _ := New("vllm", srv.URL, Options{Stream: true}, nil, NewHTTPClient(ClientOptions{KeepAlive: true, TLS: &tls.Config{InsecureSkipVerify: true}}))
	if n, err := c.Preconnect(context.Background(), 2); n != 2 || err != nil {
		t.Fatalf("Preconnect: %d, %v", n, err)
	}
	for range 2 {
		if rec := doOnce(t, c); !rec.Success {
			t.Fatal(rec.Error)
		}
	}
	if n := handshakes.Load(); n != 2 {
		t.Errorf("%d connections, want the 2 opened before", n)
	}
}
