package http1

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"benchserve/internal/testenv"
	"benchserve/record"
)

const shortStream = "data: a\n\ndata: [DONE]\n\n"

// countingServer answers a short stream and counts the connections made.
func countingServer(t *testing.T, handler http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	var conns atomic.Int32
	if handler == nil {
		handler = func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, shortStream) }
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

// idleCount is the number of connections tr keeps, and of them the event
// loop's.
func idleCount(tr *Transport) (all, socks int) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, l := range tr.idle {
		all += len(l)
	}
	for _, l := range tr.idleSocks {
		socks += len(l)
	}
	return all + socks, socks
}

// Plain HTTP goes through the receiver Options.Receive names: the kept
// connection is the event loop's socket, or a poller connection. With
// Options.Dial, it is the poller's whatever Receive says.
func TestReceiverCarriesPlainHTTP(t *testing.T) {
	run(t, func(t *testing.T, rc receiver) {
		srv, _ := countingServer(t, nil)
		tr := rc.transport(Options{KeepAlive: true})
		if h := send(t, tr, srv.URL); !h.success() || h.text() != "a" {
			t.Fatalf("%+v", h.rec)
		}
		all, socks := idleCount(tr)
		want := map[string]int{ReceivePoller: 0, ReceiveEvents: 1, ReceiveUring: 1}[rc.mode]
		if all != 1 || socks != want {
			t.Errorf("%d kept connections, %d of them the event loop's; want 1, %d", all, socks, want)
		}
		var d net.Dialer
		tr = rc.transport(Options{KeepAlive: true, Dial: d.DialContext})
		if h := send(t, tr, srv.URL); !h.success() {
			t.Fatalf("with Dial: %+v", h.rec)
		}
		if all, socks := idleCount(tr); all != 1 || socks != 0 {
			t.Errorf("with Dial: %d kept, %d the event loop's; want 1, 0", all, socks)
		}
	})
}

// A kept connection the server has closed is not used again: the next
// request goes out on a new one, and succeeds.
func TestTransportServerClosedIdle(t *testing.T) {
	run(t, func(t *testing.T, rc receiver) {
		srv, conns := countingServer(t, nil)
		tr := rc.transport(Options{KeepAlive: true})
		if h := send(t, tr, srv.URL); !h.success() {
			t.Fatal(h.rec.Error)
		}
		srv.CloseClientConnections()
		for i := range 3 {
			if h := send(t, tr, srv.URL); !h.success() {
				t.Fatalf("request %d after the server closed the idle connection: %s", i, h.rec.Error)
			}
		}
		if n := conns.Load(); n != 2 {
			t.Errorf("%d connections, want 2", n)
		}
	})
}

// A response that asks to close the connection, a 1xx before the
// response, and a body cut short all leave no connection for reuse.
func TestTransportNoReuse(t *testing.T) {
	run(t, func(t *testing.T, rc receiver) {
		srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "close")
			io.WriteString(w, shortStream)
		})
		tr := rc.transport(Options{KeepAlive: true})
		for range 3 {
			if h := send(t, tr, srv.URL); !h.success() {
				t.Fatal(h.rec.Error)
			}
		}
		if n := conns.Load(); n != 3 {
			t.Errorf("Connection: close: %d connections, want 3", n)
		}

		// An informational response first.
		url := rawServer(t, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 23\r\n\r\n"+
			"data: b\n\ndata: [DONE]\n\n")
		if h := send(t, rc.transport(Options{KeepAlive: true}), url); !h.success() || h.text() != "b" {
			t.Errorf("after a 100: %+v %q", h.rec, h.lines)
		}
	})
}

