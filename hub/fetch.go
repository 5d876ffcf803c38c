package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// How often fetch resumes a download that broke off, and the pause before
// each try (huggingface_hub: 5 tries, 1 s apart). Tests change them.
var (
	fetchRetries = 5
	retryPause   = time.Second
)

// fetch downloads url into dst (a ".incomplete" file), resuming from the
// bytes dst already holds, and checks the total against size (-1: unknown).
// dst is left in place on failure so that the next call resumes.
func (c *Client) fetch(ctx context.Context, f fileRef, url string, auth bool, dst string, size int64) error {
	hc := c.httpClient()
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("too many redirects")
		}
		// Go keeps the header for a subdomain or another port; the token is
		// for the Hub's own host only.
		if !strings.EqualFold(req.URL.Host, via[0].URL.Host) || req.URL.Scheme != via[0].URL.Scheme {
			req.Header.Del("Authorization")
		}
		return nil
	}
	for try := 0; ; try++ {
		err := c.fetchOnce(ctx, &hc, f, url, auth, dst, size)
		var e *Error
		if err == nil || !errors.As(err, &e) || e.Kind != ErrUnreachable || try >= fetchRetries || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(retryPause):
		}
	}
}

func (c *Client) fetchOnce(ctx context.Context, hc *http.Client, f fileRef, url string, auth bool, dst string, size int64) error {
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return f.fail(nil, "cache: %v", err)
	}
	defer out.Close()
	have, err := out.Seek(0, io.SeekEnd)
	if err != nil {
		return f.fail(nil, "cache: %v", err)
	}
	if size >= 0 && have > size {
		// Not a prefix of this file: start over.
		if err := out.Truncate(0); err != nil {
			return f.fail(nil, "cache: %v", err)
		}
		have, _ = out.Seek(0, io.SeekStart)
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return f.fail(nil, "bad URL %s: %v", url, err)
	}
	c.setHeaders(req, auth)
	if have > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return f.unreachable(url, err)
	}
	defer resp.Body.Close()

	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0 && rangeStart(resp) == have:
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && have > 0 && have == size:
		return nil // complete already
	case resp.StatusCode == http.StatusOK:
		if have > 0 {
			// The server sends the whole file: drop what we had.
			if err := out.Truncate(0); err != nil {
				return f.fail(nil, "cache: %v", err)
			}
			have, _ = out.Seek(0, io.SeekStart)
		}
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable || resp.StatusCode == http.StatusPartialContent:
		// A range we did not ask for: start over on the next try.
		out.Truncate(0)
		e := f.fail(ErrUnreachable, "GET %s: unexpected %s to a resumed download", url, resp.Status)
		e.URL, e.Status = url, resp.StatusCode
		return e
	default:
		return f.statusError(http.MethodGet, url, resp, auth && c.Token != "")
	}

	total := size
	if total < 0 && resp.ContentLength >= 0 {
		total = have + resp.ContentLength
	}
	var w io.Writer = fileWriter{out}
	var p *progress
	if c.Progress != nil && (total < 0 || total >= progressMin) {
		p = newProgress(c.Progress, f.filename, have, total)
		w = io.MultiWriter(w, p)
	}
	n, err := io.Copy(w, resp.Body)
	if p != nil {
		p.finish(err == nil && (size < 0 || have+n == size))
	}
	if err != nil {
		var we *writeError
		if errors.As(err, &we) {
			return f.fail(nil, "cache: %v", we.err)
		}
		e := f.fail(ErrUnreachable, "download from %s broke off after %d bytes: %v; a local copy of the file can be passed instead", url, have+n, err)
		e.URL = url
		return e
	}
	if size >= 0 && have+n != size {
		out.Truncate(0)
		return f.fail(nil, "GET %s: got %d bytes, want %d (the size the Hub gave)", url, have+n, size)
	}
	return nil
}

// rangeStart is the first byte of a 206 answer's Content-Range, -1 if none.
func rangeStart(resp *http.Response) int64 {
	v, ok := strings.CutPrefix(resp.Header.Get("Content-Range"), "bytes ")
	if !ok {
		return -1
	}
	start, _, _ := strings.Cut(v, "-")
	n, err := strconv.ParseInt(start, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// fileWriter marks write errors, so that a full disk is not taken for a
// broken connection and retried.
type fileWriter struct{ f *os.File }

type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }

func (w fileWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		err = &writeError{err}
	}
	return n, err
}
