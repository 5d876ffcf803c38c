package hub

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const (
	commit1 = "0123456789abcdef0123456789abcdef01234567"
	commit2 = "fedcba9876543210fedcba9876543210fedcba98"
	sha1    = "5b8a6e0c3f0f4b4f9e2f0d6c7a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
)

func testClient(t *testing.T, h *fakeHub, token string) *Client {
	return &Client{Endpoint: h.hub.URL, Token: token, CacheDir: t.TempDir()}
}

// noRetries makes fetch give up at the first broken download.
func noRetries(t *testing.T) {
	oldRetries, oldPause := fetchRetries, retryPause
	fetchRetries, retryPause = 0, 0
	t.Cleanup(func() { fetchRetries, retryPause = oldRetries, oldPause })
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func lfsBody(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}

func TestDownloadRegularFile(t *testing.T) {
	h := newFakeHub(t)
	body := []byte(`{"model_type": "llama"}`)
	h.add("/org/model/resolve/main/config.json", &fakeFile{body: body, commit: commit1, etag: `"abc123"`})
	c := testClient(t, h, "hf_secret")

	got, err := c.Download(context.Background(), "model", "org/model", "config.json", "")
	if err != nil {
		t.Fatal(err)
	}
	storage := filepath.Join(c.CacheDir, "models--org--model")
	if want := filepath.Join(storage, "snapshots", commit1, "config.json"); got != want {
		t.Errorf("path = %s, want %s", got, want)
	}
	if link, err := os.Readlink(got); err != nil || link != "../../blobs/abc123" {
		t.Errorf("snapshot entry links to %q (%v), want ../../blobs/abc123", link, err)
	}
	if b := mustRead(t, got); !bytes.Equal(b, body) {
		t.Errorf("content = %q", b)
	}
	if ref := mustRead(t, filepath.Join(storage, "refs", "main")); string(ref) != commit1 {
		t.Errorf("refs/main = %q, want %q", ref, commit1)
	}
	if left, _ := filepath.Glob(filepath.Join(storage, "blobs", "*.incomplete")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	for _, r := range h.requests("hub", "") {
		if r.auth != "Bearer hf_secret" {
			t.Errorf("%s %s sent Authorization %q", r.method, r.path, r.auth)
		}
	}

	// The snapshot entry exists: ask for the commit, but do not download.
	again, err := c.Download(context.Background(), "model", "org/model", "config.json", "main")
	if err != nil || again != got {
		t.Fatalf("second Download = %s, %v", again, err)
	}
	if n := len(h.requests("hub", http.MethodGet)); n != 1 {
		t.Errorf("%d GETs, want 1", n)
	}
	if n := len(h.requests("hub", http.MethodHead)); n != 2 {
		t.Errorf("%d HEADs, want 2", n)
	}
}

func TestDownloadWeakETagAndNewCommit(t *testing.T) {
	h := newFakeHub(t)
	h.add("/org/model/resolve/main/a.txt", &fakeFile{body: []byte("one"), commit: commit1, etag: `W/"e1"`})
	c := testClient(t, h, "")
	p1, err := c.Download(context.Background(), "model", "org/model", "a.txt", "main")
	if err != nil {
		t.Fatal(err)
	}
	if link, _ := os.Readlink(p1); link != "../../blobs/e1" {
		t.Errorf("link = %q, want ../../blobs/e1", link)
	}
	// main moves to a new commit with new content.
	h.add("/org/model/resolve/main/a.txt", &fakeFile{body: []byte("two"), commit: commit2, etag: `"e2"`})
	p2, err := c.Download(context.Background(), "model", "org/model", "a.txt", "main")
	if err != nil {
		t.Fatal(err)
	}
	if p2 == p1 || !strings.Contains(p2, commit2) || string(mustRead(t, p2)) != "two" || string(mustRead(t, p1)) != "one" {
		t.Errorf("after the branch moved: %s (%q), old %s (%q)", p2, mustRead(t, p2), p1, mustRead(t, p1))
	}
	if ref := mustRead(t, filepath.Join(c.CacheDir, "models--org--model", "refs", "main")); string(ref) != commit2 {
		t.Errorf("refs/main = %q, want %q", ref, commit2)
	}
}

func TestDownloadLFSRedirect(t *testing.T) {
	old := progressMin
	progressMin = 0
	t.Cleanup(func() { progressMin = old })

	h := newFakeHub(t)
	body := lfsBody(200_000)
	h.add("/datasets/org/data/resolve/main/dir/big%20file.json", &fakeFile{body: body, commit: commit1, lfs: true, sha: sha1})
	c := testClient(t, h, "hf_secret")
	var progress bytes.Buffer
	c.Progress = &progress

	got, err := c.Download(context.Background(), "dataset", "org/data", "dir/big file.json", "main")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(c.CacheDir, "datasets--org--data", "snapshots", commit1, "dir", "big file.json"); got != want {
		t.Errorf("path = %s, want %s", got, want)
	}
	if link, _ := os.Readlink(got); link != "../../../blobs/"+sha1 {
		t.Errorf("link = %q, want ../../../blobs/%s", link, sha1)
	}
	if !bytes.Equal(mustRead(t, got), body) {
		t.Error("content differs")
	}

	heads := h.requests("hub", http.MethodHead)
	if len(heads) != 1 || heads[0].auth != "Bearer hf_secret" {
		t.Errorf("hub HEADs = %+v, want one with the token", heads)
	}
	if gets := h.requests("hub", http.MethodGet); len(gets) != 0 {
		t.Errorf("GETs to the hub: %+v; the HEAD's redirect should be used", gets)
	}
	gets := h.requests("cdn", http.MethodGet)
	if len(gets) != 1 || gets[0].auth != "" {
		t.Errorf("CDN GETs = %+v, want one without Authorization", gets)
	}
	hubURL, _ := url.Parse(h.hub.URL)
	cdnURL, _ := url.Parse(h.cdn.URL)
	if hubURL.Host == cdnURL.Host {
		t.Fatalf("hub and CDN share host %s", hubURL.Host)
	}
	if want := "hub: dir/big file.json: 0.2 / 0.2 MB done\n"; !strings.HasSuffix(progress.String(), want) {
		t.Errorf("progress = %q, want it to end with %q", progress.String(), want)
	}
}

// A GET of the resolve URL that the Hub redirects must not carry the token
// to the CDN either.
func TestFetchDropsTokenOnRedirect(t *testing.T) {
	for _, addr := range []string{"127.0.0.2:0", "127.0.0.1:0"} {
		t.Run(addr, func(t *testing.T) { testFetchDropsToken(t, addr) })
	}
}

func testFetchDropsToken(t *testing.T, cdnAddr string) {
	h := newFakeHubCDN(t, cdnAddr)
	body := lfsBody(1000)
	h.add("/org/model/resolve/main/w.bin", &fakeFile{body: body, commit: commit1, lfs: true, sha: sha1})
	c := testClient(t, h, "hf_secret")
	dst := filepath.Join(t.TempDir(), "w.incomplete")
	f := fileRef{"model", "org/model", "w.bin", "main"}
	if err := c.fetch(context.Background(), f, h.hub.URL+"/org/model/resolve/main/w.bin", true, dst, int64(len(body))); err != nil {
		t.Fatal(err)
	}
	if hub := h.requests("hub", http.MethodGet); len(hub) != 1 || hub[0].auth != "Bearer hf_secret" {
		t.Errorf("hub GETs = %+v", hub)
	}
	if cdn := h.requests("cdn", http.MethodGet); len(cdn) != 1 || cdn[0].auth != "" {
		t.Errorf("CDN GETs = %+v, want one without Authorization", cdn)
	}
	if !bytes.Equal(mustRead(t, dst), body) {
		t.Error("content differs")
	}
}

func TestDownloadRelativeRedirect(t *testing.T) {
	h := newFakeHub(t)
	h.status["/old-org/model/resolve/main/config.json"] = fakeStatus{code: http.StatusTemporaryRedirect, location: "/org/model/resolve/main/config.json"}
	h.add("/org/model/resolve/main/config.json", &fakeFile{body: []byte("{}"), commit: commit1, etag: `"c1"`})
	c := testClient(t, h, "")
	got, err := c.Download(context.Background(), "model", "old-org/model", "config.json", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(c.CacheDir, "models--old-org--model", "snapshots", commit1, "config.json"); got != want {
		t.Errorf("path = %s, want %s", got, want)
	}
	heads := h.requests("hub", http.MethodHead)
	if len(heads) != 2 || heads[1].path != "/org/model/resolve/main/config.json" {
		t.Errorf("HEADs = %+v", heads)
	}
}

func TestDownloadEscapesRevisionAndFilename(t *testing.T) {
	h := newFakeHub(t)
	h.add("/org/model/resolve/refs%2Fpr%2F1/sub%20dir/a%2Bb.json", &fakeFile{body: []byte("pr"), commit: commit1, etag: `"p1"`})
	c := testClient(t, h, "")
	got, err := c.Download(context.Background(), "model", "org/model", "sub dir/a+b.json", "refs/pr/1")
	if err != nil {
		t.Fatal(err)
	}
	if string(mustRead(t, got)) != "pr" {
		t.Errorf("content = %q", mustRead(t, got))
	}
	ref := filepath.Join(c.CacheDir, "models--org--model", "refs", "refs", "pr", "1")
	if string(mustRead(t, ref)) != commit1 {
		t.Errorf("ref %s = %q", ref, mustRead(t, ref))
	}
}

func TestQuote(t *testing.T) {
	tests := []struct {
		in        string
		keepSlash bool
		want      string
	}{
		{"main", false, "main"},
		{"refs/pr/1", false, "refs%2Fpr%2F1"},
		{"v1.0-rc_2~x", false, "v1.0-rc_2~x"},
		{"a b/c+d&e=f.json", true, "a%20b/c%2Bd%26e%3Df.json"},
		{"é.txt", true, "%C3%A9.txt"},
	}
	for _, tt := range tests {
		if got := quote(tt.in, tt.keepSlash); got != tt.want {
			t.Errorf("quote(%q, %v) = %q, want %q", tt.in, tt.keepSlash, got, tt.want)
		}
	}
}

func TestDownloadCommitRevision(t *testing.T) {
	h := newFakeHub(t)
	h.add("/org/model/resolve/"+commit1+"/config.json", &fakeFile{body: []byte("{}"), commit: commit1, etag: `"c1"`})
	c := testClient(t, h, "")
	got, err := c.Download(context.Background(), "model", "org/model", "config.json", commit1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(c.CacheDir, "models--org--model", "refs")); !os.IsNotExist(err) {
		t.Errorf("a commit revision wrote refs/: %v", err)
	}
	before := len(h.requests("", ""))
	again, err := c.Download(context.Background(), "model", "org/model", "config.json", commit1)
	if err != nil || again != got {
		t.Fatalf("again = %s, %v", again, err)
	}
	if after := len(h.requests("", "")); after != before {
		t.Errorf("a cached commit made %d more requests, want none", after-before)
	}
}

func TestDownloadErrors(t *testing.T) {
	h := newFakeHub(t)
	h.status["/org/private/resolve/main/config.json"] = fakeStatus{code: 401, errorCode: "RepoNotFound"}
	h.status["/org/gated/resolve/main/config.json"] = fakeStatus{code: 403, errorCode: "GatedRepo"}
	h.status["/org/model/resolve/nope/config.json"] = fakeStatus{code: 404, errorCode: "RevisionNotFound"}
	h.status["/org/gone/resolve/main/config.json"] = fakeStatus{code: 404}
	h.status["/org/down/resolve/main/config.json"] = fakeStatus{code: 500}
	u := h.hub.URL
	tests := []struct {
		repo, file, rev, token string
		kind                   error
		want                   string
	}{
		{"org/private", "config.json", "main", "", ErrUnauthorized,
			"hub: model org/private, file config.json: 401 Unauthorized from " + u + "/org/private/resolve/main/config.json: the repo is private or gated (or does not exist): set HF_TOKEN to a token with access"},
		{"org/gated", "config.json", "main", "hf_x", ErrUnauthorized,
			"hub: model org/gated, file config.json: 403 Forbidden from " + u + "/org/gated/resolve/main/config.json: the token has no access to this repo (private, or gated: accept its conditions on the Hub), or the repo does not exist"},
		{"org/model", "missing.json", "main", "", ErrNotFound,
			`hub: model org/model, file missing.json: not found (404): the repo has no file "missing.json" at revision "main"`},
		{"org/model", "config.json", "nope", "", ErrNotFound,
			`hub: model org/model, file config.json: not found (404): the repo has no revision "nope"`},
		{"org/gone", "config.json", "main", "", ErrNotFound,
			"hub: model org/gone, file config.json: not found (404) at " + u + `/org/gone/resolve/main/config.json: check the repo id, the file name and revision "main"`},
		{"org/down", "config.json", "main", "", nil,
			"hub: model org/down, file config.json: HEAD " + u + "/org/down/resolve/main/config.json: 500 Internal Server Error"},
	}
	for _, tt := range tests {
		c := testClient(t, h, tt.token)
		_, err := c.Download(context.Background(), "model", tt.repo, tt.file, tt.rev)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Download(%s, %s, %s) error:\n got %v\nwant %s", tt.repo, tt.file, tt.rev, err, tt.want)
			continue
		}
		if tt.kind != nil && !errors.Is(err, tt.kind) {
			t.Errorf("%v is not %v", err, tt.kind)
		}
	}
}

func TestDownloadBadArguments(t *testing.T) {
	c := &Client{Endpoint: "http://127.0.0.1:1", CacheDir: t.TempDir()}
	tests := []struct{ typ, repo, file, rev, want string }{
		{"modle", "org/m", "f", "", `hub: modle org/m, file f: invalid repo type "modle": want model, dataset or space`},
		{"model", "a/b/c", "f", "", `hub: model a/b/c, file f: invalid repo id "a/b/c": want "name" or "org/name"`},
		{"model", "org/m", "../x", "", `hub: model org/m, file ../x: invalid file name "../x"`},
		{"model", "org/m", "", "", `hub: model org/m, file : empty file name`},
		{"dataset", "org/m", "f", "../../x", `hub: dataset org/m, file f: invalid revision "../../x"`},
	}
	for _, tt := range tests {
		_, err := c.Download(context.Background(), tt.typ, tt.repo, tt.file, tt.rev)
		if err == nil || err.Error() != tt.want {
			t.Errorf("error = %v, want %s", err, tt.want)
		}
	}
}

// cacheFile downloads a small dataset file into a fresh cache and returns
// the client and the path.
func cacheFile(t *testing.T) (*fakeHub, *Client, string) {
	h := newFakeHub(t)
	h.add("/datasets/org/data/resolve/main/f.json", &fakeFile{body: []byte("[]"), commit: commit1, etag: `"d1"`})
	c := testClient(t, h, "")
	p, err := c.Download(context.Background(), "dataset", "org/data", "f.json", "main")
	if err != nil {
		t.Fatal(err)
	}
	return h, c, p
}

func TestDownloadFallsBackToCache(t *testing.T) {
	for _, code := range []int{401, 403, 500, 503} {
		h, c, cached := cacheFile(t)
		h.status["/datasets/org/data/resolve/main/f.json"] = fakeStatus{code: code}
		got, err := c.Download(context.Background(), "dataset", "org/data", "f.json", "main")
		if err != nil || got != cached {
			t.Errorf("status %d: Download = %s, %v; want the cached %s", code, got, err, cached)
		}
	}
	// 404 means the file is gone: no fallback.
	h, c, _ := cacheFile(t)
	h.status["/datasets/org/data/resolve/main/f.json"] = fakeStatus{code: 404, errorCode: "EntryNotFound"}
	if _, err := c.Download(context.Background(), "dataset", "org/data", "f.json", "main"); !errors.Is(err, ErrNotFound) {
		t.Errorf("404 with a cached copy: error %v, want ErrNotFound", err)
	}
}

func TestDownloadUnreachable(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()

	c := &Client{Endpoint: dead.URL, CacheDir: t.TempDir()}
	_, err := c.Download(context.Background(), "dataset", "org/data", "f.json", "main")
	want := "hub: dataset org/data, file f.json: cannot reach " + dead.URL + "/datasets/org/data/resolve/main/f.json: "
	// What to pass instead is the caller's to say (once, naming its flag).
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "instead") {
		t.Fatalf("error = %v, want %s... with no advice", err, want)
	}
	if !errors.Is(err, ErrUnreachable) || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q: not ErrUnreachable, or more than one line", err)
	}

	// With the file cached, the cache answers.
	_, c, cached := cacheFile(t)
	c.Endpoint = dead.URL
	got, err := c.Download(context.Background(), "dataset", "org/data", "f.json", "main")
	if err != nil || got != cached {
		t.Errorf("Download = %s, %v; want the cached %s", got, err, cached)
	}
}

