package hub

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fileServer serves body at /f with Range support; while drops remain, a
// GET is cut off after dropAfter bytes of its answer.
type fileServer struct {
	*httptest.Server
	mu        sync.Mutex
	body      []byte
	drops     int
	dropAfter int
	status    int // answer every request with this status instead
	ranges    []string
}

func newFileServer(t *testing.T, body []byte) *fileServer {
	s := &fileServer{body: body}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *fileServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.ranges = append(s.ranges, r.Header.Get("Range"))
	drop := s.drops > 0
	if drop {
		s.drops--
	}
	status, after := s.status, s.dropAfter
	s.mu.Unlock()
	switch {
	case r.URL.Path != "/f":
		http.NotFound(w, r)
	case status != 0:
		w.WriteHeader(status)
	case !drop:
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(s.body))
	default:
		start := 0
		if v, ok := strings.CutPrefix(r.Header.Get("Range"), "bytes="); ok {
			start, _ = strconv.Atoi(strings.TrimSuffix(v, "-"))
			w.Header().Set("Content-Range", "bytes "+strconv.Itoa(start)+"-"+strconv.Itoa(len(s.body)-1)+"/"+strconv.Itoa(len(s.body)))
			w.Header().Set("Content-Length", strconv.Itoa(len(s.body)-start))
			w.WriteHeader(http.StatusPartialContent)
		} else {
			w.Header().Set("Content-Length", strconv.Itoa(len(s.body)))
			w.WriteHeader(http.StatusOK)
		}
		w.Write(s.body[start : start+after])
		w.(http.Flusher).Flush()
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	}
}

func (s *fileServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ranges...)
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func fetchError(t *testing.T, err error, step FetchStep) *FetchError {
	t.Helper()
	var fe *FetchError
	if !errors.As(err, &fe) || fe.Step != step {
		t.Fatalf("error %v (%#v), want a FetchError at step %d", err, err, step)
	}
	return fe
}

func TestFetchTemporaryFile(t *testing.T) {
	body := lfsBody(1000)
	s := newFileServer(t, body)
	dir := t.TempDir()
	dst := filepath.Join(dir, "sub", "f.jsonl")
	if err := Fetch(context.Background(), nil, s.URL+"/f", dst, FetchOptions{Size: -1}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustRead(t, dst), body) {
		t.Error("content differs")
	}
	if names := dirNames(t, filepath.Dir(dst)); len(names) != 1 {
		t.Errorf("directory holds %v, want only the file", names)
	}

	// A broken body leaves no partial file, and says where it stopped.
	s.drops, s.dropAfter = 1, 300
	other := filepath.Join(dir, "sub", "g.jsonl")
	err := Fetch(context.Background(), nil, s.URL+"/f", other, FetchOptions{Size: -1})
	fe := fetchError(t, err, FetchBody)
	if want := "download from " + s.URL + "/f broke off after 300 bytes: unexpected EOF"; err.Error() != want || fe.Got != 300 {
		t.Errorf("error %q, got %d; want %q", err, fe.Got, want)
	}
	if names := dirNames(t, filepath.Dir(dst)); len(names) != 1 {
		t.Errorf("directory holds %v after a broken download, want only the first file", names)
	}

	// An HTTP error names the URL and the status.
	err = Fetch(context.Background(), nil, s.URL+"/missing", other, FetchOptions{Size: -1})
	if fe := fetchError(t, err, FetchStatus); err.Error() != "GET "+s.URL+"/missing: 404 Not Found" || fe.StatusCode != 404 {
		t.Errorf("error %q", err)
	}
	err = Fetch(context.Background(), nil, "http://127.0.0.1:1/f", other, FetchOptions{Size: -1})
	if fetchError(t, err, FetchConnect); !strings.HasPrefix(err.Error(), "cannot reach http://127.0.0.1:1/f: dial tcp") {
		t.Errorf("error %q", err)
	}
	if names := dirNames(t, filepath.Dir(dst)); len(names) != 1 {
		t.Errorf("directory holds %v after failed downloads, want only the first file", names)
	}
}

