//go:build unix

package testenv

import (
	"net"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// RefusedAddr is a loopback host:port that refuses connections for the
// rest of the test: a socket bound to it, never listening, holds the port,
// so no server a test starts meanwhile can be given it (a port freed by
// closing a listener can be, and then answers instead of refusing).
func RefusedAddr(t testing.TB) string {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatalf("a socket to hold a refusing port: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("binding a refusing port: %v", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatalf("the refusing port: %v", err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*unix.SockaddrInet4).Port))
}
