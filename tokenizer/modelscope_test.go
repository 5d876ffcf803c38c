package tokenizer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

// fakeModelScope answers ModelScope's file list and file download for
// one repo.
type fakeModelScope struct {
	*httptest.Server
	repo string

	mu      sync.Mutex
	files   map[string]string // path → body
	badSha  bool              // list a wrong SHA-256
	listErr int               // HTTP status for the list
	log     []string
	ranges  []string // the Range header of each file download
	// drops file downloads are cut off after dropAfter bytes.
	drops, dropAfter int
}

func newFakeModelScope(t *testing.T, repo string, files map[string]string) *fakeModelScope {
	m := &fakeModelScope{repo: repo, files: files}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

func (m *fakeModelScope) serve(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.log = append(m.log, r.URL.Path+"?"+r.URL.RawQuery)
	base := "/api/v1/models/" + m.repo + "/repo"
	q := r.URL.Query()
	switch {
	case r.URL.Path == base+"/files" && q.Get("Revision") == "master" && q.Get("Recursive") == "true":
		if m.listErr != 0 {
			w.WriteHeader(m.listErr)
			json.NewEncoder(w).Encode(map[string]any{"Code": m.listErr, "Message": "model not found"})
			return
		}
		var files []map[string]any
		files = append(files, map[string]any{"Name": "sub", "Path": "sub", "Type": "tree", "Size": 0, "Revision": "c0ffee"})
		for p, body := range m.files {
			sum := sha256.Sum256([]byte(body))
			sha := hex.EncodeToString(sum[:])
			if m.badSha {
				sha = strings.Repeat("0", 64)
			}
			files = append(files, map[string]any{"Name": filepath.Base(p), "Path": p, "Type": "blob", "Size": len(body), "Sha256": sha, "Revision": "c0ffee"})
		}
		json.NewEncoder(w).Encode(map[string]any{"Code": 200, "Data": map[string]any{"Files": files}, "Success": true})
	case r.URL.Path == base && q.Get("Revision") == "master":
		body, ok := m.files[q.Get("FilePath")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		m.ranges = append(m.ranges, r.Header.Get("Range"))
		if m.drops > 0 {
			m.drops--
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write([]byte(body[:m.dropAfter]))
			w.(http.Flusher).Flush()
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(body))
	default:
		http.NotFound(w, r)
	}
}

func (m *fakeModelScope) requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.log...)
}

