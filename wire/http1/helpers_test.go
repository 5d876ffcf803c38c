package http1

import (
	"bufio"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"benchserve/record"
)

// receiver is one of the receivers a transport test runs against.
type receiver struct{ name, mode string }

// receivers are Go's poller, the event loop, and the event loop reading
// through io_uring (the epoll loop where io_uring does not serve); a test
// runs each as a subtest, the event loop's skipped off Linux.
func receivers() []receiver {
	return []receiver{{"poller", ReceivePoller}, {"events", ReceiveEvents}, {"uring", ReceiveUring}}
}

// run runs f against each receiver.
func run(t *testing.T, f func(t *testing.T, rc receiver)) {
	for _, rc := range receivers() {
		t.Run(rc.name, func(t *testing.T) {
			if rc.mode != ReceivePoller && runtime.GOOS != "linux" {
				t.Skip("the event loop is Linux's")
			}
			f(t, rc)
		})
	}
}

// transport is a Transport of rc with the options o.
func (rc receiver) transport(o Options) *Transport {
	o.Receive = rc.mode
	return NewTransport(o)
}

// testHandler gathers a response's lines (each with its time), or its
// body read whole, and the outcome.
type testHandler struct {
	url    string
	header http.Header
	rec    record.Record
	st     time.Time
	resp   *http.Response
	lines  []string
	at     []time.Time
	reads  []int
	whole  string
	ok     bool
	err    error
	begun  func() // called by Begin, when set
	onLine func(line string)
	done   chan struct{}
}

func (h *testHandler) Request(ctx context.Context) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, strings.NewReader(`{"prompt": "x"}`))
	if err == nil && h.header != nil {
		req.Header = h.header
	}
	return req, err
}

func (h *testHandler) Begin(st time.Time) {
	h.st, h.lines, h.at, h.reads = st, nil, nil, nil
	if h.begun != nil {
		h.begun()
	}
}

func (h *testHandler) Head(resp *http.Response) { h.resp = resp }

func (h *testHandler) Line(line []byte, n int, a Arrival) error {
	h.lines = append(h.lines, string(line))
	h.at = append(h.at, a.At)
	h.reads = append(h.reads, a.Read)
	if h.onLine != nil {
		h.onLine(string(line))
	}
	return nil
}

func (h *testHandler) End() error { return nil }

func (h *testHandler) Whole(body []byte, at time.Time, kernel bool) error {
	h.whole = string(body)
	h.at = append(h.at, at)
	return nil
}

func (h *testHandler) Done(ok bool, err error) {
	h.ok, h.err = ok, err
	close(h.done)
}

// success reports a 200 read to its end.
func (h *testHandler) success() bool { return h.ok && h.err == nil && h.rec.Error == "" }

// text is the stream's data lines, without "data: ", joined.
func (h *testHandler) text() string {
	var b strings.Builder
	for _, l := range h.lines {
		if s, ok := strings.CutPrefix(l, "data: "); ok && s != "[DONE]" {
			b.WriteString(s)
		}
	}
	return b.String()
}

// send sends one streamed request to url through rt and waits for its end.
func send(t *testing.T, rt http.RoundTripper, url string) *testHandler {
	t.Helper()
	return sendWith(rt, &testHandler{url: url}, Send{Timeout: time.Minute, Stream: true})
}

// sendWith sends h's request with the settings s (its record h's).
func sendWith(rt http.RoundTripper, h *testHandler, s Send) *testHandler {
	return sendCtx(context.Background(), rt, h, s)
}

func sendCtx(ctx context.Context, rt http.RoundTripper, h *testHandler, s Send) *testHandler {
	h.done = make(chan struct{})
	var x Exchange
	x.Init(h)
	s.Record = &h.rec
	if s.Epoch.IsZero() {
		s.Epoch = time.Now()
	}
	x.Start(ctx, rt, &s)
	<-h.done
	return h
}

// event is one SSE event with text s, as the fake servers send them.
func event(s string) string { return "data: " + s + "\n\n" }

// rawServer answers every request with the given raw bytes, then closes
// the connection.
func rawServer(t *testing.T, response string) string {
	return rawAccept(t, nil, func(conn net.Conn, br *bufio.Reader) {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		io.WriteString(conn, response)
	})
}

// rawAccept serves each connection to a loopback listener (wrapped by
// wrap, when set: TLS, say) with serve, which may read requests from br,
// then closes it. It returns the listener's address, "host:port".
func rawAccept(t *testing.T, wrap func(net.Listener) net.Listener, serve func(conn net.Conn, br *bufio.Reader)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if wrap != nil {
		ln = wrap(ln)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				serve(conn, bufio.NewReader(conn))
			}()
		}
	}()
	return "http://" + addr
}

// splitReader returns 1..max bytes per Read, at random.
type splitReader struct {
	data []byte
	rng  *rand.Rand
	max  int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(1+r.rng.IntN(r.max), len(r.data), len(p))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}
