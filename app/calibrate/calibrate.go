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
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
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
	// ThroughputProcs, when set, runs the throughput run once per value,
	// the client's GOMAXPROCS, for the scaling across cores.
	ThroughputProcs []int
	// Scale points: for each of ScaleStreams, that many requests at once,
	// of ScaleOutputLen tokens, against the matrix's simulator; none skips
	// them. The per-stream memory is the slope from the smallest to the
	// largest.
	ScaleStreams   []int
	ScaleOutputLen int
	// Dir holds the result files (a temporary directory if "").
	Dir string
	Out io.Writer
}

// Point is one concurrency level's outcome: what the client reported, what
// the simulator did, and the client's cost.
type Point struct {
	Concurrency, Requests int
	Reported, True        struct{ TTFT, ITL metrics.Stats }
	// Matched pairs each request the client recorded with the simulator's
	// record of it (by response id): the error of each request's TTFT and
	// of each gap between chunks.
	Matched Matched
	// PeakRSSMB is the client's peak resident memory, PeakAnonMB its peak
	// anonymous memory (see usage); NaN where not measured.
	PeakRSSMB, PeakAnonMB, CPUSeconds float64
	// OutputTokens is the run's total_output_tokens; MarginalCPU the
	// client's CPU per output token above its start-up cost, in µs (see
	// marginal).
	OutputTokens int
	MarginalCPU  float64
	// Verdict is the client's own verdict on the run (client_verdict),
	// printed beside the error it is meant to foresee.
	Verdict string
}

// Matched is the per-request comparison: how many requests and gaps were
// paired, and the distribution of the errors (reported − true; the Stats
// are in ms). Unlike the difference of two distributions' percentiles, it
// does not jump when a percentile falls between two modes of the latency.
type Matched struct {
	Requests, Gaps int
	TTFT, ITL      metrics.Stats
	// ITLAbsP99 is the 99th percentile of the gaps' absolute errors, in ms.
	ITLAbsP99 float64
}

// Throughput is the throughput run's outcome. CPUMicrosPerToken is the
// client's own in-run figure (its result line's
// client_cpu_us_per_output_token); MarginalCPU is measured from outside,
// against a one-request run (see marginal).
type Throughput struct {
	Requests, Concurrency, OutputLen int
	// Procs is the client's GOMAXPROCS (0: the machine's default).
	Procs                           int
	TokensPerSec, CPUMicrosPerToken float64
	OutputTokens                    int
	CPUSeconds, MarginalCPU         float64
	PeakRSSMB, PeakAnonMB           float64
}

// Scale is the scale point's outcome: Streams requests sent at once. Err
// says why the run, or the match against the truth, failed; the figures
// it left unmeasured are zero (Completed < 0 when the client failed).
type Scale struct {
	Streams, OutputLen, Completed int
	Matched                       Matched
	Verdict                       string
	MarginalCPU                   float64
	PeakRSSMB, PeakAnonMB         float64
	// Sim is how the simulator wrote the content: writes and the tokens
	// in them, and how many writes carried more than one token.
	Sim chunkCount
	Err string
}

// marginal is the client's CPU per output token above its start-up cost:
// (the run's CPU − the one-request run's, in seconds) / the run's output
// tokens, in µs. NaN when the run produced no tokens.
func marginal(runCPU, baseCPU float64, tokens int) float64 {
	if tokens <= 0 {
		return math.NaN()
	}
	return (runCPU - baseCPU) * 1e6 / float64(tokens)
}

// chunkCount counts a simulator's content writes.
type chunkCount struct{ Writes, Tokens, Multi int }

// Check says what is wrong with the options, naming the flag.
func (o Options) Check() error {
	counts, err := o.scaleCounts()
	if err != nil {
		return err
	}
	if len(counts) > 0 && o.ScaleOutputLen < 1 {
		return fmt.Errorf("--scale-output-len must be at least 1, got %d", o.ScaleOutputLen)
	}
	for _, n := range o.ThroughputProcs {
		if n < 1 || n > 1024 {
			return fmt.Errorf("--throughput-procs: each GOMAXPROCS must be 1 to 1024, got %d", n)
		}
	}
	if len(o.ThroughputProcs) > 0 && o.ThroughputRequests <= 0 {
		return errors.New("--throughput-procs needs the throughput run (--throughput-requests above 0)")
	}
	return nil
}

