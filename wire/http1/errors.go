package http1

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"benchserve/record"
	"benchserve/wire/neterr"
)

// Error is a failure with its record.ErrorKind.
type Error struct {
	Kind string
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Errorf is an Error of kind.
func Errorf(kind, format string, a ...any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, a...)}
}

// StatusKind classifies a status other than 200.
func StatusKind(code int) string {
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

// ctxFailure describes a request its context ended: the timeout passed,
// or the run cancelled it. ok is false while ctx is live.
func ctxFailure(ctx context.Context, timeout time.Duration) (kind, msg string, ok bool) {
	switch ctx.Err() {
	case context.DeadlineExceeded:
		return record.KindTimeout, "the request exceeded its " + timeout.String() + " limit", true
	case context.Canceled:
		return record.KindInterrupted, "the request was cancelled", true
	}
	return "", "", false
}

// TransportError classifies a request that got no response; ctx is the
// request's, whose timeout was timeout.
func TransportError(ctx context.Context, timeout time.Duration, err error) (kind, msg string) {
	if kind, msg, ok := ctxFailure(ctx, timeout); ok {
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

// ReadError classifies a failed read of the body after line n.
func ReadError(n int, err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return Errorf(record.KindTimeout, "reading the response after line %d timed out: %v", n, err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return Errorf(record.KindReset, "the connection closed mid-response, after line %d (unexpected EOF)", n)
	}
	return Errorf(record.KindReset, "reading the response after line %d: %s", n, OneLine([]byte(err.Error())))
}

// Sizes for the error text of an HTTP error status.
const (
	errShow = 4 << 10 // bytes of the body quoted in the error
	errRead = 1 << 20 // bytes read to learn the body's size
)

// StatusError is "<status> <reason>: <body>", the body trimmed, on one
// line and cut at 4 KiB with a note of its full size.
func StatusError(resp *http.Response) string {
	status := resp.Status
	if code := strconv.Itoa(resp.StatusCode); status == "" || status == code {
		status = strings.TrimSpace(code + " " + http.StatusText(resp.StatusCode))
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, errRead+1))
	body := bytes.TrimSpace(b)
	var note string
	switch {
	case len(b) > errRead:
		note = " ... (more than 1 MiB in all)"
	case err != nil:
		note = " ... (reading the body failed: " + err.Error() + ")"
	case len(body) > errShow:
		note = " ... (" + strconv.Itoa(len(body)) + " bytes in all)"
	}
	if len(body) > errShow {
		cut := errShow
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
		body = body[:cut]
	}
	if len(body) == 0 && note == "" {
		return status + ": (empty body)"
	}
	return status + ": " + string(OneLine(body)) + note
}

// OneLine turns line breaks into spaces (a CRLF into one space).
func OneLine(b []byte) []byte {
	if !bytes.ContainsAny(b, "\r\n") {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
			out = append(out, ' ')
		case '\n':
			out = append(out, ' ')
		default:
			out = append(out, b[i])
		}
	}
	return out
}

// fail marks rec failed with kind and msg.
func fail(rec *record.Record, kind, msg string) {
	rec.Success = false
	rec.Error = msg
	rec.ErrorKind = kind
	rec.OutputLen = 0
}
