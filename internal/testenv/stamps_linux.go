//go:build linux

package testenv

import (
	"fmt"
	"net"
	"syscall"
	"time"
)

// stamper is the probe's stamped socket, kept open for the test binary's
// life: the kernel stamps received packets system-wide while any socket
// asks for it, and turns it on and off through deferred work, so a test's
// own socket, asking later, would see its first bytes unstamped.
var stamper []net.Conn

// probeStamps reads from a loopback TCP connection that asks for
// SO_TIMESTAMPNS until a read comes with the kernel's receive time (the
// kernel turns stamping on a moment after a socket first asks), and says
// why not when none does. When one does, the socket stays open (stamper).
func probeStamps() (bool, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return false, fmt.Sprintf("the probe could not listen on loopback: %v", err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return false, fmt.Sprintf("the probe could not dial loopback: %v", err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		return false, fmt.Sprintf("the probe could not accept on loopback: %v", err)
	}
	keep := false
	defer func() {
		if !keep {
			server.Close()
		}
	}()
	rc, err := server.(*net.TCPConn).SyscallConn()
	if err != nil {
		return false, fmt.Sprintf("the probe has no socket: %v", err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil {
		return false, fmt.Sprintf("the probe has no socket: %v", err)
	}
	if serr != nil {
		return false, fmt.Sprintf("the kernel declines SO_TIMESTAMPNS on a TCP socket: %v", serr)
	}
	buf, oob := make([]byte, 16), make([]byte, 256)
	var oobn int
	var rerr error
	read := func(fd uintptr) bool {
		for {
			_, oobn, _, _, rerr = syscall.Recvmsg(int(fd), buf, oob, 0)
			if rerr != syscall.EINTR {
				return rerr != syscall.EAGAIN
			}
		}
	}
	const tries = 200
	for range tries {
		if _, err := client.Write([]byte("x")); err != nil {
			return false, fmt.Sprintf("the probe could not write on loopback: %v", err)
		}
		server.SetReadDeadline(time.Now().Add(5 * time.Second))
		if err := rc.Read(read); err != nil {
			return false, fmt.Sprintf("the probe could not read on loopback: %v", err)
		}
		if rerr != nil {
			return false, fmt.Sprintf("the probe's recvmsg: %v", rerr)
		}
		msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return false, fmt.Sprintf("the probe's control messages: %v", err)
		}
		for _, m := range msgs {
			if m.Header.Level == syscall.SOL_SOCKET && m.Header.Type == syscall.SCM_TIMESTAMPNS {
				keep, stamper = true, append(stamper, server)
				return true, ""
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false, fmt.Sprintf("the kernel accepts SO_TIMESTAMPNS on a TCP socket but sent no receive time with any of %d reads", tries)
}
