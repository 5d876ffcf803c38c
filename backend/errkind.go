package backend

import (
	"errors"

	"benchserve/record"
	"benchserve/wire/http1"
	"benchserve/wire/sse"
)

// kindErrorf is a failure with its record.ErrorKind.
func kindErrorf(kind, format string, a ...any) error { return http1.Errorf(kind, format, a...) }

// kindOf classifies an error from reading a 200 response: one of a kind
// already (the wire's, or the request's end), an error object the server
// sent, a line over the limit, or else a reply that could not be used.
func kindOf(err error) string {
	var ke *http1.Error
	var se serverError
	switch {
	case errors.As(err, &ke):
		return ke.Kind
	case errors.As(err, &se):
		return record.KindStreamError
	case errors.Is(err, sse.ErrLineTooLong):
		return record.KindTooLarge
	}
	return record.KindInvalid
}
