package backend

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"benchserve/record"
	"benchserve/wire/neterr"
	"benchserve/wire/sse"
)

// kindError is a failure with its record.ErrorKind.
type kindError struct {
	kind string
	msg  string
}

func (e *kindError) Error() string { return e.msg }

func kindErrorf(kind, format string, a ...any) error {
	return &kindError{kind: kind, msg: fmt.Sprintf(format, a...)}
}

// kindOf classifies an error from reading a 200 response: an error object
// the server sent, a line over the limit, or else a reply that could not
// be used.
func kindOf(err error) string {
	var ke *kindError
	var se serverError
	switch {
	case errors.As(err, &ke):
		return ke.kind
	case errors.As(err, &se):
		return record.KindStreamError
	case errors.Is(err, sse.ErrLineTooLong):
		return record.KindTooLarge
	}
	return record.KindInvalid
}

// statusKind classifies a status other than 200.
func statusKind(code int) string {
	switch {
	case code == 429:
		return record.KindHTTP429
	case code >= 400 && code < 500:
		return record.KindHTTP4xx
	case code >= 500 && code < 600:
		return record.KindHTTP5xx
	}
	return record.KindHTTPOther
}

// ctxFailure describes a request its context ended: the --request-timeout
// limit passed, or the run cancelled it. ok is false while ctx is live.
func (c *Client) ctxFailure(ctx context.Context) (kind, msg string, ok bool) {
	switch ctx.Err() {
	case context.DeadlineExceeded:
		return record.KindTimeout, "the request exceeded its " + c.opt.Timeout.String() + " limit", true
	case context.Canceled:
		return record.KindInterrupted, "the request was cancelled", true
	}
	return "", "", false
}

// transportError classifies a request that got no response.
func (c *Client) transportError(ctx context.Context, err error) (kind, msg string) {
	if kind, msg, ok := c.ctxFailure(ctx); ok {
		return kind, msg
	}
	msg = neterr.Describe(err) // worded as the control-plane calls word it
	var op *net.OpError
	var ne net.Error
	var cert *tls.CertificateVerificationError
	var rec tls.RecordHeaderError
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		// No read deadline is set: only the connect timeout (dial or TLS
		// handshake) gives a timeout here.
		return record.KindTimeout, "no connection within --connect-timeout: " + msg
	case errors.As(err, &op) && op.Op == "dial", errors.As(err, &cert), errors.As(err, &rec):
		return record.KindConnect, msg
	case brokenConn(err):
		return record.KindReset, "the connection broke before the response headers came: " + msg
	}
	return record.KindOther, msg
}

// brokenConn reports an error of a connection the peer closed or reset.
func brokenConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)
}

// readError classifies a failed read of the body after line n.
func readError(n int, err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return kindErrorf(record.KindTimeout, "reading the response after line %d timed out: %v", n, err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return kindErrorf(record.KindReset, "the connection closed mid-response, after line %d (unexpected EOF)", n)
	}
	return kindErrorf(record.KindReset, "reading the response after line %d: %s", n, oneLine([]byte(err.Error())))
}