// scaleCounts is the scale points' stream counts, ascending and each once;
// none for a single 0.
func (o Options) scaleCounts() ([]int, error) {
	if len(o.ScaleStreams) == 1 && o.ScaleStreams[0] == 0 {
		return nil, nil
	}
	for _, n := range o.ScaleStreams {
		if n < 1 {
			return nil, fmt.Errorf("--scale-streams: each count must be at least 1 (or a single 0 to skip the scale points), got %d", n)
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(o.ScaleStreams))), nil
}

// Run runs the matrix, the scale point and the throughput run, printing a
// Markdown report.
func Run(ctx context.Context, o Options) error {
	if err := o.Check(); err != nil {
		return err
	}
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

	if err := matrix(ctx, o); err != nil {
		return err
	}
	if o.ThroughputRequests <= 0 {
		return nil
	}
	return throughputRun(ctx, o)
}

// matrix runs the concurrency levels and then the scale point against one
// simulator with the given TTFT and ITL, printing their tables.
func matrix(ctx context.Context, o Options) error {
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', -1, 64) }
	sim, err := startSim(ctx, o.Exe, "--preset", "h100-llama3-8b",
		"--prefill-overhead-ms", ms(o.TTFT), "--prefill-tokens-per-sec", "1e15",
		"--decode-base-ms", ms(o.ITL), "--decode-per-request-ms", "0",
		"--max-running-requests", "1000000", "--max-total-tokens", "1000000000000",
		"--max-prefill-tokens", "1000000000000", "--eos-probability", "0", "--truth-capacity", "1000000")
	if err != nil {
		return err
	}
	defer sim.stop()
	base, err := startup(ctx, o, sim, "matrix", o.OutputLen, true)
	if err != nil {
		return err
	}
	var points []Point
	for _, c := range o.Concurrency {
		p, err := point(ctx, o, sim, c, base)
		if err != nil {
			return err
		}
		points = append(points, p)
	}
	fmt.Fprintf(o.Out, "Server: TTFT %v, ITL %v, %d tokens per request, one token per chunk. Errors are reported − true, in ms.\n", o.TTFT, o.ITL, o.OutputLen)
	fmt.Fprintf(o.Out, "Client CPU per output token, marginal: (the run's client CPU − a one-request run's, %.3f s) / the run's output tokens, in µs.\n\n", base)
	writeMatrix(o.Out, points)
	fmt.Fprintf(o.Out, "\nThe same runs, request by request: each request the client recorded (--record-file) paired with the simulator's record of it by response id; the error of its TTFT and of each gap between chunks, reported − true, in ms.\n\n")
	writeMatched(o.Out, points)

	counts, _ := o.scaleCounts() // checked by Run
	if len(counts) == 0 {
		return nil
	}
	if line := fdLimitNote(counts[len(counts)-1]); line != "" {
		fmt.Fprintf(o.Out, "\n%s\n", line)
	}
	sb := base
	if o.ScaleOutputLen != o.OutputLen {
		if sb, err = startup(ctx, o, sim, "scale point", o.ScaleOutputLen, true); err != nil {
			fmt.Fprintf(os.Stderr, "calibrate: %v\n", err)
			sb = math.NaN()
		}
	}
	var scs []Scale
	for _, n := range counts {
		scs = append(scs, scale(ctx, o, sim, n, sb))
	}
	fmt.Fprintf(o.Out, "\nScale: %s streams at once, each count a run of its own, %d tokens each, against the same simulator (a one-request run of %d tokens took %s s of client CPU); errors matched request by request as above, in ms.\n\n",
		countList(counts), o.ScaleOutputLen, o.ScaleOutputLen, fixed(sb, 3))
	writeScale(o.Out, scs)
	writeSlope(o.Out, scs)
	return nil
}

