//go:build linux

package netstamp

import (
	"io"
	"net"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"benchserve/internal/testenv"
)

// pair returns a connected client and a stamped server side, with stamping
// already on (the kernel turns it on a moment after it is first asked). It
// skips the test where the kernel does not stamp (testenv.NeedKernelStamps,
// the rule every test of kernel receive times follows); where it does, a
// connection without receive times is a failure.
func pair(t *testing.T) (client net.Conn, server *Conn) {
	t.Helper()
	testenv.NeedKernelStamps(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	sl := Listen(ln)
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	c, err := sl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	sc, ok := c.(*Conn)
	if !ok {
		t.Fatalf("the kernel stamps, but Listen's connection does not ask it to (%T)", c)
	}
	buf := make([]byte, 64)
	for range 1000 {
		if _, err := client.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := sc.Read(buf); err != nil {
			t.Fatal(err)
		}
		if sc.LastArrival() != 0 {
			return client, sc
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the kernel stamps, but sent no receive times on Listen's connection")
	return nil, nil
}

// The stamp is when the bytes reached the socket, however late they are
// read: the kernel stamps them during the writer's write, so it lies
// between the instants taken around it.
func TestConnStamp(t *testing.T) {
	client, conn := pair(t)
	before := time.Now()
	if _, err := client.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	time.Sleep(20 * time.Millisecond) // read late
	buf := make([]byte, 64)
	n, err := conn.Read(buf)
	if err != nil || n != 18 {
		t.Fatalf("read %d bytes, %v", n, err)
	}
	ts := conn.LastArrival()
	if ts < before.UnixNano() || ts > after.UnixNano() {
		t.Fatalf("stamp %d outside the write [%d, %d]", ts, before.UnixNano(), after.UnixNano())
	}
	// At moves a later instant back onto the stamp (the monotonic and wall
	// clocks are read a few nanoseconds apart).
	if a := At(time.Now(), ts); a.After(after.Add(time.Microsecond)) || a.Before(before.Add(-time.Microsecond)) {
		t.Errorf("At = %v, want within the write [%v, %v]", a, before, after)
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

// A dialled connection is stamped too, and reads allocate nothing.
func TestWrapDialled(t *testing.T) {
	c, srv := dialWrapped(t)
	buf, y := make([]byte, 8), []byte("y")
	allocs := testing.AllocsPerRun(100, func() {
		srv.Write(y)
		c.Read(buf)
	})
	if allocs > 0 {
		t.Errorf("%v allocations a write and read, want 0", allocs)
	}
	if c.LastArrival() == 0 {
		t.Error("no receive time on a dialled connection")
	}
}

func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, syscall.CmsgSpace(len(data)))
	h := syscall.Cmsghdr{Level: level, Type: typ}
	h.SetLen(syscall.CmsgLen(len(data)))
	copy(b, unsafe.Slice((*byte)(unsafe.Pointer(&h)), unsafe.Sizeof(h)))
	copy(b[syscall.CmsgSpace(0):], data)
	return b
}

func TestReceiveTime(t *testing.T) {
	ts := syscall.NsecToTimespec(1_795_985_506_052_103_332)
	tsb := unsafe.Slice((*byte)(unsafe.Pointer(&ts)), unsafe.Sizeof(ts))
	other := cmsg(syscall.SOL_SOCKET, syscall.SCM_RIGHTS, []byte{1, 2, 3, 4})
	stamp := cmsg(syscall.SOL_SOCKET, syscall.SCM_TIMESTAMPNS, tsb)
	cases := []struct {
		name string
		oob  []byte
		want int64
	}{
		{"none", nil, 0},
		{"stamp", stamp, 1_795_985_506_052_103_332},
		{"after another message", append(append([]byte{}, other...), stamp...), 1_795_985_506_052_103_332},
		{"only another message", other, 0},
		{"truncated", stamp[:len(stamp)-4], 0},
		{"header only", stamp[:syscall.CmsgSpace(0)], 0},
		{"short data", cmsg(syscall.SOL_SOCKET, syscall.SCM_TIMESTAMPNS, tsb[:4]), 0},
	}
	for _, c := range cases {
		if got := receiveTime(c.oob); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

func TestAt(t *testing.T) {
	now := time.Now()
	if got := At(now, 0); !got.Equal(now) {
		t.Errorf("no stamp: %v, want now", got)
	}
	if got := At(now, now.UnixNano()+int64(time.Second)); !got.Equal(now) {
		t.Errorf("a stamp in the future: %v, want now", got)
	}
	if got := At(now, now.UnixNano()-int64(2*MaxAge)); !got.Equal(now) {
		t.Errorf("a stale stamp: %v, want now", got)
	}
	got := At(now, now.UnixNano()-int64(3*time.Millisecond))
	if d := now.Sub(got); d != 3*time.Millisecond {
		t.Errorf("a 3 ms old stamp: %v before now, want 3ms", d)
	}
}

// Once a connection has been wrapped, the process keeps stamping on: a
// new connection's very first read is stamped, with no other socket open.
func TestFirstReadStamped(t *testing.T) {
	c, srv := dialWrapped(t)
	c.Close()
	srv.Close()
	time.Sleep(20 * time.Millisecond) // the kernel's deferred switch, either way
	c, srv = dialWrapped(t)
	srv.Write([]byte("z"))
	buf := make([]byte, 8)
	if _, err := c.Read(buf); err != nil {
		t.Fatal(err)
	}
	if c.LastArrival() == 0 {
		t.Error("the first read of a new connection has no receive time")
	}
}

// dialWrapped returns a wrapped dialled connection and the server's end;
// the test's cleanup closes them. Like pair, it skips the test where the
// kernel does not stamp.
func dialWrapped(t *testing.T) (*Conn, net.Conn) {
	t.Helper()
	testenv.NeedKernelStamps(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	c, ok := Wrap(raw).(*Conn)
	if !ok {
		t.Fatal("the kernel stamps, but Wrap left the connection as it was")
	}
	srv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return c, srv
}