func TestDownloadOffline(t *testing.T) {
	h, online, cached := cacheFile(t)
	before := len(h.requests("", ""))
	off := &Client{Endpoint: h.hub.URL, CacheDir: online.CacheDir, Offline: true}
	got, err := off.Download(context.Background(), "dataset", "org/data", "f.json", "")
	if err != nil || got != cached {
		t.Errorf("offline Download = %s, %v; want %s", got, err, cached)
	}
	got, err = off.Download(context.Background(), "dataset", "org/data", "f.json", commit1)
	if err != nil || got != cached {
		t.Errorf("offline Download at the commit = %s, %v; want %s", got, err, cached)
	}

	_, err = off.Download(context.Background(), "dataset", "org/data", "other.json", "main")
	want := "hub: dataset org/data, file other.json: not in the local cache and HF_HUB_OFFLINE is set"
	if err == nil || err.Error() != want || !errors.Is(err, ErrNotCached) {
		t.Errorf("error = %v, want %s", err, want)
	}
	if after := len(h.requests("", "")); after != before {
		t.Errorf("offline made %d requests", after-before)
	}
}

func TestDownloadDroppedConnection(t *testing.T) {
	noRetries(t)
	h := newFakeHub(t)
	body := lfsBody(1000)
	h.add("/datasets/org/data/resolve/main/big.json", &fakeFile{body: body, commit: commit1, lfs: true, sha: sha1})
	h.drops, h.dropAfter = 1, 300
	c := testClient(t, h, "")
	storage := filepath.Join(c.CacheDir, "datasets--org--data")

	_, err := c.Download(context.Background(), "dataset", "org/data", "big.json", "main")
	want := "hub: dataset org/data, file big.json: download from " + h.cdn.URL + "/blobs/" + sha1 + "?X-Amz-Signature=x broke off after 300 bytes: unexpected EOF"
	if err == nil || err.Error() != want || !errors.Is(err, ErrUnreachable) {
		t.Fatalf("error = %v\nwant %s", err, want)
	}
	for _, p := range []string{filepath.Join(storage, "blobs", sha1), pointerPath(storage, commit1, "big.json")} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists after a failed download", p)
		}
	}
	if fi, err := os.Stat(filepath.Join(storage, "blobs", sha1+".incomplete")); err != nil || fi.Size() != 300 {
		t.Errorf("partial file: %v, %v; want 300 bytes kept for resuming", fi, err)
	}

	got, err := c.Download(context.Background(), "dataset", "org/data", "big.json", "main")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustRead(t, got), body) {
		t.Error("resumed content differs")
	}
	gets := h.requests("cdn", http.MethodGet)
	if len(gets) != 2 || gets[1].rng != "bytes=300-" {
		t.Errorf("CDN GETs = %+v, want the second to resume at 300", gets)
	}
}