// throughputRun runs the throughput run against the instant preset and
// prints its table.
func throughputRun(ctx context.Context, o Options) error {
	sim, err := startSim(ctx, o.Exe, "--preset", "instant", "--eos-probability", "0", "--truth-capacity", "1000")
	if err != nil {
		return err
	}
	defer sim.stop()
	base, err := startup(ctx, o, sim, "throughput run", o.ThroughputOutputLen, false)
	if err != nil {
		return err
	}
	if len(o.ThroughputProcs) > 0 {
		return scaling(ctx, o, sim, base)
	}
	t, err := throughput(ctx, o, sim, base, 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "\nThroughput (instant preset, %d requests, concurrency %d, %d output tokens; a one-request run took %.3f s of client CPU):\n\n", t.Requests, t.Concurrency, t.OutputLen, base)
	writeThroughput(o.Out, t)
	return nil
}

// scaling runs the throughput run once per GOMAXPROCS of the client and
// prints them side by side, with the scaling efficiency (CPU per token at
// the fewest processors over that at each) and the cores a client would
// need for 2M output tokens/s at each one's CPU per token.
func scaling(ctx context.Context, o Options, sim *simProc, base float64) error {
	var ts []Throughput
	for _, n := range o.ThroughputProcs {
		t, err := throughput(ctx, o, sim, base, n)
		if err != nil {
			return err
		}
		ts = append(ts, t)
	}
	fmt.Fprintf(o.Out, "\nThroughput by the client's GOMAXPROCS (instant preset, %d requests, concurrency %d, %d output tokens; the simulator runs on the same machine, so tokens/s is bounded by the cores left to the client):\n\n",
		ts[0].Requests, ts[0].Concurrency, ts[0].OutputLen)
	writeScaling(o.Out, ts)
	return nil
}

// tokensForCores is the output rate the projection asks cores for.
const tokensForCores = 2e6

func writeScaling(w io.Writer, ts []Throughput) {
	fmt.Fprintln(w, "| GOMAXPROCS | output tokens/s | client CPU µs per output token (in-run) | marginal | tokens per client CPU-second | scaling efficiency | cores for 2M tokens/s | client peak RssAnon (MB) |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, t := range ts {
		perCore, eff, cores := "—", "—", "—"
		if t.CPUMicrosPerToken > 0 {
			perCore = fmt.Sprintf("%.0f", 1e6/t.CPUMicrosPerToken)
			cores = fmt.Sprintf("%.1f", tokensForCores*t.CPUMicrosPerToken/1e6)
			if ts[0].CPUMicrosPerToken > 0 {
				eff = fmt.Sprintf("%.0f%%", 100*ts[0].CPUMicrosPerToken/t.CPUMicrosPerToken)
			}
		}
		fmt.Fprintf(w, "| %d | %.0f | %.3f | %s | %s | %s | %s | %s |\n", t.Procs, t.TokensPerSec, t.CPUMicrosPerToken, fixed(t.MarginalCPU, 3), perCore, eff, cores, memCell(t.PeakAnonMB))
	}
}

// startup runs the client once with one request of outLen tokens (with a
// record file if record, as the runs it stands for) and returns its user +
// system CPU in seconds: the start-up cost that marginal takes off.
func startup(ctx context.Context, o Options, sim *simProc, name string, outLen int, record bool) (float64, error) {
	file := strings.ReplaceAll(name, " ", "-") + "-baseline"
	args := []string{"--num-prompts", "1", "--max-concurrency", "1", "--random-output-len", strconv.Itoa(outLen)}
	if record {
		args = append(args, "--record-file", filepath.Join(o.Dir, file+".records.jsonl"))
	}
	_, ru, err := client(ctx, o, sim.url, filepath.Join(o.Dir, file+".jsonl"), args...)
	if err != nil {
		return 0, fmt.Errorf("the one-request run before the %s: %w", name, err)
	}
	return cpuSeconds(ru), nil
}

// fdLimitNote is one line when the open-file limit is too low for n
// streams, else "". Go raises each process's soft limit to the hard limit
// itself, so the hard limit is the one that counts.
func fdLimitNote(n int) string {
	hard, ok := hardFileLimit()
	if !ok {
		return ""
	}
	return fdNote(n, hard)
}

// fdNote is fdLimitNote for a hard limit of hard descriptors: each of the
// simulator and the client holds a connection per stream and a few files.
func fdNote(n int, hard uint64) string {
	if need := uint64(n) + 100; hard < need {
		return fmt.Sprintf("Open-file limit too low: %d streams need about %d descriptors in the simulator and in the client, but the hard RLIMIT_NOFILE is %d (raise it with ulimit -Hn, or lower --scale-streams).", n, need, hard)
	}
	return ""
}

