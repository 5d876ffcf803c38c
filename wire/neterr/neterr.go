// Package neterr words the error of an HTTP call that got no response, in
// one line, so that a refused connection reads the same in a request's
// record, the warmup failure and the control-plane calls.
package neterr

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"strings"
)

// Describe returns err without Go's `Post "url": ` prefix (the caller
// names the URL once, its own way), with dial and DNS failures put
// plainly: "cannot connect to 127.0.0.1:1: connection refused",
// "cannot resolve no-such-host.invalid: no such host".
func Describe(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(err, &dns):
		return "cannot resolve " + dns.Name + ": " + dns.Err
	case errors.As(err, &op) && op.Op == "dial" && op.Addr != nil && op.Err != nil:
		cause := op.Err
		var sys *os.SyscallError
		if errors.As(cause, &sys) && sys.Err != nil {
			cause = sys.Err // "connection refused" rather than "connect: connection refused"
		}
		return "cannot connect to " + op.Addr.String() + ": " + oneLine(cause.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	}
	return oneLine(err.Error())
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
