//go:build linux

package sim

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// stampListener turns on kernel receive timestamps (SO_TIMESTAMPNS) for
// each TCP connection it accepts; connections where that fails are served
// plain, their requests stamped when the handler starts.
type stampListener struct{ net.Listener }

// listenStamped serves ln's connections with receive timestamps. The
// listener gets the option too: the kernel starts stamping packets only a
// moment after the first socket asks (it defers the switch), and stops
// when the last one closes, so the listener keeps it on for the server's
// life, and accepted sockets inherit it.
func listenStamped(ln net.Listener) net.Listener {
	if sc, ok := ln.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			setStamping(rc) //nolint:errcheck // each connection tries again
		}
	}
	return stampListener{ln}
}

func setStamping(rc syscall.RawConn) error {
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil {
		return err
	}
	return serr
}

func (l stampListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	rc, err := tc.SyscallConn()
	if err != nil || setStamping(rc) != nil {
		return c, nil
	}
	return &stampConn{TCPConn: tc, rc: rc}, nil
}

// stampConn reads with recvmsg to learn when the bytes it reads reached the
// socket: for TCP the kernel reports the receive time of the last segment
// read. One reader at a time, as net/http reads.
type stampConn struct {
	*net.TCPConn
	rc  syscall.RawConn
	oob [64]byte
	stampTime
}

func (c *stampConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n, oobn int
	var err error
	rerr := c.rc.Read(func(fd uintptr) bool {
		for {
			n, oobn, _, _, err = syscall.Recvmsg(int(fd), p, c.oob[:], 0)
			if err != syscall.EINTR {
				return err != syscall.EAGAIN
			}
		}
	})
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

// receiveTime finds the SCM_TIMESTAMPNS message among the control messages
// and returns its time in Unix nanoseconds, or 0.
func receiveTime(oob []byte) int64 {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return 0
	}
	for _, m := range msgs {
		if m.Header.Level == syscall.SOL_SOCKET && m.Header.Type == syscall.SCM_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(syscall.Timespec{})) {
			return (*syscall.Timespec)(unsafe.Pointer(&m.Data[0])).Nano()
		}
	}
	return 0
}
