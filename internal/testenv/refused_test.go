//go:build unix

package testenv

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// The address refuses, and keeps its port from every listener started
// while the test runs.
func TestRefusedAddr(t *testing.T) {
	addr := RefusedAddr(t)
	if _, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
	for range 200 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		got := ln.Addr().String()
		ln.Close()
		if got == addr {
			t.Fatalf("a listener was given %s, the refusing port", addr)
		}
	}
	if ln, err := net.Listen("tcp", addr); err == nil {
		ln.Close()
		t.Fatalf("a listener could bind %s, the refusing port", addr)
	}
}
