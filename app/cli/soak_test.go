package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchserve/internal/testenv"
)

// soakRequests is the soak's size; BENCHSERVE_SOAK_REQUESTS changes it
// (docs/performance.md runs 100,000), and BENCHSERVE_SOAK_OUTPUT_LEN the
// tokens per request (8).
func soakRequests(t *testing.T) int {
	n := 20000
	if v := os.Getenv("BENCHSERVE_SOAK_REQUESTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("BENCHSERVE_SOAK_REQUESTS=%q: not a positive integer", v)
		}
	}
	return n
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count open files: %v", err)
	}
	return len(ents)
}

// procStatus reads a "kB" figure of /proc/self/status (VmHWM: peak RSS).
func procStatus(key string) int {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}

// settle waits until the goroutines and open files are down to at most g
// and fd (connections and their goroutines close a moment after the
// server), or, with g < 0, until they stop changing; at most 10 s. It
// returns the last counts.
func settle(t *testing.T, g, fd int) (int, int) {
	lastG, lastFD, same := -1, -1, 0
	for deadline := time.Now().Add(10 * time.Second); ; {
		runtime.GC()
		gs, fds := runtime.NumGoroutine(), openFDs(t)
		if gs == lastG && fds == lastFD {
			same++
		} else {
			same = 0
		}
		lastG, lastFD = gs, fds
		if g >= 0 && gs <= g && fds <= fd || g < 0 && same >= 5 || time.Now().After(deadline) {
			return gs, fds
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// soakRun runs n requests at concurrency 256 against a fresh simulator,
// then closes it.
func soakRun(t *testing.T, n int) time.Duration {
	t.Helper()
	s, base := newFaultSim(t)
	out := filepath.Join(t.TempDir(), "soak.jsonl")
	st := time.Now()
	outLen := "8"
	if v := os.Getenv("BENCHSERVE_SOAK_OUTPUT_LEN"); v != "" {
		outLen = v
	}
	code, stdout, stderr := run(t, nil, "--backend", "vllm", "--base-url", base, "--dataset-name", "random-ids",
		"--random-input-len", "16", "--random-output-len", outLen, "--random-range-ratio", "1", "--num-prompts", strconv.Itoa(n),
		"--max-concurrency", "256", "--warmup-requests", "0", "--output-file", out)
	took := time.Since(st)
	s.Close()
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if m := readLine(t, out); num(t, m, "completed") != float64(n) {
		t.Fatalf("completed %v of %d", m["completed"], n)
	}
	return took
}

// TestSoak sends many requests through the whole client (instant preset,
// concurrency 256) and checks that it leaks nothing: once the run is over
// and the server gone, the goroutines and open file descriptors are back
// to what they were before it. A first small run starts whatever the
// process keeps for good.
func TestSoak(t *testing.T) {
	testenv.Slow(t) // the soak takes a few seconds
	n := soakRequests(t)
	soakRun(t, 200)
	g0, fd0 := settle(t, -1, 0)
	took := soakRun(t, n)
	g1, fd1 := settle(t, g0, fd0)
	t.Logf("%d requests in %v (%.0f req/s); goroutines %d -> %d, open files %d -> %d; peak RSS of the process (client and simulator) %d MiB",
		n, took.Round(time.Millisecond), float64(n)/took.Seconds(), g0, g1, fd0, fd1, procStatus("VmHWM")>>10)
	if g1 > g0 || fd1 > fd0 {
		var stacks bytes.Buffer
		pprof.Lookup("goroutine").WriteTo(&stacks, 1) //nolint:errcheck
		t.Errorf("after %d requests: %d goroutines (before: %d), %d open files (before: %d)\n%s", n, g1, g0, fd1, fd0, stacks.String())
	}
}