func msEnv(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestResolveModelScope(t *testing.T) {
	parses := useFakeEngine(t)
	ms := newFakeModelScope(t, "org/Qwen2.5-x", map[string]string{
		"tokenizer.json":        fakeTokenizerJSON,
		"tokenizer_config.json": `{"eos_token": "</s>", "chat_template": "ms{{ eos_token }}"}`,
	})
	cache := t.TempDir()
	env := map[string]string{"SGLANG_USE_MODELSCOPE": "true", "MODELSCOPE_DOMAIN": ms.URL, "MODELSCOPE_CACHE": cache}
	p := mustResolve(t, "org/Qwen2.5-x", ResolveOptions{Getenv: msEnv(env)})
	if out, err := p.ApplyChatTemplate(nil, ChatOptions{}); out != "ms</s>" || err != nil {
		t.Errorf("template %q, %v", out, err)
	}
	// The library's layout: models/<org>/<name, '.' → '___'>/<file>.
	dir := filepath.Join(cache, "models", "org", "Qwen2___5-x")
	for _, f := range []string{"tokenizer.json", "tokenizer_config.json"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || string(b) != ms.files[f] {
			t.Errorf("cache file %s: %q, %v", f, b, err)
		}
	}
	reqs := ms.requests()
	if len(reqs) != 3 || !strings.HasPrefix(reqs[0], "/api/v1/models/org/Qwen2.5-x/repo/files?Revision=master&Recursive=true") ||
		!strings.Contains(reqs[1], "/api/v1/models/org/Qwen2.5-x/repo?FilePath=tokenizer.json&Revision=master") {
		t.Errorf("requests %v", reqs)
	}

	// A new process (here: another cache key) finds the files by their
	// SHA-256 and only lists.
	resolved.mu.Lock()
	clear(resolved.m)
	resolved.mu.Unlock()
	if again := mustResolve(t, "org/Qwen2.5-x", ResolveOptions{Getenv: msEnv(env)}); again == p {
		t.Fatal("cache not cleared")
	}
	if n := len(ms.requests()); n != 4 {
		t.Errorf("%d requests after the second load, want 4 (one more list)", n)
	}

	// Offline: from the cache, no requests at all.
	env["HF_HUB_OFFLINE"] = "1"
	off := mustResolve(t, "org/Qwen2.5-x", ResolveOptions{Getenv: msEnv(env)})
	if off.EOSToken() != "</s>" || len(ms.requests()) != 4 || parses.Load() != 3 {
		t.Errorf("offline: EOS %q, %d requests, %d parses", off.EOSToken(), len(ms.requests()), parses.Load())
	}
}

// A download that breaks off keeps its bytes in the library's temporary
// folder, and the next load resumes it.
func TestResolveModelScopeResumes(t *testing.T) {
	useFakeEngine(t)
	ms := newFakeModelScope(t, "org/m", map[string]string{"tokenizer.json": fakeTokenizerJSON})
	ms.drops, ms.dropAfter = 1, 10
	cache := t.TempDir()
	env := msEnv(map[string]string{"SGLANG_USE_MODELSCOPE": "1", "MODELSCOPE_DOMAIN": ms.URL, "MODELSCOPE_CACHE": cache})
	_, err := Resolve(context.Background(), "org/m", ResolveOptions{Getenv: env})
	u := ms.URL + "/api/v1/models/org/m/repo?FilePath=tokenizer.json&Revision=master"
	if want := "tokenizer org/m: ModelScope: file tokenizer.json: GET " + u + ": unexpected EOF"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
	partial := filepath.Join(cache, "models", "._____temp", "org", "m", "tokenizer.json")
	if fi, err := os.Stat(partial); err != nil || fi.Size() != 10 {
		t.Fatalf("partial file %v, %v; want 10 bytes kept", fi, err)
	}
	if _, err := os.Stat(filepath.Join(cache, "models", "org", "m", "tokenizer.json")); err == nil {
		t.Fatal("a broken download is in the cache")
	}
	mustResolve(t, "org/m", ResolveOptions{Getenv: env})
	if b, err := os.ReadFile(filepath.Join(cache, "models", "org", "m", "tokenizer.json")); err != nil || string(b) != fakeTokenizerJSON {
		t.Errorf("cache file %q, %v", b, err)
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if len(ms.ranges) != 2 || ms.ranges[1] != "bytes=10-" {
		t.Errorf("file requests with ranges %q, want the second to resume at 10", ms.ranges)
	}
	if _, err := os.Stat(partial); err == nil {
		t.Error("partial file kept after success")
	}
}

func TestResolveModelScopeErrors(t *testing.T) {
	useFakeEngine(t)
	good := map[string]string{"tokenizer.json": fakeTokenizerJSON}
	corrupt := newFakeModelScope(t, "org/corrupt", good)
	corrupt.badSha = true
	missing := newFakeModelScope(t, "org/gone", good)
	missing.listErr = http.StatusNotFound
	spm := newFakeModelScope(t, "org/spm", map[string]string{"tokenizer.model": "x"})
	for _, tt := range []struct {
		repo, url, offline string
		want               []string
	}{
		{"org/corrupt", corrupt.URL, "", []string{"tokenizer org/corrupt", "ModelScope", "file tokenizer.json", "SHA-256"}},
		{"org/gone", missing.URL, "", []string{"ModelScope", "404", "no such model", "model not found"}},
		{"org/spm", spm.URL, "", []string{"ModelScope", "has no tokenizer.json"}},
		{"org/offline", spm.URL, "1", []string{"ModelScope", "tokenizer.json is not in the cache", "HF_HUB_OFFLINE"}},
		{"noorg", spm.URL, "", []string{"org/name"}},
		{"org/down", "http://127.0.0.1:1", "", []string{"ModelScope", "cannot reach"}},
	} {
		cache := t.TempDir()
		env := msEnv(map[string]string{"SGLANG_USE_MODELSCOPE": "True", "MODELSCOPE_DOMAIN": tt.url,
			"MODELSCOPE_CACHE": cache, "HF_HUB_OFFLINE": tt.offline})
		_, err := Resolve(context.Background(), tt.repo, ResolveOptions{Getenv: env})
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to contain %q", tt.repo, err, w)
			}
		}
		// Nothing is left where the library would read it, nor a corrupt
		// file to resume.
		if _, err := os.Stat(filepath.Join(cache, "models", tt.repo, "tokenizer.json")); err == nil {
			t.Errorf("%s: a bad download was kept in the cache", tt.repo)
		}
		if _, err := os.Stat(filepath.Join(cache, "models", "._____temp", tt.repo, "tokenizer.json")); err == nil {
			t.Errorf("%s: a bad download was kept in the temporary folder", tt.repo)
		}
	}
}

func TestModelScopeEndpoint(t *testing.T) {
	for domain, want := range map[string]string{
		"":                       "https://www.modelscope.cn",
		"modelscope.cn":          "https://modelscope.cn",
		"http://127.0.0.1:8080/": "http://127.0.0.1:8080",
	} {
		ms := newModelScope(ResolveOptions{Getenv: msEnv(map[string]string{"MODELSCOPE_DOMAIN": domain, "HOME": "/h"})})
		if ms.endpoint != want || ms.cacheDir != filepath.FromSlash("/h/.cache/modelscope/hub/models") {
			t.Errorf("MODELSCOPE_DOMAIN=%q: endpoint %q cache %q", domain, ms.endpoint, ms.cacheDir)
		}
	}
}