func TestDownloadRetriesBrokenBody(t *testing.T) {
	noRetries(t)
	fetchRetries = 2
	h := newFakeHub(t)
	body := lfsBody(1000)
	h.add("/datasets/org/data/resolve/main/big.json", &fakeFile{body: body, commit: commit1, lfs: true, sha: sha1})
	h.drops, h.dropAfter = 2, 100
	c := testClient(t, h, "")
	got, err := c.Download(context.Background(), "dataset", "org/data", "big.json", "main")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustRead(t, got), body) {
		t.Error("content differs")
	}
	var ranges []string
	for _, r := range h.requests("cdn", http.MethodGet) {
		ranges = append(ranges, r.rng)
	}
	if strings.Join(ranges, ",") != ",bytes=100-,bytes=200-" {
		t.Errorf("ranges = %q", ranges)
	}
}

func TestDownloadSizeMismatch(t *testing.T) {
	h := newFakeHub(t)
	h.add("/datasets/org/data/resolve/main/big.json", &fakeFile{body: lfsBody(1000), commit: commit1, lfs: true, sha: sha1, linkedSize: 2000})
	c := testClient(t, h, "")
	_, err := c.Download(context.Background(), "dataset", "org/data", "big.json", "main")
	if err == nil || !strings.HasSuffix(err.Error(), "got 1000 bytes, want 2000 (the size the Hub gave)") {
		t.Fatalf("error = %v", err)
	}
	if exists(filepath.Join(c.CacheDir, "datasets--org--data", "blobs", sha1)) {
		t.Error("blob kept after a size mismatch")
	}
}

