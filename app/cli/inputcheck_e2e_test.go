package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// notReady is a server that answers every request 503, so that a
// readiness wait would go on until its timeout; it counts the requests.
func notReady(t *testing.T) (url string, requests *atomic.Int64) {
	t.Helper()
	requests = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, requests
}

// The user's files and JSON are checked before the server is contacted:
// one line naming the flag, at once, though the server would make a
// readiness wait last 10 minutes.
func TestInputCheckedBeforeTheServer(t *testing.T) {
	dir := t.TempDir()
	missingDir := filepath.Join(dir, "no-such-dir")
	unreadable := filepath.Join(dir, "unreadable.json")
	os.WriteFile(unreadable, []byte("[]"), 0o000)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"missing dataset", []string{"--dataset-path", filepath.Join(dir, "nonexistent.json")}, "--dataset-path " + filepath.Join(dir, "nonexistent.json") + ": no such file"},
		{"dataset a directory", []string{"--dataset-name", "random", "--dataset-path", dir}, "--dataset-path " + dir + ": is a directory"},
		{"custom dataset missing", []string{"--dataset-name", "custom", "--dataset-path", filepath.Join(dir, "c.jsonl")}, "--dataset-path " + filepath.Join(dir, "c.jsonl") + ": no such file"},
		{"output file", []string{"--dataset-name", "random-ids", "--output-file", filepath.Join(missingDir, "r.jsonl")}, "--output-file: "},
		{"record file", []string{"--dataset-name", "random-ids", "--record-file", filepath.Join(missingDir, "rec.jsonl")}, "--record-file: open " + filepath.Join(missingDir, "rec.jsonl") + ": no such file or directory"},
		{"extra body", []string{"--dataset-name", "random-ids", "--extra-request-body", `{"a": `}, "--extra-request-body"},
		{"sweep, missing dataset", []string{"sweep", "--request-rate", "1", "2", "--dataset-path", filepath.Join(dir, "nonexistent.json")}, "--dataset-path " + filepath.Join(dir, "nonexistent.json") + ": no such file"},
		{"sweep, record file", []string{"sweep", "--request-rate", "1", "2", "--dataset-name", "random-ids", "--record-file", filepath.Join(missingDir, "rec.jsonl")}, "--record-file: "},
	}
	if os.Geteuid() != 0 { // root reads it anyway
		cases = append(cases, struct {
			name string
			args []string
			want string
		}{"unreadable dataset", []string{"--dataset-path", unreadable}, "--dataset-path " + unreadable + ": permission denied"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url, requests := notReady(t)
			args := c.args
			if args[0] == "sweep" {
				args = append([]string{"sweep", "--base-url", url, "--ready-check-timeout-sec", "600"}, args[1:]...)
			} else {
				args = append([]string{"--base-url", url, "--ready-check-timeout-sec", "600", "--output-file", filepath.Join(dir, "ok.jsonl")}, args...)
			}
			code, stdout, stderr := runBounded(t, args...)
			if code == 0 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want one line with %q\n%s", code, stderr, c.want, stdout)
			}
			if n := requests.Load(); n != 0 {
				t.Errorf("the server had %d requests before the bad input was found", n)
			}
		})
	}
}

// one-batch checks its files before it contacts the server.
func TestOneBatchInputCheckedBeforeTheServer(t *testing.T) {
	dir := t.TempDir()
	missingDir := filepath.Join(dir, "no-such-dir")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"result file", []string{"--result-filename", filepath.Join(missingDir, "r.jsonl")}, "--result-filename: open " + filepath.Join(missingDir, "r.jsonl") + ": no such file or directory"},
		{"pydantic file", []string{"--pydantic-result-filename", filepath.Join(missingDir, "p.json")}, "--pydantic-result-filename: open "},
		{"missing dataset", []string{"--dataset-name", "sharegpt", "--dataset-path", filepath.Join(dir, "nonexistent.json")}, "--dataset-path " + filepath.Join(dir, "nonexistent.json") + ": no such file"},
		{"random's corpus missing", []string{"--dataset-name", "random", "--dataset-path", filepath.Join(dir, "nonexistent.json")}, "--dataset-path " + filepath.Join(dir, "nonexistent.json") + ": no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			url, requests := notReady(t)
			args := append([]string{"one-batch", "--base-url", url, "--result-filename", filepath.Join(dir, "ok.jsonl")}, c.args...)
			code, stdout, stderr := runBounded(t, args...)
			if code == 0 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want one line with %q\n%s", code, stderr, c.want, stdout)
			}
			if strings.Contains(stdout, "Results are saved to") {
				t.Errorf("says results were saved:\n%s", stdout)
			}
			if n := requests.Load(); n != 0 {
				t.Errorf("the server had %d requests before the bad input was found", n)
			}
		})
	}
}

// one-batch says where its results are only when it saved some.
func TestOneBatchSavedOnlyWhenSaved(t *testing.T) {
	s := handlerSim(t)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/generate" {
			http.Error(w, "no", http.StatusInternalServerError)
			return
		}
		s.Handler().ServeHTTP(w, r)
	}))
	defer failing.Close()
	working := httptest.NewServer(s.Handler())
	defer working.Close()
	out := filepath.Join(t.TempDir(), "r.jsonl")
	for _, c := range []struct {
		name, url, file string
		saved           bool
	}{
		{"the first case fails", failing.URL, out, false},
		{"no result file", working.URL, "", false},
		{"saved", working.URL, out, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, stdout, stderr := runBounded(t, "one-batch", "--base-url", c.url, "--batch-size", "2", "--input-len", "8", "--output-len", "2",
				"--dataset-name", "random-ids", "--skip-warmup", "--result-filename", c.file)
			if got := strings.Contains(stdout, "Results are saved to "+c.file+"\n"); got != c.saved {
				t.Errorf("says it saved: %v, want %v\n%s\n%s", got, c.saved, stdout, stderr)
			}
		})
	}
}

// runBounded runs the command line in-process; one that would wait for
// the server fails at the deadline instead of hanging.
func runBounded(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	code := Main(ctx, args, IO{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	if ctx.Err() != nil {
		t.Fatalf("still waiting after 30 s: %v\n%s\n%s", args, out.String(), errb.String())
	}
	return code, out.String(), errb.String()
}