func point(ctx context.Context, o Options, sim *simProc, c int, base float64) (Point, error) {
	p := Point{Concurrency: c, Requests: max(c*o.PerStream, 10)}
	if err := sim.post("/sim/truth/reset"); err != nil {
		return p, err
	}
	records := filepath.Join(o.Dir, fmt.Sprintf("c%d.records.jsonl", c))
	res, ru, err := client(ctx, o, sim.url, filepath.Join(o.Dir, fmt.Sprintf("c%d.jsonl", c)),
		"--num-prompts", strconv.Itoa(p.Requests), "--max-concurrency", strconv.Itoa(c),
		"--random-output-len", strconv.Itoa(o.OutputLen), "--record-file", records)
	if err != nil {
		return p, fmt.Errorf("concurrency %d: %w", c, err)
	}
	p.Verdict, _ = res["client_verdict"].(string)
	p.Reported.TTFT = stats(res, "ttft")
	p.Reported.ITL = stats(res, "itl")
	p.PeakRSSMB, p.PeakAnonMB = ru.peakRSSMB, ru.peakAnonMB
	p.CPUSeconds = cpuSeconds(ru)
	p.OutputTokens = num(res, "total_output_tokens")
	p.MarginalCPU = marginal(p.CPUSeconds, base, p.OutputTokens)
	truth, err := sim.truth()
	if err != nil {
		return p, err
	}
	ttft, itl := truth.all()
	p.True.TTFT, p.True.ITL = metrics.Describe(ttft), metrics.Describe(itl)
	reported, err := readRecords(records)
	if err != nil {
		return p, err
	}
	p.Matched = match(reported, truth)
	fmt.Fprintf(os.Stderr, "calibrate: concurrency %d done (%d requests)\n", c, p.Requests)
	return p, nil
}

// scale runs the scale point. A failure is kept in the outcome, not
// returned: the report printed so far stands.
func scale(ctx context.Context, o Options, sim *simProc, n int, base float64) Scale {
	sc := Scale{Streams: n, OutputLen: o.ScaleOutputLen, Completed: -1}
	fail := func(err error) Scale {
		fmt.Fprintf(os.Stderr, "calibrate: scale point: %v\n", err)
		sc.Err = short(err)
		return sc
	}
	if err := sim.post("/sim/truth/reset"); err != nil {
		return fail(err)
	}
	records := filepath.Join(o.Dir, fmt.Sprintf("scale%d.records.jsonl", n))
	res, ru, err := client(ctx, o, sim.url, filepath.Join(o.Dir, fmt.Sprintf("scale%d.jsonl", n)),
		"--num-prompts", strconv.Itoa(n), "--max-concurrency", strconv.Itoa(n),
		"--random-output-len", strconv.Itoa(sc.OutputLen), "--record-file", records)
	if err != nil {
		return fail(err)
	}
	sc.Completed = num(res, "completed")
	sc.Verdict, _ = res["client_verdict"].(string)
	sc.PeakRSSMB, sc.PeakAnonMB = ru.peakRSSMB, ru.peakAnonMB
	sc.MarginalCPU = marginal(cpuSeconds(ru), base, num(res, "total_output_tokens"))
	truth, err := sim.truth()
	if err != nil {
		return fail(err)
	}
	sc.Sim = truth.writes
	reported, err := readRecords(records)
	if err != nil {
		return fail(err)
	}
	sc.Matched = match(reported, truth)
	fmt.Fprintf(os.Stderr, "calibrate: scale point done (%d streams)\n", n)
	return sc
}