// At most MaxConns connections per host stay open between requests.
func TestTransportIdleLimit(t *testing.T) {
	run(t, func(t *testing.T, rc receiver) {
		srv, conns := countingServer(t, nil)
		tr := rc.transport(Options{KeepAlive: true, MaxConns: 2})
		for round := range 2 {
			done := make(chan bool)
			for range 4 {
				go func() { done <- send(t, tr, srv.URL).success() }()
			}
			for range 4 {
				if !<-done {
					t.Fatal("a request failed")
				}
			}
			if idle, _ := idleCount(tr); idle > 2 {
				t.Errorf("round %d: %d idle connections, want at most 2", round, idle)
			}
		}
		tr.CloseIdleConnections()
		if idle, _ := idleCount(tr); idle != 0 || conns.Load() < 2 {
			t.Errorf("after CloseIdleConnections: %d kept, %d connections made", idle, conns.Load())
		}
	})
}

// https goes through the poller whatever the receiver, with the TLS
// options.
func TestTransportTLS(t *testing.T) {
	run(t, func(t *testing.T, rc receiver) {
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "data: s\n\ndata: [DONE]\n\n")
		}))
		defer srv.Close()
		tr := rc.transport(Options{KeepAlive: true, TLS: &tls.Config{InsecureSkipVerify: true}})
		if h := send(t, tr, srv.URL); !h.success() || h.text() != "s" {
			t.Errorf("https: %+v", h.rec)
		}
		if _, socks := idleCount(tr); socks != 0 {
			t.Errorf("https: %d event-loop sockets kept", socks)
		}
		h := send(t, rc.transport(Options{KeepAlive: true}), srv.URL)
		if h.ok || h.rec.ErrorKind != record.KindConnect || !strings.Contains(h.rec.Error, "certificate") {
			t.Errorf("unverified certificate: %q (%s)", h.rec.Error, h.rec.ErrorKind)
		}
	})
}

// The request goes out as net/http writes it, custom headers, Host and
// Connection: close (without keep-alive) included.
func TestTransportRequest(t *testing.T) {
	run(t, func(t *testing.T, rc receiver) {
		got := make(chan *http.Request, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			got <- r
			io.WriteString(w, shortStream)
		}))
		defer srv.Close()
		h := &testHandler{url: srv.URL + "/v1/completions", header: http.Header{"Authorization": {"Bearer k"}, "X-Custom": {"1", "2"}}}
		tr := rc.transport(Options{KeepAlive: false})
		if sendWith(tr, h, Send{Timeout: time.Minute, Stream: true}); !h.success() {
			t.Fatal(h.rec.Error)
		}
		r := <-got
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/completions" || !r.Close ||
			r.Header.Get("Authorization") != "Bearer k" || strings.Join(r.Header["X-Custom"], ",") != "1,2" ||
			r.Header.Get("User-Agent") != "Go-http-client/1.1" ||
			r.ContentLength != int64(len(body)) || string(body) != `{"prompt": "x"}` {
			t.Errorf("request: %s %s host %q close %v header %v body %s", r.Method, r.URL, r.Host, r.Close, r.Header, body)
		}
	})
}

// Preconnect opens the connections the next requests use.
func TestPreconnect(t *testing.T) {
	run(t, func(t *testing.T, rc receiver) {
		srv, conns := countingServer(t, nil)
		u, _ := url.Parse(srv.URL)
		tr := rc.transport(Options{KeepAlive: true, MaxConns: 8})
		if n, err := tr.Preconnect(context.Background(), &http.Request{URL: u}, 3); err != nil || n != 3 {
			t.Fatal(n, err)
		}
		if n, _ := idleCount(tr); n != 3 {
			t.Fatalf("%d connections kept, want 3", n)
		}
		// The server accepts them in its own time (late, under qemu).
		for deadline := time.Now().Add(10 * time.Second); conns.Load() < 3 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		done := make(chan bool)
		for range 3 {
			go func() { done <- send(t, tr, srv.URL).success() }()
		}
		for range 3 {
			if !<-done {
				t.Fatal("a request failed")
			}
		}
		// The server has served them all on the connections opened.
		if n := conns.Load(); n != 3 {
			t.Errorf("%d connections after 3 requests, want the 3 opened", n)
		}
		// Without keep-alive it opens nothing; a dead server is an error.
		tr = rc.transport(Options{KeepAlive: false})
		if n, err := tr.Preconnect(context.Background(), &http.Request{URL: u}, 3); err != nil || n != 0 {
			t.Errorf("without keep-alive: %d, %v", n, err)
		}
		if n, _ := idleCount(tr); n != 0 {
			t.Errorf("without keep-alive: %d kept", n)
		}
		dead, _ := url.Parse("http://" + testenv.RefusedAddr(t))
		tr = rc.transport(Options{KeepAlive: true})
		if n, err := tr.Preconnect(context.Background(), &http.Request{URL: dead}, 2); n != 0 || err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("refused: %d, %v", n, err)
		}
	})
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
		fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(shortStream), shortStream)
		if req, err = http.ReadRequest(br); err == nil {
			io.Copy(io.Discard, req.Body)
		}
	})
	return url, &conns
}

