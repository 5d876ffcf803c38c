package hub

import (
	"errors"
	"fmt"
	"net/http"
)

// The kinds of Download failure, for errors.Is.
var (
	// ErrUnauthorized: the Hub answered 401 or 403 (private or gated repo,
	// missing or insufficient token).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrNotFound: the Hub answered 404 (no such repo, revision or file).
	ErrNotFound = errors.New("not found")
	// ErrUnreachable: the request failed before an HTTP answer, or the body
	// broke off; the caller says what local file to pass instead.
	ErrUnreachable = errors.New("unreachable")
	// ErrNotCached: offline, and the file is not in the cache.
	ErrNotCached = errors.New("not cached")
)

// Error is a failed Download, one line naming the repo and the file.
type Error struct {
	// Kind is one of the Err* values above, or nil for other failures.
	Kind error
	// Status is the HTTP status, 0 when there was no answer.
	Status int
	// URL is the address tried, "" when none was.
	URL   string
	what  string
	text  string
	cause error
}

func (e *Error) Error() string { return "hub: " + e.what + ": " + e.text }

// Unwrap returns the kind and the underlying error, for errors.Is and As.
func (e *Error) Unwrap() []error {
	var errs []error
	for _, err := range []error{e.Kind, e.cause} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// fileRef names a file of a repo, for messages.
type fileRef struct {
	repoType, repoID, filename, revision string
}

func (f fileRef) String() string {
	return fmt.Sprintf("%s %s, file %s", f.repoType, f.repoID, f.filename)
}

func (f fileRef) fail(kind error, format string, args ...any) *Error {
	e := &Error{Kind: kind, what: f.String(), text: fmt.Sprintf(format, args...)}
	for _, a := range args {
		if err, ok := a.(error); ok {
			e.cause = err
		}
	}
	return e
}

// statusError explains an HTTP error answer from the Hub, using the
// X-Error-Code header it sends with 404s.
func (f fileRef) statusError(method, url string, statusCode int, header http.Header, token bool) *Error {
	status := fmt.Sprintf("%d %s", statusCode, http.StatusText(statusCode))
	var e *Error
	switch code := header.Get("X-Error-Code"); {
	case statusCode == http.StatusUnauthorized || statusCode == http.StatusForbidden:
		if token {
			e = f.fail(ErrUnauthorized, "%s from %s: the token has no access to this repo (private, or gated: accept its conditions on the Hub), or the repo does not exist", status, url)
		} else {
			e = f.fail(ErrUnauthorized, "%s from %s: the repo is private or gated (or does not exist): set HF_TOKEN to a token with access", status, url)
		}
	case statusCode == http.StatusNotFound && code == "EntryNotFound":
		e = f.fail(ErrNotFound, "not found (404): the repo has no file %q at revision %q", f.filename, f.revision)
	case statusCode == http.StatusNotFound && code == "RevisionNotFound":
		e = f.fail(ErrNotFound, "not found (404): the repo has no revision %q", f.revision)
	case statusCode == http.StatusNotFound:
		e = f.fail(ErrNotFound, "not found (404) at %s: check the repo id, the file name and revision %q", url, f.revision)
	default:
		e = f.fail(nil, "%s %s: %s", method, url, status)
	}
	e.Status, e.URL = statusCode, url
	return e
}

// unreachable reports a request that got no answer. What to pass instead
// is the caller's to say, once, naming its flag.
func (f fileRef) unreachable(target string, err error) *Error {
	e := f.fail(ErrUnreachable, "cannot reach %s: %v", target, stripURL(err))
	e.cause, e.URL = err, target
	return e
}