func TestDownloadWithoutSymlinks(t *testing.T) {
	old := symlink
	symlink = func(string, string) error { return errors.New("symlinks not supported") }
	t.Cleanup(func() { symlink = old })

	_, c, got := cacheFile(t)
	fi, err := os.Lstat(got)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("snapshot entry %s: %v, %v; want a regular file", got, fi, err)
	}
	if string(mustRead(t, got)) != "[]" {
		t.Errorf("copy holds %q", mustRead(t, got))
	}
	if !exists(filepath.Join(c.CacheDir, "datasets--org--data", "blobs", "d1")) {
		t.Error("blob missing")
	}
}

func TestDownloadConcurrent(t *testing.T) {
	h := newFakeHub(t)
	body := lfsBody(200_000)
	h.add("/datasets/org/data/resolve/main/big.json", &fakeFile{body: body, commit: commit1, lfs: true, sha: sha1})
	c := testClient(t, h, "")
	var wg sync.WaitGroup
	paths := make([]string, 6)
	errs := make([]error, 6)
	for i := range paths {
		wg.Go(func() {
			paths[i], errs[i] = c.Download(context.Background(), "dataset", "org/data", "big.json", "main")
		})
	}
	wg.Wait()
	for i := range paths {
		if errs[i] != nil || paths[i] != paths[0] {
			t.Fatalf("Download %d = %s, %v", i, paths[i], errs[i])
		}
	}
	if !bytes.Equal(mustRead(t, paths[0]), body) {
		t.Error("content differs")
	}
	if n := len(h.requests("cdn", http.MethodGet)); n != 1 {
		t.Errorf("%d GETs, want 1", n)
	}
}

func TestDownloadBadServerHeaders(t *testing.T) {
	h := newFakeHub(t)
	h.add("/org/model/resolve/main/a", &fakeFile{body: []byte("x"), commit: commit1, etag: `"../../evil"`})
	h.add("/org/model/resolve/main/b", &fakeFile{body: []byte("x"), commit: "", etag: `"e"`})
	c := testClient(t, h, "")
	for file, want := range map[string]string{
		"a": `unusable commit "` + commit1 + `" or ETag "../../evil"`,
		"b": "no X-Repo-Commit header in the answer: is this a Hugging Face Hub?",
	} {
		_, err := c.Download(context.Background(), "model", "org/model", file, "main")
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("file %s: error %v, want ...%s", file, err, want)
		}
	}
}
