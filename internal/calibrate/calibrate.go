// Package calibrate measures benchserve's own error: it runs the simulator
// and the client as separate processes, side by side, and compares what the
// client reports with what the simulator recorded doing.
package calibrate

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"benchserve/metrics"
)

// Options are the calibration's settings.
type Options struct {
	// Exe is the benchserve binary to run as simulator and client.
	Exe string
	// Backend is the client's --backend.
	Backend string
	// TTFT and ITL are the simulator's prefill and decode step times;
	// OutputLen the tokens per request.
	TTFT, ITL   time.Duration
	OutputLen   int
	Concurrency []int
	// PerStream is how many requests each concurrency slot sends in turn.
	PerStream int
	// Throughput run: requests, concurrency and output length against the
	// instant preset; Requests 0 skips it.
	ThroughputRequests, ThroughputConcurrency, ThroughputOutputLen int
	// Dir holds the result files (a temporary directory if "").
	Dir string
	Out io.Writer
}

// Point is one concurrency level's outcome: what the client reported, what
// the simulator did, and the client's cost.
type Point struct {
	Concurrency, Requests int
	Reported, True        struct{ TTFT, ITL metrics.Stats }
	PeakRSSMB, CPUSeconds float64
}

// Throughput is the throughput run's outcome.
type Throughput struct {
	Requests, Concurrency, OutputLen int
	TokensPerSec, CPUMicrosPerToken  float64
	PeakRSSMB                        float64
}

