package neterr

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"

	"benchserve/internal/testenv"
)

func TestDescribe(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}
	dns := &net.DNSError{Err: "no such host", Name: "no-such-host.invalid", Server: "10.0.0.53:53", IsNotFound: true}
	cases := []struct {
		err  error
		want string
	}{
		{&net.OpError{Op: "dial", Net: "tcp", Addr: addr, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, "cannot connect to 127.0.0.1:1: connection refused"},
		// A DNS failure's dial error has no address.
		{&net.OpError{Op: "dial", Net: "tcp", Err: dns}, "cannot resolve no-such-host.invalid: no such host"},
		{&net.OpError{Op: "dial", Net: "tcp", Err: &net.AddrError{Err: "invalid port", Addr: "99999"}}, "dial tcp: address 99999: invalid port"},
		{context.DeadlineExceeded, "timed out"},
		{errors.New("tls: failed to verify\ncertificate"), "tls: failed to verify certificate"},
	}
	for _, c := range cases {
		// http.Client.Do wraps them so.
		wrapped := &url.Error{Op: "Post", URL: "http://127.0.0.1:1/v1/completions", Err: c.err}
		for _, err := range []error{c.err, wrapped} {
			if got := Describe(err); got != c.want {
				t.Errorf("Describe(%v) = %q, want %q", err, got, c.want)
			}
		}
	}
}

// What a real refused connection and a real unknown name give.
func TestDescribeReal(t *testing.T) {
	addr := testenv.RefusedAddr(t)
	_, err := http.Get("http://" + addr + "/v1/models")
	if got, want := Describe(err), "cannot connect to "+addr+": connection refused"; got != want {
		t.Errorf("refused: %q, want %q", got, want)
	}
	_, err = http.Get("http://no-such-host.invalid/")
	if got := Describe(err); !strings.HasPrefix(got, "cannot resolve no-such-host.invalid: ") {
		t.Errorf("unknown name: %q", got)
	}
}
