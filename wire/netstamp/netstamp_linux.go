//go:build linux

package netstamp

import (
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// Listen returns ln with receive timestamps on the connections it accepts.
// The listener gets the option too: the kernel starts stamping packets a
// moment after the first socket asks (it defers the switch) and stops when
// the last one closes, so the listener keeps it on for its life.
func Listen(ln net.Listener) net.Listener {
	if sc, ok := ln.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			enable(rc) //nolint:errcheck // each connection tries again
		}
	}
	return listener{ln}
}

type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	return Wrap(c), nil
}

// Wrap returns c reading with receive times (a *Conn), or c itself when it
// is not a TCP connection or the kernel declines the option.
func Wrap(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	keepOn.Do(holdStamping)
	rc, err := tc.SyscallConn()
	if err != nil || enable(rc) != nil {
		return c
	}
	nc := &Conn{TCPConn: tc, rc: rc}
	nc.recv = nc.recvmsg
	return nc
}

// keepOn holds one socket asking for receive times for the process's life.
// The kernel stamps packets only while some socket asks, and switches a
// moment late: without it, connections opened one at a time (no
// keep-alive) would find stamping off and their first packets unstamped.
var keepOn sync.Once

func holdStamping() {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return
	}
	if syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1) != nil {
		syscall.Close(fd)
	}
}

// EnableFD asks the socket fd for receive times (a socket read with recvmsg
// outside package net, whose reads take ReceiveTime of their control
// messages).
func EnableFD(fd int) error {
	keepOn.Do(holdStamping)
	return syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
}

func enable(rc syscall.RawConn) error {
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil {
		return err
	}
	return serr
}

// Conn is a TCP connection that reads with recvmsg to learn when the bytes
// it reads reached the socket: for TCP the kernel reports the receive time
// of the last segment read. One reader at a time.
type Conn struct {
	*net.TCPConn
	rc  syscall.RawConn
	oob [64]byte
	ns  atomic.Int64

	// The read in progress: recv (c.recvmsg, bound once) is what rc.Read
	// calls; a closure per Read would cost allocations at every chunk.
	recv    func(fd uintptr) bool
	p       []byte
	n, oobn int
	err     error
}

var _ Stamped = (*Conn)(nil)

// LastArrival is the receive time of the last read's bytes, Unix ns, or 0.
func (c *Conn) LastArrival() int64 { return c.ns.Load() }

func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.p = p
	rerr := c.rc.Read(c.recv)
	n, oobn, err := c.n, c.oobn, c.err
	c.p, c.err = nil, nil
	switch {
	case rerr != nil: // closed, or a deadline passed: already a *net.OpError
		return 0, rerr
	case err != nil:
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("recvmsg", err)}
	case n == 0:
		return 0, io.EOF
	}
	// 0 when the kernel sent no time: an older stamp must not stand in.
	c.ns.Store(receiveTime(c.oob[:oobn]))
	return n, nil
}

// recvmsg is one attempt at the read; false asks rc.Read to wait until the
// socket is readable and call again.
func (c *Conn) recvmsg(fd uintptr) bool {
	for {
		c.n, c.oobn, _, _, c.err = syscall.Recvmsg(int(fd), c.p, c.oob[:], 0)
		if c.err != syscall.EINTR {
			return c.err != syscall.EAGAIN
		}
	}
}

// ReceiveTime is receiveTime, for readers of their own sockets.
func ReceiveTime(oob []byte) int64 { return receiveTime(oob) }

// receiveTime finds the SCM_TIMESTAMPNS message among the control messages
// and returns its time in Unix nanoseconds, or 0. It allocates nothing:
// it runs at every read of a stream.
func receiveTime(oob []byte) int64 {
	hdr := syscall.CmsgSpace(0) // the header, aligned: where the data starts
	for len(oob) >= hdr {
		var h syscall.Cmsghdr
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&h)), unsafe.Sizeof(h)), oob)
		l := int(h.Len)
		if l < hdr || l > len(oob) {
			return 0
		}
		var ts syscall.Timespec
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SCM_TIMESTAMPNS && l-hdr >= int(unsafe.Sizeof(ts)) {
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&ts)), unsafe.Sizeof(ts)), oob[hdr:])
			return ts.Nano()
		}
		next := syscall.CmsgSpace(l - hdr)
		if next > len(oob) {
			return 0
		}
		oob = oob[next:]
	}
	return 0
}