// Run runs the matrix and the throughput run, printing a Markdown report.
func Run(ctx context.Context, o Options) error {
	if o.Dir == "" {
		d, err := os.MkdirTemp("", "benchserve-calibrate-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		o.Dir = d
	}
	fmt.Fprintf(o.Out, "benchserve calibrate: the client (%s backend) against the simulator in a second process\n", o.Backend)
	fmt.Fprintf(o.Out, "machine: %d CPUs, %s/%s, %s\n\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())

	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', -1, 64) }
	sim, err := startSim(ctx, o.Exe, "--preset", "h100-llama3-8b",
		"--prefill-overhead-ms", ms(o.TTFT), "--prefill-tokens-per-sec", "1e15",
		"--decode-base-ms", ms(o.ITL), "--decode-per-request-ms", "0",
		"--max-running-requests", "1000000", "--max-total-tokens", "1000000000000",
		"--max-prefill-tokens", "1000000000000", "--eos-probability", "0", "--truth-capacity", "1000000")
	if err != nil {
		return err
	}
	var points []Point
	for _, c := range o.Concurrency {
		p, err := point(ctx, o, sim, c)
		if err != nil {
			sim.stop()
			return err
		}
		points = append(points, p)
	}
	sim.stop()
	fmt.Fprintf(o.Out, "Server: TTFT %v, ITL %v, %d tokens per request, one token per chunk. Errors are reported − true, in ms.\n\n", o.TTFT, o.ITL, o.OutputLen)
	writeMatrix(o.Out, points)

	if o.ThroughputRequests <= 0 {
		return nil
	}
	sim, err = startSim(ctx, o.Exe, "--preset", "instant", "--eos-probability", "0", "--truth-capacity", "1000")
	if err != nil {
		return err
	}
	defer sim.stop()
	t, err := throughput(ctx, o, sim)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "\nThroughput (instant preset, %d requests, concurrency %d, %d output tokens):\n\n", t.Requests, t.Concurrency, t.OutputLen)
	fmt.Fprintf(o.Out, "| output tokens/s | client CPU µs per token | client peak RSS (MB) |\n|---:|---:|---:|\n")
	fmt.Fprintf(o.Out, "| %.0f | %.3f | %.1f |\n", t.TokensPerSec, t.CPUMicrosPerToken, t.PeakRSSMB)
	return nil
}

func point(ctx context.Context, o Options, sim *simProc, c int) (Point, error) {
	p := Point{Concurrency: c, Requests: max(c*o.PerStream, 10)}
	if err := sim.post("/sim/truth/reset"); err != nil {
		return p, err
	}
	res, ru, err := client(ctx, o, sim.url, filepath.Join(o.Dir, fmt.Sprintf("c%d.jsonl", c)),
		"--num-prompts", strconv.Itoa(p.Requests), "--max-concurrency", strconv.Itoa(c),
		"--random-output-len", strconv.Itoa(o.OutputLen))
	if err != nil {
		return p, fmt.Errorf("concurrency %d: %w", c, err)
	}
	p.Reported.TTFT = stats(res, "ttft")
	p.Reported.ITL = stats(res, "itl")
	p.PeakRSSMB = float64(ru.Maxrss) / 1024
	p.CPUSeconds = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	ttft, itl, err := sim.truth()
	if err != nil {
		return p, err
	}
	p.True.TTFT, p.True.ITL = metrics.Describe(ttft), metrics.Describe(itl)
	fmt.Fprintf(os.Stderr, "calibrate: concurrency %d done (%d requests)\n", c, p.Requests)
	return p, nil
}

func throughput(ctx context.Context, o Options, sim *simProc) (Throughput, error) {
	t := Throughput{Requests: o.ThroughputRequests, Concurrency: o.ThroughputConcurrency, OutputLen: o.ThroughputOutputLen}
	res, ru, err := client(ctx, o, sim.url, filepath.Join(o.Dir, "throughput.jsonl"),
		"--num-prompts", strconv.Itoa(t.Requests), "--max-concurrency", strconv.Itoa(t.Concurrency),
		"--random-output-len", strconv.Itoa(t.OutputLen))
	if err != nil {
		return t, fmt.Errorf("throughput run: %w", err)
	}
	t.TokensPerSec, _ = res["output_throughput"].(float64)
	t.CPUMicrosPerToken, _ = res["client_cpu_us_per_output_token"].(float64)
	t.PeakRSSMB = float64(ru.Maxrss) / 1024
	return t, nil
}

// client runs one benchserve process against url and returns its result
// line and resource usage.
func client(ctx context.Context, o Options, url, out string, extra ...string) (map[string]any, *syscall.Rusage, error) {
	args := append([]string{"--backend", o.Backend, "--base-url", url, "--dataset-name", "random-ids",
		"--random-input-len", "128", "--random-range-ratio", "1", "--warmup-requests", "0",
		"--disable-tqdm", "--output-file", out}, extra...)
	cmd := exec.CommandContext(ctx, o.Exe, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("%s %s: %v: %s", o.Exe, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if ru == nil {
		ru = &syscall.Rusage{}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, nil, err
	}
	// The result line writes an infinite rate as Infinity, which
	// encoding/json does not take; the rate is not needed here.
	line := strings.ReplaceAll(strings.TrimSpace(string(data)), "Infinity", "null")
	var res map[string]any
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		return nil, nil, fmt.Errorf("result %s: %v", out, err)
	}
	return res, ru, nil
}

func stats(res map[string]any, name string) metrics.Stats {
	f := func(k string) float64 { v, _ := res[k+"_"+name+"_ms"].(float64); return v }
	return metrics.Stats{Mean: f("mean"), Median: f("median"), P99: f("p99")}
}

// simProc is a simulator running as a child process.
type simProc struct {
	cmd *exec.Cmd
	url string
}

func startSim(ctx context.Context, exe string, args ...string) (*simProc, error) {
	args = append([]string{"sim", "--host", "127.0.0.1", "--port", "0"}, args...)
	cmd := exec.CommandContext(ctx, exe, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	i := strings.Index(line, "http://")
	if err != nil || i < 0 {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("the simulator did not start (%s %s): %q", exe, strings.Join(args, " "), line)
	}
	u := line[i:]
	if j := strings.IndexAny(u, "; \n"); j >= 0 {
		u = u[:j]
	}
	go io.Copy(io.Discard, out)
	return &simProc{cmd: cmd, url: u}, nil
}

func (s *simProc) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

func (s *simProc) post(path string) error {
	resp, err := http.Post(s.url+path, "application/json", nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s", path, resp.Status)
	}
	return nil
}

// truth returns the simulator's TTFTs and gaps between chunks, in seconds.
func (s *simProc) truth() (ttft, itl []float64, err error) {
	resp, err := http.Get(s.url + "/sim/truth")
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	var doc struct {
		Requests []struct {
			TTFT   *float64     `json:"ttft"`
			Chunks [][3]float64 `json:"chunks"`
			Error  string       `json:"error"`
		} `json:"requests"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return nil, nil, fmt.Errorf("/sim/truth: %v", err)
	}
	for _, r := range doc.Requests {
		if r.Error != "" || r.TTFT == nil {
			continue
		}
		ttft = append(ttft, *r.TTFT)
		for k := 1; k < len(r.Chunks); k++ {
			itl = append(itl, r.Chunks[k][0]-r.Chunks[k-1][0])
		}
	}
	if len(ttft) == 0 {
		return nil, nil, errors.New("/sim/truth recorded no request")
	}
	return ttft, itl, nil
}

func writeMatrix(w io.Writer, points []Point) {
	fmt.Fprintln(w, "| concurrency | requests | TTFT mean (reported / true / error) | TTFT p50 | TTFT p99 | ITL mean | ITL p50 | ITL p99 | client peak RSS (MB) | client CPU (s) |")
	fmt.Fprintln(w, "|---:|---:|---|---|---|---|---|---|---:|---:|")
	cell := func(rep, tru float64) string {
		return fmt.Sprintf("%.2f / %.2f / %+.2f", rep, tru, rep-tru)
	}
	for _, p := range points {
		fmt.Fprintf(w, "| %d | %d | %s | %s | %s | %s | %s | %s | %.1f | %.2f |\n", p.Concurrency, p.Requests,
			cell(p.Reported.TTFT.Mean, p.True.TTFT.Mean), cell(p.Reported.TTFT.Median, p.True.TTFT.Median), cell(p.Reported.TTFT.P99, p.True.TTFT.P99),
			cell(p.Reported.ITL.Mean, p.True.ITL.Mean), cell(p.Reported.ITL.Median, p.True.ITL.Median), cell(p.Reported.ITL.P99, p.True.ITL.P99),
			p.PeakRSSMB, p.CPUSeconds)
	}
}
