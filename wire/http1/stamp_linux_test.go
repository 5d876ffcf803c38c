//go:build linux

package http1

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"benchserve/internal/testenv"
)

// TestChunkStampedAtArrival: a chunk is timed when it reached the machine,
// not when a busy client got round to reading it. The server writes two
// chunks; the client reads each 40 ms after it was written.
// Stamped at the read, the first chunk would be 40 ms late; stamped with
// the kernel's receive time it is within the server's write. The same
// over TLS, whose records are read from a kernel-timed connection too,
// and through either receiver.
// It skips where the kernel does not stamp (testenv.NeedKernelStamps);
// where it does, a response without receive times is a failure.
func TestChunkStampedAtArrival(t *testing.T) {
	testenv.NeedKernelStamps(t)
	run(t, func(t *testing.T, rc receiver) {
		t.Run("http", func(t *testing.T) { testChunkStamped(t, rc, false, false) })
		t.Run("https", func(t *testing.T) { testChunkStamped(t, rc, true, false) })
		// Through a forward proxy, the socket read is still the client's own.
		t.Run("http via proxy", func(t *testing.T) { testChunkStamped(t, rc, false, true) })
		t.Run("https via proxy", func(t *testing.T) { testChunkStamped(t, rc, true, true) })
	})
}

func testChunkStamped(t *testing.T, rc receiver, useTLS, proxied bool) {
	type write struct{ before, after time.Time }
	writes := make(chan write, 2)
	next := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		if r.URL.Path == "/warm" {
			io.WriteString(w, "data: warm\n\n")
			return
		}
		rc.Flush() // the header
		for _, s := range []string{"data: a\n\n", "data: b\n\n"} {
			<-next
			var wr write
			wr.before = time.Now()
			io.WriteString(w, s)
			rc.Flush()
			wr.after = time.Now()
			writes <- wr
		}
	}))
	if useTLS {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	defer srv.Close()
	opt := Options{KeepAlive: true, TLS: &tls.Config{InsecureSkipVerify: true}}
	if proxied {
		p := startProxy(t)
		opt.Proxy = func(*url.URL) (*url.URL, error) { return p.url(""), nil }
	}
	tr := rc.transport(opt)
	defer tr.CloseIdleConnections()

	// First requests on the same connection: the kernel turns receive
	// times on a moment after a socket first asks.
	for range 100 {
		if h := send(t, tr, srv.URL+"/warm"); !h.success() {
			t.Fatal(h.rec.Error)
		} else if h.rec.KernelTimed {
			break
		}
		time.Sleep(time.Millisecond)
	}

	var ws []write
	// The server writes a chunk, and the client is busy elsewhere for
	// 40 ms before it reads: after the request went out for the first,
	// while it handles the first line for the second.
	writeThenWait := func() {
		next <- struct{}{}
		ws = append(ws, <-writes)
		time.Sleep(40 * time.Millisecond)
	}
	h := &testHandler{url: srv.URL + "/stream", begun: writeThenWait}
	h.onLine = func(string) {
		if len(ws) == 1 {
			time.Sleep(30 * time.Millisecond)
			writeThenWait()
		}
	}
	sendWith(tr, h, Send{Timeout: time.Minute, Stream: true})
	if !h.success() || len(h.lines) != 2 {
		t.Fatalf("%s %q", h.rec.Error, h.lines)
	}
	if !h.rec.KernelTimed {
		t.Fatal("the kernel stamps, but the response has no receive times")
	}
	// A proxy's relay comes between the write and the arrival: a
	// goroutine of the test's, which a loaded machine may run late; still
	// well short of the 40 ms by which a read-time stamp would be late.
	slack := 5 * time.Millisecond
	if proxied {
		slack = 20 * time.Millisecond
	}
	for i, wr := range ws {
		if at := h.at[i]; at.Before(wr.before) || at.After(wr.after.Add(slack)) {
			t.Errorf("%s: stamped %v after the write began; want within the write", h.lines[i], at.Sub(wr.before))
		}
	}
	// The gap is the writes' (about 70 ms: the client's 40 ms and 30 ms),
	// whatever the reads' timing.
	gap, lo, hi := h.at[1].Sub(h.at[0]), ws[1].before.Sub(ws[0].after), ws[1].after.Sub(ws[0].before)
	if gap < lo-time.Millisecond-slack || gap > hi+slack {
		t.Errorf("gap %v, want the writes' gap, between %v and %v", gap, lo, hi)
	}
}
