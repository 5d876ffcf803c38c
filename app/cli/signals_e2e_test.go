//go:build unix

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"benchserve/internal/testenv"
)

// A signal pattern as a user or a supervisor sends it.
type signalPattern struct {
	name string
	// via: "" signals the process itself; "INT" and "TERM" run it under
	// coreutils timeout with that signal and make timeout fire.
	via   string
	sigs  []syscall.Signal
	apart time.Duration
}

var signalPatterns = []signalPattern{
	{name: "INT", sigs: []syscall.Signal{syscall.SIGINT}},
	{name: "TERM", sigs: []syscall.Signal{syscall.SIGTERM}},
	{name: "INT+INT-10ms", sigs: []syscall.Signal{syscall.SIGINT, syscall.SIGINT}, apart: 10 * time.Millisecond},
	{name: "timeout-s-INT", via: "INT"},
	{name: "timeout", via: "TERM"},
	{name: "INT,INT-2s", sigs: []syscall.Signal{syscall.SIGINT, syscall.SIGINT}, apart: 2 * time.Second},
}

// A command under test: its command line in dir, when it has made
// progress enough to be signalled, and the check of what it left.
type signalCommand struct {
	name     string
	args     func(base, dir string) []string
	progress func(dir string) bool
	check    func(dir, stdout, stderr string) error
}

// Every signal pattern, sent mid-run to the main command, a sweep and
// one-batch, each in its own process against the simulator in its own
// process, 10 times each, leaves a result: the result line, the sweep's
// finished and interrupted runs, one-batch's finished cases. The signal is
// sent once the run has results on disk (so that a result is due), and
// the runs last far longer than the test waits (so that it lands mid-run).
func TestSignalsKeepResults(t *testing.T) {
	testenv.Slow(t) // 180 runs in processes, each signalled at a moment of the wall clock
	exe := buildBenchserve(t)
	timeoutBin, _ := exec.LookPath("timeout")
	if timeoutBin == "" {
		t.Log("no coreutils timeout on PATH: its patterns are left out")
	}
	const repeats = 10
	type job struct {
		c signalCommand
		p signalPattern
		i int
	}
	// The main command and sweeps share a simulator; each one-batch
	// worker has its own, as one-batch flushes the cache before every
	// case, which a server busy with other runs refuses.
	shared := startSimProcess(t, exe)
	jobs := map[string]chan job{"main": make(chan job, 200), "one-batch": make(chan job, 200)}
	for i := range repeats {
		for _, p := range signalPatterns {
			if p.via != "" && timeoutBin == "" {
				continue
			}
			for _, c := range signalCommands() {
				pool := "main"
				if c.name == "one-batch" {
					pool = "one-batch"
				}
				jobs[pool] <- job{c, p, i}
			}
		}
	}
	var wg sync.WaitGroup
	// A few at a time: the runs mostly wait, but the machine may have two
	// cores shared with other tests.
	work := func(base string, q chan job) {
		for j := range q {
			if err := signalRun(t.TempDir(), exe, base, timeoutBin, j.c, j.p); err != nil {
				t.Errorf("%s, %s, run %d: %v", j.c.name, j.p.name, j.i+1, err)
			}
		}
	}
	for range 6 {
		wg.Go(func() { work(shared, jobs["main"]) })
	}
	for range 3 {
		base := startSimProcess(t, exe)
		wg.Go(func() { work(base, jobs["one-batch"]) })
	}
	for _, q := range jobs {
		close(q)
	}
	wg.Wait()
}

// buildBenchserve builds cmd/benchserve into a temporary directory.
func buildBenchserve(t *testing.T) string {
	t.Helper()
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build benchserve with")
	}
	exe := filepath.Join(t.TempDir(), "benchserve")
	if out, err := exec.Command(gocmd, "build", "-o", exe, "benchserve/cmd/benchserve").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return exe
}