// throughput runs the throughput run, with the client's GOMAXPROCS at
// procs (0: its default).
func throughput(ctx context.Context, o Options, sim *simProc, base float64, procs int) (Throughput, error) {
	t := Throughput{Requests: o.ThroughputRequests, Concurrency: o.ThroughputConcurrency, OutputLen: o.ThroughputOutputLen, Procs: procs}
	var env []string
	out, err := os.CreateTemp(o.Dir, "throughput-*.jsonl") // a file of its own for each run
	if err != nil {
		return t, err
	}
	out.Close()
	if procs > 0 {
		env = []string{"GOMAXPROCS=" + strconv.Itoa(procs)}
	}
	res, ru, err := clientEnv(ctx, o, env, sim.url, out.Name(),
		"--num-prompts", strconv.Itoa(t.Requests), "--max-concurrency", strconv.Itoa(t.Concurrency),
		"--random-output-len", strconv.Itoa(t.OutputLen))
	if err != nil {
		return t, fmt.Errorf("throughput run: %w", err)
	}
	t.TokensPerSec, _ = res["output_throughput"].(float64)
	t.CPUMicrosPerToken, _ = res["client_cpu_us_per_output_token"].(float64)
	t.PeakRSSMB, t.PeakAnonMB = ru.peakRSSMB, ru.peakAnonMB
	t.CPUSeconds = cpuSeconds(ru)
	t.OutputTokens = num(res, "total_output_tokens")
	t.MarginalCPU = marginal(t.CPUSeconds, base, t.OutputTokens)
	return t, nil
}

func cpuSeconds(ru usage) float64 {
	return ru.cpuSeconds
}

// num is a count from the result line (0 if absent).
func num(res map[string]any, key string) int {
	v, _ := res[key].(float64)
	return int(v)
}

// client runs one benchserve process against url and returns its result
// line and resource usage.
func client(ctx context.Context, o Options, url, out string, extra ...string) (map[string]any, usage, error) {
	return clientEnv(ctx, o, nil, url, out, extra...)
}

// clientEnv is client with env added to the process's environment.
func clientEnv(ctx context.Context, o Options, env []string, url, out string, extra ...string) (map[string]any, usage, error) {
	args := append([]string{"--backend", o.Backend, "--base-url", url, "--dataset-name", "random-ids",
		"--random-input-len", "128", "--random-range-ratio", "1", "--warmup-requests", "0",
		"--disable-tqdm", "--output-file", out}, extra...)
	cmd := exec.CommandContext(ctx, o.Exe, args...)
	if env != nil {
		cmd.Env = append(cmd.Environ(), env...)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	fail := func(err error) (map[string]any, usage, error) {
		return nil, usage{}, &runError{cmd: o.Exe + " " + strings.Join(args, " "), err: err, stderr: strings.TrimSpace(stderr.String())}
	}
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	peakAnon := watchAnon(cmd.Process.Pid)
	err := cmd.Wait()
	anonMB := peakAnon()
	if err != nil {
		return fail(err)
	}
	ru := usageOf(cmd.ProcessState)
	ru.peakAnonMB = anonMB
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, usage{}, err
	}
	// The result line writes an infinite rate as Infinity, which
	// encoding/json does not take; the rate is not needed here.
	line := strings.ReplaceAll(strings.TrimSpace(string(data)), "Infinity", "null")
	var res map[string]any
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		return nil, usage{}, fmt.Errorf("result %s: %v", out, err)
	}
	return res, ru, nil
}

// runError is a client process that failed.
type runError struct {
	cmd    string
	err    error
	stderr string
}

func (e *runError) Error() string { return fmt.Sprintf("%s: %v: %s", e.cmd, e.err, e.stderr) }

