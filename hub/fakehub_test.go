package hub

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeHub answers like the Hub's resolve endpoint. LFS files redirect to a
// second server, the CDN, on another host (127.0.0.2 where it can listen).
type fakeHub struct {
	hub, cdn *httptest.Server

	mu    sync.Mutex
	files map[string]*fakeFile // by escaped resolve path: "/org/name/resolve/main/f.json"
	// status forces an answer for a resolve path: HTTP status and X-Error-Code.
	status map[string]fakeStatus
	// drops is how many GETs to break off after dropAfter bytes.
	drops, dropAfter int
	log              []fakeRequest
}

type fakeFile struct {
	body   []byte
	commit string
	etag   string // the ETag header as sent, quotes and all
	lfs    bool   // HEAD and GET answer 302 to the CDN, with X-Linked-*
	sha    string // the LFS blob's id, sent as X-Linked-Etag
	// linkedSize, if set, is sent as X-Linked-Size instead of the true size.
	linkedSize int
}

type fakeStatus struct {
	code      int
	errorCode string
	location  string // for a redirect
}

type fakeRequest struct {
	server, method, path, auth, rng string
}

func newFakeHub(t *testing.T) *fakeHub {
	return newFakeHubCDN(t, "127.0.0.2:0")
}

// newFakeHubCDN puts the CDN on cdnAddr, falling back to 127.0.0.1 on
// another port (which Go's client treats as the same host for redirects).
func newFakeHubCDN(t *testing.T, cdnAddr string) *fakeHub {
	h := &fakeHub{files: map[string]*fakeFile{}, status: map[string]fakeStatus{}}
	h.hub = httptest.NewServer(http.HandlerFunc(h.serveHub))
	h.cdn = httptest.NewUnstartedServer(http.HandlerFunc(h.serveCDN))
	if ln, err := net.Listen("tcp", cdnAddr); err == nil {
		h.cdn.Listener.Close()
		h.cdn.Listener = ln
	}
	h.cdn.Start()
	t.Cleanup(h.hub.Close)
	t.Cleanup(h.cdn.Close)
	return h
}

func (h *fakeHub) add(path string, f *fakeFile) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.files[path] = f
}

func (h *fakeHub) record(server string, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log = append(h.log, fakeRequest{server, r.Method, r.URL.EscapedPath(), r.Header.Get("Authorization"), r.Header.Get("Range")})
}

// requests returns the requests seen so far that match server and method
// ("" matches any).
func (h *fakeHub) requests(server, method string) []fakeRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []fakeRequest
	for _, r := range h.log {
		if (server == "" || r.server == server) && (method == "" || r.method == method) {
			out = append(out, r)
		}
	}
	return out
}

func (h *fakeHub) serveHub(w http.ResponseWriter, r *http.Request) {
	h.record("hub", r)
	path := r.URL.EscapedPath()
	h.mu.Lock()
	st, forced := h.status[path]
	f := h.files[path]
	h.mu.Unlock()
	if forced {
		if st.errorCode != "" {
			w.Header().Set("X-Error-Code", st.errorCode)
		}
		if st.location != "" {
			w.Header().Set("Location", st.location)
		}
		w.WriteHeader(st.code)
		return
	}
	if f == nil {
		w.Header().Set("X-Error-Code", "EntryNotFound")
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	w.Header().Set("X-Repo-Commit", f.commit)
	if f.lfs {
		w.Header().Set("X-Linked-Etag", `"`+f.sha+`"`)
		size := len(f.body)
		if f.linkedSize != 0 {
			size = f.linkedSize
		}
		w.Header().Set("X-Linked-Size", strconv.Itoa(size))
		w.Header().Set("ETag", `"pointer-file-etag"`)
		http.Redirect(w, r, h.cdn.URL+"/blobs/"+f.sha+"?X-Amz-Signature=x", http.StatusFound)
		return
	}
	w.Header().Set("ETag", f.etag)
	h.serveBody(w, r, f.body)
}

func (h *fakeHub) serveCDN(w http.ResponseWriter, r *http.Request) {
	h.record("cdn", r)
	sha := strings.TrimPrefix(r.URL.Path, "/blobs/")
	h.mu.Lock()
	var body []byte
	for _, f := range h.files {
		if f.lfs && f.sha == sha {
			body = f.body
		}
	}
	h.mu.Unlock()
	if body == nil {
		http.NotFound(w, r)
		return
	}
	h.serveBody(w, r, body)
}

// serveBody serves body with Range support, or breaks the connection off
// part way while drops remain.
func (h *fakeHub) serveBody(w http.ResponseWriter, r *http.Request, body []byte) {
	h.mu.Lock()
	drop := r.Method == http.MethodGet && h.drops > 0
	if drop {
		h.drops--
	}
	after := h.dropAfter
	h.mu.Unlock()
	if !drop {
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
		return
	}
	start := 0
	if v, ok := strings.CutPrefix(r.Header.Get("Range"), "bytes="); ok {
		start, _ = strconv.Atoi(strings.TrimSuffix(v, "-"))
		w.Header().Set("Content-Range", "bytes "+strconv.Itoa(start)+"-"+strconv.Itoa(len(body)-1)+"/"+strconv.Itoa(len(body)))
		w.Header().Set("Content-Length", strconv.Itoa(len(body)-start))
		w.WriteHeader(http.StatusPartialContent)
	} else {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
	}
	w.Write(body[start : start+after])
	w.(http.Flusher).Flush()
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}
