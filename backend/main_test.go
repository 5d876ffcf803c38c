package backend

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"benchserve/record"
)

// TestMain runs the package's tests twice on Linux: through the event loop
// (plain HTTP's path there), then again in a child process through Go's
// poller (https's path, and every system's without the loop).
func TestMain(m *testing.M) {
	code := m.Run()
	if code != 0 || os.Getenv("BENCHSERVE_RECEIVE") != "" || !eventsOn() || !plainRun() {
		os.Exit(code)
	}
	// Under `go test -exec W` (another architecture's binary run by
	// qemu), BENCHSERVE_TEST_EXEC=W runs the child the same way.
	args := os.Args
	if w := os.Getenv("BENCHSERVE_TEST_EXEC"); w != "" {
		args = append([]string{w}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "BENCHSERVE_RECEIVE=poller")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if _, ran := err.(*exec.ExitError); !ran {
			fmt.Fprintf(os.Stderr, "backend: the poller run could not start: %v (under go test -exec, set BENCHSERVE_TEST_EXEC to the same program)\n", err)
		}
		os.Exit(1)
	}
	os.Exit(0)
}

// plainRun reports a run of tests, not a fuzzing session or a listing.
func plainRun() bool {
	for _, name := range []string{"test.fuzz", "test.fuzzworker", "test.list"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" && f.Value.String() != "false" {
			return false
		}
	}
	return true
}

// Plain HTTP goes through the event loop on Linux, unless
// BENCHSERVE_RECEIVE=poller: the kept connection is one of its sockets.
func TestEventLoopCarriesPlainHTTP(t *testing.T) {
	srv, _ := countingServer(t, nil)
	c, _ := New("vllm", srv.URL, Options{Stream: true}, nil, NewHTTPClient(ClientOptions{KeepAlive: true}))
	rec := &record.Record{}
	c.Do(context.Background(), &Input{Text: "x", OutputLen: 8}, rec, time.Now())
	if !rec.Success {
		t.Fatal(rec.Error)
	}
	tr := c.http.Transport.(*transport)
	tr.mu.Lock()
	socks, conns := len(tr.idleSocks[c.url[:len(srv.URL)]]), len(tr.idle)
	tr.mu.Unlock()
	wantLoop := runtime.GOOS == "linux" && os.Getenv("BENCHSERVE_RECEIVE") != "poller"
	if wantLoop && (socks != 1 || conns != 0) {
		t.Errorf("event loop: %d kept sockets and %d kept connections, want 1 and 0", socks, conns)
	}
	if !wantLoop && socks != 0 {
		t.Errorf("Go's poller: %d kept event-loop sockets, want 0", socks)
	}
}
