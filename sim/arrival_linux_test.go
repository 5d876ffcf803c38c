//go:build linux

package sim

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"benchserve/internal/netstamp"
)

// TestArrival: a request's arrival is when its bytes reached the socket,
// however late the server reads them. The kernel stamps them during the
// client's write, so the stamp lies between the instants taken around it.
func TestArrival(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sl := netstamp.Listen(ln)
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	conn, err := sl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sc, ok := conn.(*netstamp.Conn)
	if !ok {
		t.Skipf("no kernel receive times here (%T)", conn)
	}

	// The kernel turns stamping on a moment after it is first asked: probe
	// until a byte comes stamped.
	buf := make([]byte, 64)
	for range 1000 {
		if _, err := client.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Read(buf); err != nil {
			t.Fatal(err)
		}
		if sc.LastArrival() != 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}

	before := time.Now()
	if _, err := client.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	time.Sleep(20 * time.Millisecond) // the server reads late
	n, err := conn.Read(buf)
	if err != nil || n != 18 {
		t.Fatalf("read %d bytes, %v", n, err)
	}
	ts := sc.LastArrival()
	if ts < before.UnixNano() || ts > after.UnixNano() {
		t.Fatalf("stamp %d outside the write [%d, %d]", ts, before.UnixNano(), after.UnixNano())
	}

	// arrival() moves the handler's start back to the stamp (the monotonic
	// and wall clocks are read a few nanoseconds apart).
	r := (&http.Request{}).WithContext(withConn(context.Background(), conn))
	if a := arrival(r); a.After(after.Add(time.Microsecond)) || a.Before(before.Add(-time.Microsecond)) {
		t.Errorf("arrival %v, want within the write [%v, %v]", a, before, after)
	}
	// Without a stamped connection, arrival is the handler's start.
	if a := arrival(&http.Request{}); a.Before(after) {
		t.Errorf("unstamped arrival %v before %v", a, after)
	}

	// End of stream and errors read as from a plain connection.
	client.Close()
	if n, err := conn.Read(buf); n != 0 || err != io.EOF {
		t.Errorf("after close: %d, %v", n, err)
	}
	conn.SetReadDeadline(time.Now().Add(-time.Second))
	if _, err := conn.Read(buf); err == nil {
		t.Error("no error past the deadline")
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Errorf("past the deadline: %v, want a timeout", err)
	}
}