// signalRun runs c, sends p once c has made progress and checks what c
// left in dir.
func signalRun(dir, exe, base, timeoutBin string, c signalCommand, p signalPattern) error {
	// Nothing may hang: a run that has not ended by then is killed and
	// fails.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	argv := append([]string{exe}, c.args(base, dir)...)
	if p.via != "" {
		argv = append([]string{timeoutBin, "-s", p.via, "600"}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Its own process group (timeout makes one too), so that the kill of
	// a hung run reaches every process of it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	exited := func(err error) error {
		return fmt.Errorf("ended before it was signalled (%v)\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	hung := func() error {
		return fmt.Errorf("still running after 90 s, killed\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	for !c.progress(dir) {
		select {
		case err := <-done:
			if ctx.Err() != nil {
				return hung()
			}
			return exited(err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	pid := cmd.Process.Pid
	if p.via != "" {
		// What timeout does when its time is up: it signals the child,
		// then its process group.
		syscall.Kill(pid, syscall.SIGALRM)
	}
	for k, s := range p.sigs {
		if k > 0 {
			select {
			case err := <-done:
				return c.finished(dir, err, &stdout, &stderr, p)
			case <-time.After(p.apart):
			}
		}
		syscall.Kill(pid, s)
	}
	err := <-done
	if ctx.Err() != nil {
		return hung()
	}
	return c.finished(dir, err, &stdout, &stderr, p)
}

// finished checks how the run ended and what it left.
func (c signalCommand) finished(dir string, err error, stdout, stderr *bytes.Buffer, p signalPattern) error {
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return fmt.Errorf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	want := 130
	if p.via != "" {
		want = 124 // timeout's code when its time was up
	}
	if code != want {
		return fmt.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, want, stdout.String(), stderr.String())
	}
	if strings.Contains(stderr.String(), "exiting now") {
		return fmt.Errorf("exited without its result:\n%s", stderr.String())
	}
	if err := c.check(dir, stdout.String(), stderr.String()); err != nil {
		return fmt.Errorf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	return nil
}

func signalCommands() []signalCommand {
	// Output lengths of 1 to 30 tokens at the simulator's 20 ms a token:
	// a request in flight at the signal finishes well within the grace
	// period, and with INT then INT 2 s later some are still in flight
	// at the second only when they started late; either way the result
	// is due.
	common := func(base string) []string {
		return []string{"--base-url", base, "--dataset-name", "random-ids", "--random-input-len", "16",
			"--random-output-len", "30", "--warmup-requests", "0", "--arrival", "constant"}
	}
	records := func(dir string) int { return countLines(filepath.Join(dir, "rec.jsonl")) }
	return []signalCommand{{
		name: "main",
		// 50 s of requests: it is always signalled mid-run.
		args: func(base, dir string) []string {
			return append(common(base), "--num-prompts", "1000", "--request-rate", "20",
				"--output-file", filepath.Join(dir, "out.jsonl"), "--record-file", filepath.Join(dir, "rec.jsonl"))
		},
		progress: func(dir string) bool { return records(dir) > 0 },
		check: func(dir, stdout, _ string) error {
			lines, err := jsonLines(filepath.Join(dir, "out.jsonl"))
			switch {
			case err != nil:
				return err
			case len(lines) != 1:
				return fmt.Errorf("%d result lines, want 1", len(lines))
			case lines[0]["interrupted"] != true:
				return fmt.Errorf("the result line is not marked interrupted")
			case !(jsonNum(lines[0]["completed"]) >= 1):
				return fmt.Errorf("the result line has %v completed, want at least the one recorded before the signal", lines[0]["completed"])
			case !strings.Contains(stdout, "Serving Benchmark Result"):
				return fmt.Errorf("no result block on stdout")
			}
			return nil
		},
	}, {
		name: "sweep",
		// The first run (20 requests at once) finishes; the second (2
		// req/s for 20 s) is signalled once it has records.
		args: func(base, dir string) []string {
			return append([]string{"sweep"}, append(common(base), "--num-prompts", "40", "--request-rate", "1000", "2", "--sweep-pause", "0",
				"--output-file", filepath.Join(dir, "out.jsonl"), "--record-file", filepath.Join(dir, "rec.jsonl"))...)
		},
		progress: func(dir string) bool {
			return countLines(filepath.Join(dir, "out.jsonl")) == 1 && records(dir) > 40
		},
		check: func(dir, stdout, _ string) error {
			lines, err := jsonLines(filepath.Join(dir, "out.jsonl"))
			switch {
			case err != nil:
				return err
			case len(lines) != 2:
				return fmt.Errorf("%d sweep lines, want the finished run's and the interrupted run's", len(lines))
			case lines[0]["interrupted"] != nil || lines[1]["interrupted"] != true:
				return fmt.Errorf("interrupted: %v, %v; want only the second", lines[0]["interrupted"], lines[1]["interrupted"])
			case !strings.Contains(stdout, "(interrupted)"):
				return fmt.Errorf("the table does not show the interrupted run")
			}
			return nil
		},
	}, {
		name: "one-batch",
		// 40 cases of about 0.6 s each.
		args: func(base, dir string) []string {
			var sizes []string
			for bs := range 40 {
				sizes = append(sizes, fmt.Sprint(bs+1))
			}
			return append([]string{"one-batch", "--base-url", base, "--dataset-name", "random-ids", "--input-len", "16",
				"--output-len", "30", "--skip-warmup", "--result-filename", filepath.Join(dir, "out.jsonl"), "--batch-size"}, sizes...)
		},
		progress: func(dir string) bool { return countLines(filepath.Join(dir, "out.jsonl")) > 0 },
		check: func(dir, stdout, stderr string) error {
			n := countLines(filepath.Join(dir, "out.jsonl"))
			out := filepath.Join(dir, "out.jsonl")
			said := "the row of the case that finished is in " + out
			if n > 1 {
				said = fmt.Sprintf("the rows of the %d cases that finished are in %s", n, out)
			}
			switch {
			case !strings.Contains(stderr, said):
				return fmt.Errorf("%d rows, and stderr does not say %q", n, said)
			case !strings.Contains(stdout, "Results are saved to "+out):
				return fmt.Errorf("stdout does not say where the results are")
			}
			return nil
		},
	}}
}

// startSimProcess starts "benchserve sim" in its own process and returns
// its URL once it answers.
func startSimProcess(t *testing.T, exe string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(exe, "sim", "--port", fmt.Sprint(port), "--decode-base-ms", "20", "--decode-per-request-ms", "0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for range 600 {
		if resp, err := http.Get(base + "/v1/models"); err == nil {
			resp.Body.Close()
			return base
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the simulator did not answer in 30 s:\n%s", out.String())
	return ""
}

// jsonNum is a JSON number, NaN when it is not one.
func jsonNum(v any) float64 {
	if f, ok := v.(float64); ok {
		return f
	}
	return math.NaN()
}

func countLines(path string) int {
	data, _ := os.ReadFile(path)
	return bytes.Count(data, []byte("\n"))
}

// jsonLines reads a JSONL file; Infinity (Python's) reads as a number.
func jsonLines(path string) ([]map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(strings.ReplaceAll(l, "Infinity", "1e308")), &m); err != nil {
			return nil, fmt.Errorf("not JSON: %v\n%s", err, l)
		}
		out = append(out, m)
	}
	return out, nil
}
