package serverctl

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"benchserve/backend"
)

// The client creates --profile-output-dir/<time> as the reference does,
// and removes what it created when nothing was written there: when the
// start failed, or when the server (elsewhere) wrote its traces on its own
// disk. A directory with a trace in it stays.
func TestProfileLeavesNoEmptyDirectories(t *testing.T) {
	cases := []struct {
		name      string
		start     int  // /start_profile's status
		write     bool // the server writes a trace into output_dir
		steps     bool // --profile-steps: the server stops on its own
		wantKept  bool
		wantStart bool
	}{
		{name: "start fails", start: 500},
		{name: "remote server", start: 200, wantStart: true},
		{name: "trace written", start: 200, write: true, wantKept: true, wantStart: true},
		{name: "server stops itself", start: 200, steps: true, wantKept: true, wantStart: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var outputDir string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var body struct {
					OutputDir string `json:"output_dir"`
				}
				json.NewDecoder(r.Body).Decode(&body)
				if r.URL.Path == "/start_profile" {
					mu.Lock()
					outputDir = body.OutputDir
					mu.Unlock()
					if c.write {
						os.WriteFile(filepath.Join(body.OutputDir, "trace.json.gz"), []byte("x"), 0o644)
					}
					w.WriteHeader(c.start)
				}
			}))
			defer srv.Close()
			root := t.TempDir()
			dir := filepath.Join(root, "new", "deeper")
			opt := ProfileOptions{Profile: true, Activities: []string{"CPU"}, OutputDir: dir}
			if c.steps {
				n := 3
				opt.Steps = &n
			}
			p := NewProfiler(&Server{Base: srv.URL, HTTP: backend.NewHTTPClient(backend.ClientOptions{})}, opt, io.Discard)
			p.Start(context.Background())
			mu.Lock()
			defer mu.Unlock()
			if p.started != c.wantStart || outputDir == "" {
				t.Fatalf("started %v (output_dir %q), want %v", p.started, outputDir, c.wantStart)
			}
			p.Stop(context.Background())
			p.Cleanup()
			_, err := os.Stat(outputDir)
			if kept := err == nil; kept != c.wantKept {
				t.Errorf("output dir kept %v, want %v", kept, c.wantKept)
			}
			if _, err := os.Stat(filepath.Join(root, "new")); (err == nil) != c.wantKept {
				t.Errorf("the parent the client created: %v, want kept %v", err, c.wantKept)
			}
			if _, err := os.Stat(root); err != nil {
				t.Errorf("a directory that was there before is gone: %v", err)
			}
		})
	}
}
