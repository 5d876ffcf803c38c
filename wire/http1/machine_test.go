package http1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"benchserve/record"
)

// A request the gate stops before it is written is not sent: no byte
// goes out, Record.Sent is cleared, and nothing else is stamped.
func TestGateStopsRequest(t *testing.T) {
	run(t, func(t *testing.T, rc receiver) {
		var requests atomic.Int32
		srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			io.WriteString(w, shortStream)
		})
		tr := rc.transport(Options{KeepAlive: true})
		var open Gate
		if h := sendWith(tr, &testHandler{url: srv.URL}, Send{Gate: &open, Timeout: time.Minute, Stream: true}); !h.success() {
			t.Fatal(h.rec.Error)
		}
		var closed, past Gate
		closed.Close()
		past.CloseAt(time.Now().Add(-time.Millisecond))
		for _, g := range []*Gate{&closed, &past} {
			h := &testHandler{url: srv.URL}
			h.rec.Sent = true
			sendWith(tr, h, Send{Gate: g, Timeout: time.Minute, Stream: true})
			if h.ok || h.rec.Sent || h.rec.Start != 0 || h.rec.Error != "" || h.rec.SendDelay != 0 {
				t.Errorf("gated: %+v", h.rec)
			}
		}
		if n := requests.Load(); n != 1 {
			t.Errorf("the server saw %d requests, want 1", n)
		}
	})
}

// A response head over 1 MiB fails the request, through either receiver
// and RoundTrip alike.
func TestHeadLimit(t *testing.T) {
	head := "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-A: "+strings.Repeat("a", 1000)+"\r\n", 1100) + "Content-Length: 2\r\n\r\nhi"
	const want = "the response head is longer than 1024 KiB"
	run(t, func(t *testing.T, rc receiver) {
		h := send(t, rc.transport(Options{}), rawServer(t, head))
		if h.ok || h.rec.ErrorKind != record.KindOther || h.rec.Error != want {
			t.Errorf("kind %q, error %q; want %q", h.rec.ErrorKind, h.rec.Error, want)
		}
		// A head just under the limit is read.
		ok := "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-A: "+strings.Repeat("a", 1000)+"\r\n", 1000) + "Content-Length: 9\r\n\r\ndata: a\n\n"
		if h := send(t, rc.transport(Options{}), rawServer(t, ok)); !h.success() || h.text() != "a" {
			t.Errorf("a head under the limit: %q %q", h.rec.Error, h.lines)
		}
	})
	hc := &http.Client{Transport: NewTransport(Options{})}
	if _, err := hc.Get(rawServer(t, head)); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("RoundTrip: %v, want %q", err, want)
	}
}

// pipeServer is Options.Dial for an in-memory server: each connection is
// a net.Pipe whose far end answers every request with a chunked stream of
// events, sleeping gap before each. It counts the connections.
func pipeServer(gap time.Duration, events ...string) (func(context.Context, string, string) (net.Conn, error), *atomic.Int32) {
	var conns atomic.Int32
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conns.Add(1)
		client, server := net.Pipe()
		go func() {
			defer server.Close()
			br := bufio.NewReader(server)
			for {
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				io.WriteString(server, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
				for _, ev := range events {
					time.Sleep(gap)
					fmt.Fprintf(server, "%x\r\n%s\r\n", len(ev), ev)
				}
				io.WriteString(server, "0\r\n\r\n")
			}
		}()
		return client, nil
	}, &conns
}

