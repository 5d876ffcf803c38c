//go:build !unix

package testenv

import (
	"net"
	"testing"
)

// RefusedAddr is a loopback host:port that refuses connections: here a
// closed listener's port, which a server the test starts meanwhile could
// be given (on Unix a bound socket holds it).
func RefusedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
