package cli

import (
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchserve/hub"
	"benchserve/internal/testenv"
)

// fakeServerAt is a fakeServer listening on ip, over TLS or not.
func fakeServerAt(t *testing.T, ip string, useTLS bool, ttft, itl time.Duration) *fakeServer {
	f := &fakeServer{ttft: ttft, itl: itl}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Listener.Close()
	f.srv.Listener = ln
	if useTLS {
		f.srv.StartTLS()
	} else {
		f.srv.Start()
	}
	t.Cleanup(f.srv.Close)
	return f
}

// A run through a real forward proxy (Debian's tinyproxy): plain HTTP in
// absolute form, https by CONNECT, as HTTP_PROXY and HTTPS_PROXY say,
// with every request answered and the proxy named in a note; NO_PROXY
// sends the run direct. (The TTFT against a direct run is in the closing
// figures of docs/metrics.md, measured on a quiet machine: a timing bound
// here would fail on a loaded one.)
func TestThroughTinyproxy(t *testing.T) {
	t.Parallel()
	ip := testenv.HostIP(t)
	proxy := testenv.StartTinyproxy(t)
	for _, useTLS := range []bool{false, true} {
		f := fakeServerAt(t, ip, useTLS, 10*time.Millisecond, time.Millisecond)
		host := strings.TrimPrefix(strings.TrimPrefix(f.srv.URL, "http://"), "https://")
		variable := "HTTP_PROXY"
		if useTLS {
			variable = "HTTPS_PROXY"
		}
		dir := t.TempDir()
		args := func(name string) []string {
			a := []string{"--backend", "vllm", "--base-url", f.srv.URL, "--tokenizer", "o200k_base", "--dataset-name", "random-ids",
				"--num-prompts", "20", "--random-input-len", "16", "--random-output-len", "8", "--max-concurrency", "4",
				"--output-file", filepath.Join(dir, name)}
			if useTLS {
				a = append(a, "--insecure")
			}
			return a
		}
		connects := func() int { return strings.Count(proxy.Log(), `Established connection to host "`+ip+`"`) }

		before := connects()
		code, stdout, stderr := run(t, map[string]string{variable: proxy.URL}, args("proxied.jsonl")...)
		if code != 0 || num(t, readLine(t, filepath.Join(dir, "proxied.jsonl")), "completed") != 20 {
			t.Fatalf("%s: exit %d\n%s\n%s", variable, code, stdout, stderr)
		}
		note := "benchserve: note: requests to " + host + " go through the proxy " + proxy.URL + " (" + variable + "); NO_PROXY=" + ip + " sends them direct\n"
		if stderr != note {
			t.Errorf("%s: stderr %q, want %q", variable, stderr, note)
		}
		// Every generation request crossed the proxy: tinyproxy makes a
		// connection to the server for each connection of ours (at
		// least one per concurrent stream) and passes plain requests on
		// with its Via header.
		if n := connects() - before; n < 4 {
			t.Errorf("%s: the proxy made %d connections to the server, want at least 4", variable, n)
		}
		if !useTLS {
			f.mu.Lock()
			for _, h := range f.headers {
				if !strings.Contains(h.Get("Via"), "tinyproxy") {
					t.Errorf("a request reached the server without the proxy's Via header: %v", h)
					break
				}
			}
			f.mu.Unlock()
		}

		before = connects()
		env := map[string]string{variable: proxy.URL, "NO_PROXY": ip}
		code, stdout, stderr = run(t, env, args("direct.jsonl")...)
		if code != 0 || stderr != "" || num(t, readLine(t, filepath.Join(dir, "direct.jsonl")), "completed") != 20 {
			t.Errorf("NO_PROXY=%s: exit %d\n%s\n%s", ip, code, stdout, stderr)
		}
		if n := connects() - before; n != 0 {
			t.Errorf("NO_PROXY=%s: the proxy still made %d connections", ip, n)
		}
	}
}

// Hub downloads go through the proxy too, as the same variables say.
func TestHubThroughTinyproxy(t *testing.T) {
	ip := testenv.HostIP(t)
	proxy := testenv.StartTinyproxy(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"e1"`)
		w.Header().Set("X-Repo-Commit", strings.Repeat("a", 40))
		w.Write([]byte("{}"))
	}))
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	env := map[string]string{"HF_ENDPOINT": srv.URL, "HF_HUB_CACHE": t.TempDir(), "HTTP_PROXY": proxy.URL}
	hc := hub.FromEnv(func(k string) string { return env[k] })
	if _, err := hc.Download(t.Context(), "model", "org/name", "config.json", "main"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(proxy.Log(), `Established connection to host "`+ip+`"`) {
		t.Errorf("the download did not go through the proxy:\n%s", proxy.Log())
	}
}
