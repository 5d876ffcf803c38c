package http1

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"benchserve/record"
)

// closeWatch is Options.Dial for an in-memory server that streams n
// events gap apart on one request a connection and notes, as a server's background
// read does, when the client closed the connection.
type closeWatch struct {
	gap   time.Duration
	n     int
	mu    sync.Mutex
	conns int
	gone  []time.Time // when each closed connection's client went away
}

func (w *closeWatch) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	client, server := net.Pipe()
	w.mu.Lock()
	w.conns++
	w.mu.Unlock()
	go w.serve(server)
	return client, nil
}

func (w *closeWatch) serve(server net.Conn) {
	defer server.Close()
	br := bufio.NewReader(server)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	io.Copy(io.Discard, req.Body)
	// Read on while replying: an end of file is the client gone.
	go func() {
		if _, err := br.ReadByte(); err != nil {
			w.mu.Lock()
			w.gone = append(w.gone, time.Now())
			w.mu.Unlock()
			server.Close()
		}
	}()
	io.WriteString(server, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
	for i := range w.n {
		time.Sleep(w.gap)
		ev := event(fmt.Sprint(i))
		if _, err := fmt.Fprintf(server, "%x\r\n%s\r\n", len(ev), ev); err != nil {
			return
		}
	}
	io.WriteString(server, "0\r\n\r\n")
}

// outcome is a failed request's kind and message: the record's, or the
// reading's error handed to Done with a 200.
func outcome(h *testHandler) (kind, msg string) {
	if e, ok := h.err.(*Error); ok {
		return e.Kind, e.Msg
	}
	return h.rec.ErrorKind, h.rec.Error
}

// A request chosen for cancellation whose response has not ended when
// the delay has passed since it was fully written is cut there: the
// server sees its client go away at that instant, the record says
// cancelled with its moment, the connection is not reused. One that ends
// before its delay is a plain success. (Through Go's poller, in memory:
// exact times in a synctest bubble.)
func TestCancelAfterWritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &closeWatch{gap: 100 * time.Millisecond, n: 5}
		tr := NewTransport(Options{KeepAlive: true, Dial: w.dial})
		defer tr.CloseIdleConnections()
		epoch := time.Now()
		h := sendWith(tr, &testHandler{url: "http://model.test/v1/completions"},
			Send{Timeout: time.Minute, Stream: true, Epoch: epoch, Cancel: true, CancelAfter: 250 * time.Millisecond})
		if kind, msg := outcome(h); kind != record.KindCancelled || !strings.Contains(msg, "0.250 s") {
			t.Fatalf("cancelled request: %q (%s)", msg, kind)
		}
		if want := h.rec.Start + 0.25; h.rec.CancelAt != want || h.rec.CancelLate != 0 {
			t.Errorf("cancelled at %v, want written (%v) + 0.25 s", h.rec.CancelAt, h.rec.Start)
		}
		if len(h.lines) != 2 {
			t.Errorf("%d lines before the cancellation, want 2 (at 100 and 200 ms)", len(h.lines))
		}
		synctest.Wait()
		w.mu.Lock()
		gone := append([]time.Time(nil), w.gone...)
		w.mu.Unlock()
		if len(gone) != 1 || gone[0].Sub(epoch) != 250*time.Millisecond {
			t.Errorf("the server saw the client go at %v after the send, want 250ms", gone)
		}

		h = sendWith(tr, &testHandler{url: "http://model.test/v1/completions"},
			Send{Timeout: time.Minute, Stream: true, Epoch: time.Now(), Cancel: true, CancelAfter: time.Second})
		if !h.success() || h.text() != "01234" || h.rec.CancelAt != 0 {
			t.Errorf("a request done before its delay: %q %q, cancel_at %v", h.rec.Error, h.lines, h.rec.CancelAt)
		}
		if w.conns != 2 {
			t.Errorf("%d connections, want 2 (the cancelled one not reused)", w.conns)
		}
	})
}

// A delay of 0 sends the whole request, then disconnects at once; through
// both receivers on a real socket, the connection is closed (the server
// reads its end) and never reused.
func TestCancelAtOnce(t *testing.T) {
	run(t, func(t *testing.T, rc receiver) {
		gone := make(chan struct{}, 4)
		var conns sync.WaitGroup
		url := rawAccept(t, nil, func(conn net.Conn, br *bufio.Reader) {
			conns.Add(1)
			defer conns.Done()
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			io.WriteString(conn, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
			// Never finishes: waits for the client to go.
			if _, err := br.ReadByte(); err != nil {
				gone <- struct{}{}
			}
		})
		tr := rc.transport(Options{KeepAlive: true})
		defer tr.CloseIdleConnections()
		for i := range 2 {
			h := sendWith(tr, &testHandler{url: url}, Send{Timeout: time.Minute, Stream: true, Cancel: true})
			if kind, msg := outcome(h); kind != record.KindCancelled || h.rec.CancelAt < h.rec.Start {
				t.Fatalf("request %d: %q (%s), cancel at %v, start %v", i, msg, kind, h.rec.CancelAt, h.rec.Start)
			}
			<-gone
		}
	})
}