// With Options.Dial the whole client runs in memory, so that its timing
// is exact inside a synctest bubble: each line is timed when its bytes
// came, the clock starting as the request went out; the connection is
// kept and reused.
func TestDialInMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dial, conns := pipeServer(100*time.Millisecond, event("a"), event("b"), event("[DONE]"))
		tr := NewTransport(Options{KeepAlive: true, Dial: dial, Receive: ReceiveEvents})
		defer tr.CloseIdleConnections()
		for i := range 2 {
			h := send(t, tr, "http://model.test/v1/completions")
			if !h.success() || h.text() != "ab" {
				t.Fatalf("request %d: %q %q", i, h.rec.Error, h.lines)
			}
			for k, at := range h.at {
				if d := at.Sub(h.st); d != time.Duration(k+1)*100*time.Millisecond {
					t.Errorf("request %d: line %d at %v after the send, want %v", i, k, d, time.Duration(k+1)*100*time.Millisecond)
				}
			}
		}
		if n := conns.Load(); n != 1 {
			t.Errorf("%d connections for 2 requests, want 1", n)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Through a RoundTripper that is not a Transport the request goes through
// it: its response is read as any other, an error status and a failure
// are worded alike, and the gate still stops a request before it goes.
func TestForeignRoundTripper(t *testing.T) {
	reply := func(code int, body string, err error) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if err != nil {
				return nil, err
			}
			return &http.Response{StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)),
				Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}, nil
		})
	}
	h := send(t, reply(200, "data: a\n\ndata: b\n\ndata: [DONE]\n\n", nil), "http://x/")
	if !h.success() || h.text() != "ab" || h.rec.SendDelay != 0 || h.rec.Start <= 0 {
		t.Errorf("200: %+v %q", h.rec, h.lines)
	}
	h = send(t, reply(503, "busy\n", nil), "http://x/")
	if h.ok || h.rec.ErrorKind != record.KindHTTP5xx || h.rec.Error != "503 Service Unavailable: busy" {
		t.Errorf("503: %q (%s)", h.rec.Error, h.rec.ErrorKind)
	}
	h = send(t, reply(0, "", errors.New("no route")), "http://x/")
	if h.ok || h.rec.ErrorKind != record.KindOther || h.rec.Error != "no route" {
		t.Errorf("failure: %q (%s)", h.rec.Error, h.rec.ErrorKind)
	}
	var called atomic.Bool
	var g Gate
	g.Close()
	rt := roundTripFunc(func(*http.Request) (*http.Response, error) { called.Store(true); return nil, errors.New("sent") })
	h = &testHandler{url: "http://x/"}
	h.rec.Sent = true
	if sendWith(rt, h, Send{Gate: &g, Timeout: time.Minute}); called.Load() || h.rec.Sent {
		t.Errorf("gated: called %v, %+v", called.Load(), h.rec)
	}
}

// An Exchange made and used in a synctest bubble (a test's, through the
// poller in memory) and then reused outside it (as backend's pool may hand
// it on) serves a request on the event loop: it took no channel of the
// bubble with it, which the runtime would refuse to use.
func TestExchangeOutlivesABubble(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the event loop is Linux's")
	}
	h := &testHandler{url: "http://model.test/v1/completions"}
	var x Exchange
	synctest.Test(t, func(t *testing.T) {
		dial, _ := pipeServer(time.Millisecond, event("a"), event("[DONE]"))
		tr := NewTransport(Options{Dial: dial})
		defer tr.CloseIdleConnections()
		x.Init(h)
		h.done = make(chan struct{})
		x.Start(context.Background(), tr, &Send{Timeout: time.Minute, Stream: true, Record: &h.rec, Epoch: time.Now()})
		<-h.done
		if !h.success() || h.text() != "a" {
			t.Fatalf("in the bubble: %q %q", h.rec.Error, h.lines)
		}
	})
	body := event("b") + event("[DONE]")
	url := rawServer(t, fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
	tr := NewTransport(Options{Receive: ReceiveEvents})
	defer tr.CloseIdleConnections()
	x.Clear()
	h.url, h.rec, h.done = url, record.Record{}, make(chan struct{})
	x.Start(context.Background(), tr, &Send{Timeout: time.Minute, Stream: true, Record: &h.rec, Epoch: time.Now()})
	<-h.done
	if !h.success() || h.text() != "b" {
		t.Fatalf("on the event loop after the bubble: %q %q", h.rec.Error, h.lines)
	}
}
