package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// How often Download resumes a download that broke off, and the pause
// before each try (huggingface_hub: 5 tries, 1 s apart). Tests change them.
var (
	fetchRetries = 5
	retryPause   = time.Second
)

// FetchOptions says how Fetch gets one file. The zero value is a plain
// download of unknown size into a temporary file, with no retries.
type FetchOptions struct {
	// Header is sent with each request. An Authorization header is not
	// sent on to another host, port or scheme that the server redirects to.
	Header http.Header
	// Size is the file's length, or -1 when it is not known; 0 is an empty
	// file. A known size is checked, and lets a resumed file that is
	// already complete be recognised.
	Size int64
	// Partial is where the bytes are written until the file is complete.
	// "" means a temporary file beside dst, removed when Fetch fails. A
	// named partial file is kept when a download breaks off (unless it is
	// empty), and the next Fetch resumes it with a Range request.
	Partial string
	// Retries is how many more tries a download gets when no server
	// answered or the body broke off, RetryPause apart; each resumes where
	// the last stopped.
	Retries    int
	RetryPause time.Duration
	// Limit, if positive, is the most bytes read: the file is cut there,
	// for Size or Verify to reject.
	Limit int64
	// Verify, if set, checks the complete partial file before it becomes
	// dst; its error fails Fetch (as a FetchVerify *FetchError whose text
	// is the error's own) and removes the partial file.
	Verify func(partial string) error
	// Progress, if set, receives a line now and then while a file of
	// unknown size, or of 10 MB or more, downloads; Name names the file in
	// it.
	Progress io.Writer
	Name     string
}

// FetchStep says what a failed Fetch was doing.
type FetchStep uint8

// The steps of a Fetch that can fail.
const (
	FetchFile    FetchStep = iota // making, writing or renaming the local files
	FetchURL                      // building the request: the URL is not valid
	FetchConnect                  // sending it: no answer
	FetchStatus                   // an answer other than 200 (or 206 to a resume)
	FetchRange                    // a 206 or 416 answer that does not fit the resume
	FetchBody                     // the body broke off
	FetchSize                     // the body's length is not Size
	FetchVerify                   // Verify rejected the file
)

// FetchError is a failed Fetch. Callers that word their own messages
// read its fields; its text names the URL.
type FetchError struct {
	Step FetchStep
	URL  string
	// Status ("404 Not Found") and StatusCode and Header are those of the
	// answer, for FetchStatus and FetchRange.
	Status     string
	StatusCode int
	Header     http.Header
	// Got is the bytes the file held when it failed; Want is Size, for
	// FetchSize.
	Got, Want int64
	// Err is the cause: the local file's error, the request's, the body's
	// or Verify's.
	Err error
}

func (e *FetchError) Error() string {
	switch e.Step {
	case FetchFile:
		return fmt.Sprintf("saving %s: %v", e.URL, e.Err)
	case FetchURL:
		return fmt.Sprintf("bad URL %s: %v", e.URL, e.Err)
	case FetchConnect:
		return fmt.Sprintf("cannot reach %s: %v", e.URL, stripURL(e.Err))
	case FetchStatus:
		return fmt.Sprintf("GET %s: %s", e.URL, e.Status)
	case FetchRange:
		return fmt.Sprintf("GET %s: unexpected %s to a resumed download", e.URL, e.Status)
	case FetchBody:
		return fmt.Sprintf("download from %s broke off after %d bytes: %v", e.URL, e.Got, e.Err)
	case FetchSize:
		return fmt.Sprintf("GET %s: got %d bytes, want %d", e.URL, e.Got, e.Want)
	}
	return e.Err.Error() // FetchVerify
}

func (e *FetchError) Unwrap() error { return e.Err }

// retryable reports whether another try may succeed: no server answered,
// the body broke off, or a resume went wrong (and the partial file was
// emptied, so the next try starts over).
func (e *FetchError) retryable() bool {
	return e.Step == FetchConnect || e.Step == FetchBody || e.Step == FetchRange
}

// stripURL drops the *url.Error around err, whose text repeats the URL.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Fetch downloads url to dst with client (nil: a plain http.Client),
// writing through opt.Partial or a temporary file that is renamed to dst
// when complete, so that dst is either absent or whole. Errors are
// *FetchError values.
func Fetch(ctx context.Context, client *http.Client, url, dst string, opt FetchOptions) error {
	var hc http.Client
	if client != nil {
		hc = *client
	}
	hc.CheckRedirect = dropAuthOnRedirect
	fileErr := func(err error) error { return &FetchError{Step: FetchFile, URL: url, Err: err} }

	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fileErr(err)
	}
	partial := opt.Partial
	if partial == "" {
		f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*.incomplete")
		if err != nil {
			return fileErr(err)
		}
		f.Close()
		partial = f.Name()
		defer os.Remove(partial) // fails once the file is renamed
	} else {
		if err := os.MkdirAll(filepath.Dir(partial), 0o755); err != nil {
			return fileErr(err)
		}
		defer lockPath(partial)()
		defer removeEmpty(partial) // nothing to resume
	}

	for try := 0; ; try++ {
		err := fetchOnce(ctx, &hc, url, partial, opt)
		if err == nil {
			break
		}
		if !err.retryable() || try >= opt.Retries || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(opt.RetryPause):
		}
	}
	if opt.Verify != nil {
		if err := opt.Verify(partial); err != nil {
			os.Remove(partial)
			return &FetchError{Step: FetchVerify, URL: url, Err: err}
		}
	}
	if err := os.Rename(partial, dst); err != nil {
		return fileErr(err)
	}
	return nil
}

