package http1

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// An event loop whose epoll fd fails stops without a panic: the requests
// it reads fail with the error, and none joins it afterwards.
func TestLoopFailureFailsRequests(t *testing.T) {
	if err := eventLoops(); err != nil {
		t.Fatal(err)
	}
	l, err := newLoop()
	if err != nil {
		t.Fatal(err)
	}
	// Every new socket joins l while the test runs.
	saved := loops.l
	loops.l = []*evloop{l}
	defer func() { loops.l = saved }()

	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: a\n\n")
		w.(http.Flusher).Flush()
		<-release
	}))
	defer srv.Close()
	defer close(release)
	tr := NewTransport(Options{Receive: ReceiveEvents})
	done := make(chan *testHandler)
	go func() { done <- send(t, tr, srv.URL) }()
	// Once the loop reads the response, its epoll fd breaks.
	for reading(l) == 0 {
		time.Sleep(time.Millisecond)
	}
	l.file.Close()
	// Its head read or not yet: the reading's error, or the transport's.
	h := <-done
	msg := h.rec.Error
	if h.err != nil {
		msg = h.err.Error()
	}
	if h.success() || !strings.Contains(msg, "epoll") {
		t.Errorf("a request on the broken loop: %q", msg)
	}
	h = send(t, tr, srv.URL)
	if h.ok || !strings.Contains(h.rec.Error, "epoll") {
		t.Errorf("a request after: %q (%s)", h.rec.Error, h.rec.ErrorKind)
	}
}

// reading counts l's sockets whose response it reads.
func reading(l *evloop) int {
	n := 0
	if tab := socks.tab.Load(); tab != nil {
		for i := range *tab {
			if s := (*tab)[i].Load(); s != nil && s.loop == l && s.state.Load() == sockReading {
				n++
			}
		}
	}
	return n
}
