//go:build linux

package uring

import (
	"net"
	"runtime"
	"testing"
	"unsafe"

	"benchserve/internal/testenv"
	"benchserve/wire/netstamp"

	"golang.org/x/sys/unix"
)

func TestKernelAtLeast(t *testing.T) {
	for _, c := range []struct {
		rel  string
		want bool
	}{
		{"6.18.44-fc-v1294", true}, {"6.1.0", true}, {"6.0.9", false}, {"5.19.17", false},
		{"7.0", true}, {"6.10-rc1", true}, {"6", false}, {"x.y", false},
	} {
		if got := kernelAtLeast(c.rel, 6, 1); got != c.want {
			t.Errorf("kernelAtLeast(%q, 6, 1) = %v, want %v", c.rel, got, c.want)
		}
	}
}

func TestParseRecvmsg(t *testing.T) {
	const control = 32
	buf := make([]byte, 128)
	h := (*[4]uint32)(unsafe.Pointer(&buf[0]))
	h[1], h[2], h[3] = 32, 5, 0 // controllen, payloadlen, flags
	copy(buf[16:], "CCCC")
	copy(buf[16+control:], "hello")
	out, ok := ParseRecvmsg(buf, 16+control+5, 0, control)
	if !ok || string(out.Payload) != "hello" || len(out.Control) != 32 || string(out.Control[:4]) != "CCCC" {
		t.Errorf("%q %q %v", out.Payload, out.Control, ok)
	}
	if _, ok := ParseRecvmsg(buf, 10, 0, control); ok {
		t.Error("a completion shorter than its header parsed")
	}
	if _, ok := ParseRecvmsg(buf, 200, 0, control); ok {
		t.Error("a completion longer than its buffer parsed")
	}
	h[1] = 0 // no control message came
	if out, ok := ParseRecvmsg(buf, 16+control, 0, control); !ok || len(out.Control) != 0 || len(out.Payload) != 0 {
		t.Errorf("end of stream: %q %q %v", out.Payload, out.Control, ok)
	}
}

// A multishot recvmsg on a loopback socket: each write arrives as its own
// completion with its bytes and the kernel's receive time, the buffers
// go round, and the end of the stream is a last completion with no
// payload. It skips where io_uring does not serve (Available says why)
// or the kernel does not stamp.
func TestMultishotRecvmsg(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	testenv.NeedKernelStamps(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.(*net.TCPConn).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd())
	if err := netstamp.EnableFD(fd); err != nil {
		t.Fatal(err)
	}
	r, err := New(8, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := r.NewBufRing(3, 2, 256) // two buffers: they must go round
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	var msg unix.Msghdr
	control := uint32(unix.CmsgSpace(16))
	msg.SetControllen(int(control))
	if err := r.RecvmsgMultishot(fd, &msg, 3, 42); err != nil {
		t.Fatal(err)
	}
	if err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		want := "chunk " + string(rune('a'+i))
		if _, err := w.Write([]byte(want)); err != nil {
			t.Fatal(err)
		}
		c := next(t, r)
		id, ok := c.Buffer()
		if !ok || c.UserData != 42 || !c.More() {
			t.Fatalf("chunk %d: %+v", i, c)
		}
		out, ok := ParseRecvmsg(b.Buf(id), c.Res, 0, control)
		if !ok || string(out.Payload) != want {
			t.Fatalf("chunk %d: %q, want %q", i, out.Payload, want)
		}
		if netstamp.ReceiveTime(out.Control) == 0 {
			t.Errorf("chunk %d has no receive time", i)
		}
		b.Give(id)
		b.Publish()
		r.Done(1)
	}
	w.Close()
	c2 := next(t, r)
	id, ok := c2.Buffer()
	if !ok || c2.More() {
		t.Fatalf("end of stream: %+v", c2)
	}
	if out, ok := ParseRecvmsg(b.Buf(id), c2.Res, 0, control); !ok || len(out.Payload) != 0 {
		t.Errorf("end of stream: %q", out.Payload)
	}
	r.Done(1)
}

// next waits for the ring's next completion.
func next(t *testing.T, r *Ring) CQE {
	t.Helper()
	for {
		if cqes := r.Completions(); len(cqes) > 0 {
			return cqes[0]
		}
		if err := r.Wait(); err != nil {
			t.Fatal(err)
		}
	}
}
