//go:build linux

package backend

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"benchserve/internal/testenv"
	"benchserve/wire/netstamp"
	"benchserve/wire/sse"
)

// TestChunkStampedAtArrival: a chunk is timed when it reached the machine,
// not when a busy client got round to reading it. The server writes two
// chunks; the client reads each 40 ms after it was written.
// Stamped at the read, the first chunk would be 40 ms late; stamped with
// the kernel's receive time it is within the server's write. The same
// over TLS, whose records are read from a kernel-timed connection too.
// It skips where the kernel does not stamp (testenv.NeedKernelStamps);
// where it does, a response without receive times is a failure.
func TestChunkStampedAtArrival(t *testing.T) {
	testenv.NeedKernelStamps(t)
	t.Run("http", func(t *testing.T) { testChunkStamped(t, false, false) })
	t.Run("https", func(t *testing.T) { testChunkStamped(t, true, false) })
	// Through a forward proxy, the socket read is still the client's own.
	t.Run("http via proxy", func(t *testing.T) { testChunkStamped(t, false, true) })
	t.Run("https via proxy", func(t *testing.T) { testChunkStamped(t, true, true) })
}

func testChunkStamped(t *testing.T, useTLS, proxied bool) {
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
		rc.Flush() // the header, so that the client's Get returns
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
	opt := ClientOptions{KeepAlive: true, TLS: &tls.Config{InsecureSkipVerify: true}}
	if proxied {
		p := startProxy(t)
		opt.Proxy = func(*url.URL) (*url.URL, error) { return p.url(""), nil }
	}
	client := NewHTTPClient(opt)
	defer client.CloseIdleConnections()

	// A first request on the same connection: the kernel turns receive
	// times on a moment after a socket first asks.
	for range 100 {
		resp, err := client.Get(srv.URL + "/warm")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		stamped := resp.Body.(netstamp.Stamped).LastArrival() != 0
		resp.Body.Close()
		if stamped {
			break
		}
		time.Sleep(time.Millisecond)
	}

	start := time.Now()
	resp, err := client.Get(srv.URL + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Body.(netstamp.Stamped).LastArrival() == 0 {
		t.Fatal("the kernel stamps, but the response has no receive times")
	}
	var clk readClock
	clk.reset(resp.Body, start, nil)
	r := sse.NewReader(&clk, 0)
	var stamps []time.Time
	var ws []write
	// A proxy's relay comes between the write and the arrival: a
	// goroutine of the test's, which a loaded machine may run late; still
	// well short of the 40 ms by which a read-time stamp would be late.
	slack := 5 * time.Millisecond
	if proxied {
		slack = 20 * time.Millisecond
	}
	for i := range 2 {
		if i == 1 {
			time.Sleep(30 * time.Millisecond)
		}
		next <- struct{}{}
		wr := <-writes
		ws = append(ws, wr)
		time.Sleep(40 * time.Millisecond) // busy elsewhere
		line, _, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		at, read := clk.at, time.Now()
		if at.Before(wr.before) || at.After(wr.after.Add(slack)) {
			t.Errorf("%s: stamped %v after the write began and %v before the read; want within the write", line,
				at.Sub(wr.before), read.Sub(at))
		}
		stamps = append(stamps, at)
	}
	// The gap is the writes' (about 70 ms: the client's 40 ms and 30 ms),
	// whatever the reads' timing.
	gap, lo, hi := stamps[1].Sub(stamps[0]), ws[1].before.Sub(ws[0].after), ws[1].after.Sub(ws[0].before)
	if gap < lo-time.Millisecond-slack || gap > hi+slack {
		t.Errorf("gap %v, want the writes' gap, between %v and %v", gap, lo, hi)
	}
}