func TestFetchResumesPartialFile(t *testing.T) {
	body := lfsBody(1000)
	s := newFileServer(t, body)
	dir := t.TempDir()
	dst := filepath.Join(dir, "f")
	partial := filepath.Join(dir, "tmp", "f.part")
	opt := FetchOptions{Size: -1, Partial: partial}

	// No bytes, nothing to keep.
	fetchError(t, Fetch(context.Background(), nil, s.URL+"/missing", dst, opt), FetchStatus)
	if _, err := os.Stat(partial); err == nil {
		t.Error("empty partial file kept")
	}
	s.ranges = nil

	s.drops, s.dropAfter = 1, 300
	fetchError(t, Fetch(context.Background(), nil, s.URL+"/f", dst, opt), FetchBody)
	if fi, err := os.Stat(partial); err != nil || fi.Size() != 300 {
		t.Fatalf("partial file: %v, %v; want 300 bytes kept", fi, err)
	}
	if _, err := os.Stat(dst); err == nil {
		t.Fatal("dst exists after a broken download")
	}
	if err := Fetch(context.Background(), nil, s.URL+"/f", dst, opt); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustRead(t, dst), body) {
		t.Error("resumed content differs")
	}
	if r := s.requests(); len(r) != 2 || r[1] != "bytes=300-" {
		t.Errorf("requests %q, want the second to resume at 300", r)
	}
	if _, err := os.Stat(partial); err == nil {
		t.Error("partial file kept after success")
	}

	// Retries resume within one call.
	s.drops, s.dropAfter = 2, 100
	s.ranges = nil
	opt.Retries = 2
	if err := Fetch(context.Background(), nil, s.URL+"/f", dst, opt); err != nil {
		t.Fatal(err)
	}
	if r := s.requests(); strings.Join(r, ",") != ",bytes=100-,bytes=200-" || !bytes.Equal(mustRead(t, dst), body) {
		t.Errorf("requests %q", r)
	}
}

// A partial file that already holds the whole file is answered 416; its
// Content-Range gives the length when the caller does not know it.
func TestFetchCompletePartialFile(t *testing.T) {
	body := lfsBody(500)
	s := newFileServer(t, body)
	for _, size := range []int64{-1, 500} {
		dir := t.TempDir()
		partial := filepath.Join(dir, "f.part")
		if err := os.WriteFile(partial, body, 0o644); err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, "f")
		if err := Fetch(context.Background(), nil, s.URL+"/f", dst, FetchOptions{Size: size, Partial: partial}); err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if !bytes.Equal(mustRead(t, dst), body) {
			t.Errorf("size %d: content differs", size)
		}
	}
	if r := s.requests(); len(r) != 2 || r[0] != "bytes=500-" {
		t.Errorf("requests %q", r)
	}
}

func TestFetchVerifyAndLimit(t *testing.T) {
	body := lfsBody(1000)
	s := newFileServer(t, body)
	dir := t.TempDir()
	dst := filepath.Join(dir, "f")
	partial := filepath.Join(dir, "f.part")
	var saw int64
	bad := errors.New("checksum mismatch")
	err := Fetch(context.Background(), nil, s.URL+"/f", dst, FetchOptions{Size: -1, Partial: partial, Limit: 600,
		Verify: func(p string) error {
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			saw = fi.Size()
			return bad
		}})
	if fetchError(t, err, FetchVerify); err.Error() != bad.Error() || !errors.Is(err, bad) || saw != 600 {
		t.Errorf("error %v, Verify saw %d bytes; want Verify's error and 600 bytes", err, saw)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("directory holds %v after a rejected download", names)
	}

	err = Fetch(context.Background(), nil, s.URL+"/f", dst, FetchOptions{Size: 2000})
	if fe := fetchError(t, err, FetchSize); fe.Got != 1000 || fe.Want != 2000 || err.Error() != "GET "+s.URL+"/f: got 1000 bytes, want 2000" {
		t.Errorf("error %q", err)
	}
}