// short is err for a table cell: a client's exit status and the last line
// it wrote, without its command line; one line, at most 200 bytes.
func short(err error) string {
	s := err.Error()
	var re *runError
	if errors.As(err, &re) {
		s = re.err.Error()
		if i := strings.LastIndexByte(re.stderr, '\n'); re.stderr != "" {
			s += ": " + re.stderr[i+1:]
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
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

// trueRequest is the simulator's record of one finished request: its TTFT
// and the times its content chunks were written, in seconds.
type trueRequest struct {
	ttft   float64
	chunks []float64
}

// truthLog is the simulator's records by response id, in its order.
type truthLog struct {
	ids    []string
	byID   map[string]trueRequest
	writes chunkCount
}

// all returns every TTFT and every gap between chunk writes.
func (l truthLog) all() (ttft, itl []float64) {
	for _, id := range l.ids {
		r := l.byID[id]
		ttft = append(ttft, r.ttft)
		for k := 1; k < len(r.chunks); k++ {
			itl = append(itl, r.chunks[k]-r.chunks[k-1])
		}
	}
	return ttft, itl
}

// truth returns the simulator's finished requests.
func (s *simProc) truth() (truthLog, error) {
	l := truthLog{byID: map[string]trueRequest{}}
	resp, err := http.Get(s.url + "/sim/truth")
	if err != nil {
		return l, err
	}
	defer resp.Body.Close()
	var doc struct {
		Requests []struct {
			ID     string       `json:"id"`
			TTFT   *float64     `json:"ttft"`
			Chunks [][3]float64 `json:"chunks"`
			Error  string       `json:"error"`
		} `json:"requests"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return l, fmt.Errorf("/sim/truth: %v", err)
	}
	for i, r := range doc.Requests {
		if r.Error != "" || r.TTFT == nil {
			continue
		}
		tr := trueRequest{ttft: *r.TTFT}
		for _, c := range r.Chunks {
			tr.chunks = append(tr.chunks, c[0])
			l.writes.Writes++
			l.writes.Tokens += int(c[1])
			if c[1] > 1 {
				l.writes.Multi++
			}
		}
		id := r.ID
		if id == "" { // never from the simulator; keeps every record counted
			id = "#" + strconv.Itoa(i)
		}
		l.ids = append(l.ids, id)
		l.byID[id] = tr
	}
	if len(l.ids) == 0 {
		return l, errors.New("/sim/truth recorded no request")
	}
	return l, nil
}

// clientRecord is one line of the client's --record-file.
type clientRecord struct {
	ID      string    `json:"id"`
	Success bool      `json:"success"`
	TTFT    float64   `json:"ttft"`
	ITL     []float64 `json:"itl"`
}

func readRecords(path string) ([]clientRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []clientRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		var r clientRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// match pairs the client's successful records with the simulator's by id.
// A gap is compared only when both sides saw the same number of chunks.
func match(recs []clientRecord, truth truthLog) Matched {
	var m Matched
	var ttft, itl, abs []float64
	for _, r := range recs {
		tr, ok := truth.byID[r.ID]
		if !r.Success || !ok {
			continue
		}
		m.Requests++
		ttft = append(ttft, r.TTFT-tr.ttft)
		if len(r.ITL) != len(tr.chunks)-1 {
			continue
		}
		for k, gap := range r.ITL {
			e := gap - (tr.chunks[k+1] - tr.chunks[k])
			itl = append(itl, e)
			abs = append(abs, math.Abs(e))
		}
	}
	m.Gaps = len(itl)
	m.TTFT, m.ITL = metrics.Describe(ttft), metrics.Describe(itl)
	m.ITLAbsP99 = metrics.Describe(abs).P99
	return m
}

func writeMatrix(w io.Writer, points []Point) {
	fmt.Fprintln(w, "| concurrency | requests | TTFT mean (reported / true / error) | TTFT p50 | TTFT p99 | ITL mean | ITL p50 | ITL p99 | client peak RSS (MB) | client peak RssAnon (MB) | client CPU (s) | client CPU µs per output token, marginal |")
	fmt.Fprintln(w, "|---:|---:|---|---|---|---|---|---|---:|---:|---:|---:|")
	cell := func(rep, tru float64) string {
		return fmt.Sprintf("%.2f / %.2f / %+.2f", rep, tru, rep-tru)
	}
	for _, p := range points {
		fmt.Fprintf(w, "| %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %.2f | %s |\n", p.Concurrency, p.Requests,
			cell(p.Reported.TTFT.Mean, p.True.TTFT.Mean), cell(p.Reported.TTFT.Median, p.True.TTFT.Median), cell(p.Reported.TTFT.P99, p.True.TTFT.P99),
			cell(p.Reported.ITL.Mean, p.True.ITL.Mean), cell(p.Reported.ITL.Median, p.True.ITL.Median), cell(p.Reported.ITL.P99, p.True.ITL.P99),
			memCell(p.PeakRSSMB), memCell(p.PeakAnonMB), p.CPUSeconds, fixed(p.MarginalCPU, 3))
	}
}

// writeThroughput prints the throughput run's table.
func writeThroughput(w io.Writer, t Throughput) {
	fmt.Fprintln(w, "| output tokens/s | client CPU µs per output token, the client's own in-run figure | client CPU µs per output token, marginal | client peak RSS (MB) | client peak RssAnon (MB) |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|")
	fmt.Fprintf(w, "| %.0f | %.3f | %s | %s | %s |\n", t.TokensPerSec, t.CPUMicrosPerToken, fixed(t.MarginalCPU, 3), memCell(t.PeakRSSMB), memCell(t.PeakAnonMB))
}

// writeScale prints the scale points' table, a row each: a row holds
// the failure, if any, in place of the verdict, and a dash for what was
// not measured. A line under it says how the simulator wrote the tokens.
func writeScale(w io.Writer, scs []Scale) {
	fmt.Fprintln(w, "| streams | requests completed | TTFT mean error | TTFT error p99 | ITL absolute error p99 | client verdict | client CPU µs per output token, marginal | client peak RSS (MB) | client peak RssAnon (MB) |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---|---:|---:|---:|")
	for _, sc := range scs {
		const dash = "—"
		completed, ttftMean, ttftP99, itl, cpu, rss, anon := dash, dash, dash, dash, dash, dash, dash
		if sc.Completed >= 0 {
			completed = strconv.Itoa(sc.Completed)
			cpu, rss, anon = fixed(sc.MarginalCPU, 3), memCell(sc.PeakRSSMB), memCell(sc.PeakAnonMB)
		}
		if m := sc.Matched; m.Requests > 0 {
			ttftMean, ttftP99 = fmt.Sprintf("%+.2f", m.TTFT.Mean), fmt.Sprintf("%+.2f", m.TTFT.P99)
			if m.Gaps > 0 {
				itl = fmt.Sprintf("%.3f", m.ITLAbsP99)
			}
		}
		verdict := sc.Verdict
		switch {
		case sc.Err != "" && sc.Completed < 0:
			verdict = "client failed: " + sc.Err
		case sc.Err != "":
			verdict += "; not matched: " + sc.Err
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", sc.Streams, completed, ttftMean, ttftP99, itl, tableText(verdict), cpu, rss, anon)
	}
	for _, sc := range scs {
		if c := sc.Sim; c.Writes > 0 {
			fmt.Fprintf(w, "\nAt %d streams the simulator wrote %d tokens in %d content writes; %d writes (%.1f%%) carried more than one token, where its writer fell behind the decode steps; %d requests matched, %d gaps (a request's gaps are compared only when both sides saw the same number of chunks).\n",
				sc.Streams, c.Tokens, c.Writes, c.Multi, 100*float64(c.Multi)/float64(c.Writes), sc.Matched.Requests, sc.Matched.Gaps)
		}
	}
}

// writeSlope prints the memory per stream, from the fewest streams to the
// most (scs in that order), or "-" when either was not measured; nothing
// for one scale point.
func writeSlope(w io.Writer, scs []Scale) {
	if len(scs) < 2 {
		return
	}
	first, last := scs[0], scs[len(scs)-1]
	fmt.Fprintf(w, "\nKB per stream (RssAnon slope, %s→%s): %s\n", group(first.Streams), group(last.Streams), memCell(perStreamKB(first, last)))
}

// countList is "1,000 and 10,000" for the scale points' stream counts.
func countList(ns []int) string {
	var s []string
	for _, n := range ns {
		s = append(s, group(n))
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// group writes n with a comma between thousands: 10,000.
func group(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + group(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// fixed formats v with prec decimals, or "n/a" when it is not a number.
func fixed(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// tableText makes s safe in a Markdown table cell.
func tableText(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", "\\|")
}

// writeMatched prints the per-request comparison.
func writeMatched(w io.Writer, points []Point) {
	fmt.Fprintln(w, "| concurrency | requests matched | gaps matched | TTFT error p50 | TTFT error p99 | ITL error p50 | ITL error p99 | ITL absolute error p99 | client verdict |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, p := range points {
		m := p.Matched
		fmt.Fprintf(w, "| %d | %d | %d | %+.2f | %+.2f | %+.3f | %+.3f | %.3f | %s |\n", p.Concurrency, m.Requests, m.Gaps,
			m.TTFT.Median, m.TTFT.P99, m.ITL.Median, m.ITL.P99, m.ITLAbsP99, verdictWord(p.Verdict))
	}
}

// verdictWord is a verdict's judgement, the words before its first colon
// ("ok", "not verified", "may be distorted"): the table sets it beside
// the measured error, which says whether the judgement was right.
func verdictWord(v string) string {
	if v == "" {
		return "-"
	}
	w, _, _ := strings.Cut(v, ":")
	return tableText(w)
}