// dropAuthOnRedirect follows up to 10 redirects, sending the Authorization
// header to the first request's host only: Go keeps it for a subdomain or
// another port.
func dropAuthOnRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("too many redirects")
	}
	if !strings.EqualFold(req.URL.Host, via[0].URL.Host) || req.URL.Scheme != via[0].URL.Scheme {
		req.Header.Del("Authorization")
	}
	return nil
}

// fetchOnce makes one request for url, appending to the bytes partial
// already holds.
func fetchOnce(ctx context.Context, hc *http.Client, url, partial string, opt FetchOptions) *FetchError {
	fileErr := func(err error) *FetchError { return &FetchError{Step: FetchFile, URL: url, Err: err} }
	out, err := os.OpenFile(partial, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fileErr(err)
	}
	defer out.Close()
	have, err := out.Seek(0, io.SeekEnd)
	if err != nil {
		return fileErr(err)
	}
	size := opt.Size
	if size >= 0 && have > size {
		// Not a prefix of this file: start over.
		if err := out.Truncate(0); err != nil {
			return fileErr(err)
		}
		have, _ = out.Seek(0, io.SeekStart)
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return &FetchError{Step: FetchURL, URL: url, Err: err}
	}
	for k, v := range opt.Header {
		req.Header[k] = v
	}
	if have > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return &FetchError{Step: FetchConnect, URL: url, Err: err}
	}
	defer resp.Body.Close()

	unexpected := func(step FetchStep) *FetchError {
		return &FetchError{Step: step, URL: url, Status: resp.Status, StatusCode: resp.StatusCode, Header: resp.Header}
	}
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0 && rangeStart(resp) == have:
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && have > 0 && (have == size || size < 0 && rangeTotal(resp) == have):
		return nil // complete already
	case resp.StatusCode == http.StatusOK:
		if have > 0 {
			// The server sends the whole file: drop what we had.
			if err := out.Truncate(0); err != nil {
				return fileErr(err)
			}
			have, _ = out.Seek(0, io.SeekStart)
		}
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable || resp.StatusCode == http.StatusPartialContent:
		// A range we did not ask for: start over on the next try.
		out.Truncate(0)
		return unexpected(FetchRange)
	default:
		return unexpected(FetchStatus)
	}

	total := size
	if total < 0 && resp.ContentLength >= 0 {
		total = have + resp.ContentLength
	}
	var body io.Reader = resp.Body
	if opt.Limit > 0 {
		body = io.LimitReader(body, max(opt.Limit-have, 0))
	}
	var w io.Writer = fileWriter{out}
	var p *progress
	if opt.Progress != nil && (total < 0 || total >= progressMin) {
		p = newProgress(opt.Progress, opt.Name, have, total)
		w = io.MultiWriter(w, p)
	}
	n, err := io.Copy(w, body)
	if p != nil {
		p.finish(err == nil && (size < 0 || have+n == size))
	}
	if err != nil {
		var we *writeError
		if errors.As(err, &we) {
			return fileErr(we.err)
		}
		return &FetchError{Step: FetchBody, URL: url, Got: have + n, Err: err}
	}
	if size >= 0 && have+n != size {
		out.Truncate(0)
		return &FetchError{Step: FetchSize, URL: url, Got: have + n, Want: size}
	}
	if err := out.Close(); err != nil {
		return fileErr(err)
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

// rangeTotal is the length a 416 answer's Content-Range ("bytes */123")
// gives the file, -1 if none.
func rangeTotal(resp *http.Response) int64 {
	v, ok := strings.CutPrefix(resp.Header.Get("Content-Range"), "bytes */")
	if !ok {
		return -1
	}
	n, err := strconv.ParseInt(v, 10, 64)
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

// removeEmpty removes the file at path if it is empty.
func removeEmpty(path string) {
	if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
		os.Remove(path)
	}
}

// pathLocks keeps two goroutines from writing the same file. (Separate
// processes are not coordinated: huggingface_hub's file locks are not
// taken.)
var pathLocks sync.Map

func lockPath(path string) (unlock func()) {
	mu, _ := pathLocks.LoadOrStore(path, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	return mu.(*sync.Mutex).Unlock
}

// fetch downloads a Hub file from url to dst through dst+".incomplete",
// which is kept for resuming when the download breaks off, and checks its
// length against size (-1: unknown). auth sends the token.
func (c *Client) fetch(ctx context.Context, f fileRef, url string, auth bool, dst string, size int64) error {
	h := http.Header{}
	c.setHeaders(h, auth)
	hc := c.httpClient()
	err := Fetch(ctx, &hc, url, dst, FetchOptions{
		Header:     h,
		Size:       size,
		Partial:    dst + ".incomplete",
		Retries:    fetchRetries,
		RetryPause: retryPause,
		Progress:   c.Progress,
		Name:       f.filename,
	})
	var fe *FetchError
	if !errors.As(err, &fe) {
		return err
	}
	switch fe.Step {
	case FetchFile:
		return f.fail(nil, "cache: %v", fe.Err)
	case FetchURL:
		return f.fail(nil, "bad URL %s: %v", url, fe.Err)
	case FetchConnect:
		return f.unreachable(url, fe.Err)
	case FetchStatus:
		return f.statusError(http.MethodGet, url, fe.StatusCode, fe.Header, auth && c.Token != "")
	case FetchRange:
		e := f.fail(ErrUnreachable, "%s", fe.Error())
		e.URL, e.Status = url, fe.StatusCode
		return e
	case FetchBody:
		e := f.fail(ErrUnreachable, "%s", fe.Error())
		e.URL, e.cause = url, fe.Err
		return e
	case FetchSize:
		return f.fail(nil, "%s (the size the Hub gave)", fe.Error())
	}
	return f.fail(nil, "%s", fe.Error())
}
