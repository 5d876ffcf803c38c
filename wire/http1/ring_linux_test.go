//go:build linux

package http1

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"benchserve/wire/uring"
)

// keptSock is the one socket tr keeps for url's server.
func keptSock(t *testing.T, tr *Transport, url string) *sock {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	l := tr.idleSocks[url]
	if len(l) != 1 {
		t.Fatalf("%d kept event-loop sockets, want 1", len(l))
	}
	return l[0].c.(*sock)
}

// Where io_uring serves, ReceiveUring reads through a ring, and Receiver
// says so; ReceiveAuto stays with epoll.
func TestRingReadsPlainHTTP(t *testing.T) {
	if err := uring.Available(); err != nil {
		t.Skip("io_uring does not serve here (TestRingFallback covers it):", err)
	}
	srv, _ := countingServer(t, nil)
	for _, mode := range []string{ReceiveUring, ReceiveAuto} {
		tr := NewTransport(Options{KeepAlive: true, Receive: mode})
		for i := range 2 { // the second on the kept socket
			if h := send(t, tr, srv.URL); !h.success() || h.text() != "a" {
				t.Fatalf("%s, request %d: %+v", mode, i, h.rec)
			}
		}
		if s := keptSock(t, tr, srv.URL); (s.ring != nil) != (mode == ReceiveUring) {
			t.Errorf("%s: reads through a ring: %v", mode, s.ring != nil)
		}
		tr.CloseIdleConnections()
	}
	if name, why := Receiver(ReceiveUring); name != ReceiveUring || why != "" {
		t.Errorf("Receiver(uring) = %q, %q", name, why)
	}
	for _, mode := range []string{ReceiveEvents, ReceiveAuto, ""} {
		if name, _ := Receiver(mode); name != ReceiveEvents {
			t.Errorf("Receiver(%q) = %q, want events", mode, name)
		}
	}
}

// Without io_uring (missing, disabled, too old) ReceiveUring reads
// through the epoll loop, and Receiver says which and why.
func TestRingFallback(t *testing.T) {
	savedAvail, savedL, savedErr := ringAvailable, rings.l, rings.err
	reset := func() {
		rings.once = sync.Once{}
		rings.l, rings.err = nil, nil
	}
	ringAvailable = func() error { return errors.New("io_uring_setup: operation not permitted") }
	reset()
	defer func() {
		ringAvailable = savedAvail
		rings.once = sync.Once{}
		rings.once.Do(func() {})
		rings.l, rings.err = savedL, savedErr
	}()

	srv, _ := countingServer(t, nil)
	tr := NewTransport(Options{KeepAlive: true, Receive: ReceiveUring})
	defer tr.CloseIdleConnections()
	if h := send(t, tr, srv.URL); !h.success() || h.text() != "a" {
		t.Fatalf("%+v", h.rec)
	}
	if s := keptSock(t, tr, srv.URL); s.ring != nil {
		t.Error("the socket reads through a ring that does not exist")
	}
	name, why := Receiver(ReceiveUring)
	if name != ReceiveEvents || !strings.Contains(why, "not permitted") {
		t.Errorf("Receiver(uring) = %q, %q; want events and why", name, why)
	}
	if err := CheckReceive(ReceiveUring); err != nil {
		t.Errorf("CheckReceive(uring) without io_uring: %v, want the epoll loop", err)
	}
}

// Many streams at once, each of many chunks, every chunk in order and
// whole: the ring's reads of many sockets in one batch are handed to the
// right requests. Through each receiver, for comparison.
func TestRingManyStreams(t *testing.T) {
	const streams, chunks = 64, 50
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		id := r.URL.Query().Get("id")
		for i := range chunks {
			fmt.Fprintf(w, "data: %s.%d\n\n", id, i)
			w.(http.Flusher).Flush()
		}
	})
	run(t, func(t *testing.T, rc receiver) {
		tr := rc.transport(Options{KeepAlive: true})
		defer tr.CloseIdleConnections()
		var wg sync.WaitGroup
		errs := make(chan string, streams)
		for i := range streams {
			wg.Go(func() {
				h := send(t, tr, fmt.Sprintf("%s/?id=%d", srv.URL, i))
				var want strings.Builder
				for k := range chunks {
					fmt.Fprintf(&want, "%d.%d", i, k)
				}
				if !h.success() || h.text() != want.String() {
					errs <- fmt.Sprintf("stream %d: %q, %d lines", i, h.rec.Error, len(h.lines))
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	})
}

// Bytes that come after a response's end (a broken server) keep its
// connection from being used again: through the ring they are read (and
// dropped) while its read is cancelled, so the socket remembers them.
func TestRingBytesPastEnd(t *testing.T) {
	served := 0
	var mu sync.Mutex
	url := rawAccept(t, nil, func(conn net.Conn, br *bufio.Reader) {
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			mu.Lock()
			served++
			mu.Unlock()
			// One write, so that the garbage comes in the same segment
			// as the response, and so in the read that ends it: bytes
			// that come later, after the connection went back to the
			// pool, no client can tell from the next response's.
			io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"+"garbage after the end")
		}
	})
	run(t, func(t *testing.T, rc receiver) {
		tr := rc.transport(Options{KeepAlive: true})
		defer tr.CloseIdleConnections()
		for i := range 3 {
			h := sendWith(tr, &testHandler{url: url}, Send{Timeout: 60e9})
			if !h.success() {
				t.Fatalf("request %d: %q", i, h.rec.Error)
			}
		}
	})
}

// A ring loop that fails stops without a panic: the requests it reads
// fail with the error, and none joins it afterwards (as an epoll loop's,
// TestLoopFailureFailsRequests).
func TestRingFailureFailsRequests(t *testing.T) {
	if err := ringLoops(); err != nil {
		t.Skip("io_uring does not serve here (TestRingFallback covers it):", err)
	}
	l, err := newRingLoop()
	if err != nil {
		t.Fatal(err)
	}
	// Every new socket joins l while the test runs.
	saved := rings.l
	rings.l = []*ringLoop{l}
	defer func() { rings.l = saved }()

	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: a\n\n")
		w.(http.Flusher).Flush()
		<-release
	}))
	defer srv.Close()
	defer close(release)
	tr := NewTransport(Options{Receive: ReceiveUring})
	done := make(chan *testHandler)
	go func() { done <- send(t, tr, srv.URL) }()
	// Once the loop reads the response, its epoll fd breaks.
	for ringReading(l) == 0 {
		time.Sleep(time.Millisecond)
	}
	l.file.Close()
	h := <-done
	msg := h.rec.Error
	if h.err != nil {
		msg = h.err.Error()
	}
	if h.success() || !strings.Contains(msg, "io_uring") {
		t.Errorf("a request on the broken loop: %q", msg)
	}
	h = send(t, tr, srv.URL)
	if h.ok || !strings.Contains(h.rec.Error, "io_uring") {
		t.Errorf("a request after: %q (%s)", h.rec.Error, h.rec.ErrorKind)
	}
}

// ringReading counts l's sockets whose response it reads.
func ringReading(l *ringLoop) int {
	n := 0
	if tab := socks.tab.Load(); tab != nil {
		for i := range *tab {
			if s := (*tab)[i].Load(); s != nil && s.ring == l && s.state.Load() == sockRingReading {
				n++
			}
		}
	}
	return n
}
