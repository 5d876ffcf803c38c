package sim

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// childEnv makes the test binary run TestServeChild as a simulator process.
const childEnv = "BENCHSERVE_SIM_CHILD"

// TestServeChild is not a test: BenchmarkInstantStream starts the test
// binary with childEnv set and GOMAXPROCS=1 to run the simulator alone on
// one core. It prints the URL, then serves until stdin closes.
func TestServeChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("helper process for BenchmarkInstantStream")
	}
	cfg, _ := Preset(PresetInstant)
	cfg.TruthCapacity = 1000
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// BENCHSERVE_SIM_CPUPROFILE=<file> profiles the server process.
	if p := os.Getenv("BENCHSERVE_SIM_CPUPROFILE"); p != "" {
		f, _ := os.Create(p)
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	s.Start(ln)
	fmt.Println(s.URL())
	io.Copy(io.Discard, os.Stdin)
	s.Close()
}

// BenchmarkInstantStream measures how fast the simulator streams with
// --preset instant: a server process pinned to one core (GOMAXPROCS=1)
// serves /v1/completions streams of 2000 tokens, one token per chunk, to
// 64 concurrent connections of a plain Go client. It reports tokens per
// second of wall time and tokens per second of the server's CPU time.
func BenchmarkInstantStream(b *testing.B) {
	for _, path := range []string{"/v1/completions", "/generate"} {
		b.Run(strings.Trim(path, "/"), func(b *testing.B) { benchStream(b, path) })
	}
}

func benchStream(b *testing.B, path string) {
	const tokens, conc = 2000, 64
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeChild$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "GOMAXPROCS=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	url = strings.TrimSpace(url) + path
	body := `{"model":"benchserve-sim","prompt":"Hello","max_tokens":` + strconv.Itoa(tokens) + `,"ignore_eos":true,"stream":true}`
	if path == "/generate" {
		body = `{"text":"Hello","sampling_params":{"max_new_tokens":` + strconv.Itoa(tokens) + `,"ignore_eos":true},"stream":true}`
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc, DisableCompression: true}}

	var chunks atomic.Int64
	one := func() error {
		resp, err := client.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		r := bufio.NewReaderSize(resp.Body, 64<<10)
		n := int64(0)
		for {
			line, err := r.ReadSlice('\n')
			if bytes.HasPrefix(line, []byte("data: {")) {
				n++
			}
			if err == io.EOF {
				break
			}
			if err != nil && err != bufio.ErrBufferFull {
				return err
			}
		}
		chunks.Add(n)
		return nil
	}
	if err := one(); err != nil { // warm up
		b.Fatal(err)
	}
	chunks.Store(0)
	cpu0 := procCPU(cmd.Process.Pid)
	b.ResetTimer()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for range conc {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := one(); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	b.StopTimer()
	if err, _ := firstErr.Load().(error); err != nil {
		b.Fatal(err)
	}
	cpu := procCPU(cmd.Process.Pid) - cpu0
	total := float64(b.N) * tokens
	b.ReportMetric(total/wall.Seconds(), "tokens/s")
	if cpu > 0 {
		b.ReportMetric(total/cpu.Seconds(), "tokens/server-cpu-s")
	}
	b.ReportMetric(float64(chunks.Load())/total, "chunks/token")
	b.ReportMetric(0, "ns/op")
}

// procCPU is the user + system CPU time of process pid (Linux /proc; 0
// elsewhere).
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// Fields after the command: state is f[0], utime f[11], stime f[12], in clock ticks (100 Hz on Linux).
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}