// A request written on a kept connection that the server closes without
// answering is sent again, once, on a new connection: by the state
// machine and by RoundTrip.
func TestTransportRetriesClosedKeptConnection(t *testing.T) {
	run(t, func(t *testing.T, rc receiver) {
		url, conns := closeSecondServer(t)
		tr := rc.transport(Options{KeepAlive: true})
		for i := range 3 {
			if h := send(t, tr, url); !h.success() {
				t.Fatalf("request %d: %s", i, h.rec.Error)
			}
		}
		// Requests 2 and 3 each found the kept connection closed under them.
		if n := conns.Load(); n != 3 {
			t.Errorf("%d connections for 3 requests, want 3", n)
		}
	})
	url, conns := closeSecondServer(t)
	hc := &http.Client{Transport: NewTransport(Options{KeepAlive: true})}
	for i := range 3 {
		resp, err := hc.Post(url, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatalf("RoundTrip, request %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != shortStream {
			t.Errorf("RoundTrip, request %d: %q", i, b)
		}
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("RoundTrip: %d connections for 3 requests, want 3", n)
	}
}

// A connection idle for longer than the transport keeps them is closed
// rather than used: the server may be closing it at that moment.
func TestTransportIdleAge(t *testing.T) {
	run(t, func(t *testing.T, rc receiver) {
		srv, conns := countingServer(t, nil)
		tr := rc.transport(Options{KeepAlive: true})
		tr.maxAge = 50 * time.Millisecond
		send(t, tr, srv.URL)
		send(t, tr, srv.URL)
		if n := conns.Load(); n != 1 {
			t.Fatalf("%d connections for 2 requests in a row, want 1", n)
		}
		time.Sleep(80 * time.Millisecond)
		if h := send(t, tr, srv.URL); !h.success() {
			t.Fatal(h.rec.Error)
		}
		if n := conns.Load(); n != 2 {
			t.Errorf("%d connections after an idle spell longer than the limit, want 2", n)
		}
	})
	if idleTimeout >= 5*time.Second {
		t.Errorf("idle connections are kept %v, not less than uvicorn's 5 s", idleTimeout)
	}
}

// https connections are opened before the run too, handshake included.
func TestPreconnectTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: s\n\ndata: [DONE]\n\n")
	}))
	var handshakes atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			handshakes.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	tr := NewTransport(Options{KeepAlive: true, TLS: &tls.Config{InsecureSkipVerify: true}})
	if n, err := tr.Preconnect(context.Background(), &http.Request{URL: u}, 2); n != 2 || err != nil {
		t.Fatalf("Preconnect: %d, %v", n, err)
	}
	for range 2 {
		if h := send(t, tr, srv.URL); !h.success() {
			t.Fatal(h.rec.Error)
		}
	}
	if n := handshakes.Load(); n != 2 {
		t.Errorf("%d connections, want the 2 opened before", n)
	}
}
