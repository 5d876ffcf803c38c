package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"benchserve/sim"
)

// seen is one request as the server received it.
type seen struct {
	at     time.Time
	path   string
	header http.Header
	body   []byte
	reply  []byte
}

// recordingSim is the simulator behind a wrapper that notes when each
// request arrived, its body and the response written.
type recordingSim struct {
	url  string
	mu   sync.Mutex
	reqs []*seen
}

func newRecordingSim(t *testing.T) *recordingSim {
	t.Helper()
	cfg, err := sim.Preset(sim.PresetInstant)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rs := &recordingSim{}
	h := s.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &seen{at: at, path: r.URL.Path, header: r.Header.Clone(), body: body}
		tw := &teeWriter{ResponseWriter: w}
		h.ServeHTTP(tw, r)
		rec.reply = tw.buf.Bytes()
		rs.mu.Lock()
		rs.reqs = append(rs.reqs, rec)
		rs.mu.Unlock()
	}))
	t.Cleanup(func() { srv.Close(); s.Close() })
	rs.url = srv.URL
	return rs
}

// on returns the requests to path, in arrival order.
func (rs *recordingSim) on(path string) []*seen {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var out []*seen
	for _, r := range rs.reqs {
		if r.path == path {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	return out
}

// generation returns the requests to the generation endpoints (not
// /v1/models, /metrics and the like), in arrival order.
func (rs *recordingSim) generation() []*seen {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var out []*seen
	for _, r := range rs.reqs {
		if r.path == "/generate" || strings.HasPrefix(r.path, "/v1/") && r.path != "/v1/models" {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	return out
}

// metric reads a counter from the simulator's /metrics.
func (rs *recordingSim) metric(t *testing.T, name string) float64 {
	t.Helper()
	resp, err := http.Get(rs.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\{[^}]*\} (\S+)$`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("no %s in /metrics:\n%s", name, data)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// teeWriter keeps a copy of what the handler writes, flushes included.
type teeWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (w *teeWriter) Write(b []byte) (int, error) {
	w.buf.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w *teeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// A mooncake run sends each session at its trace time × the slowdown
// factor, measured where the server receives it.
func TestEndToEndMooncakeTiming(t *testing.T) {
	t.Parallel()
	rs := newRecordingSim(t)
	// Out of order in the file; bench sorts by time.
	stamps := map[int]float64{1: 0, 2: 40, 3: 100, 4: 180, 5: 200, 6: 310, 7: 95}
	var trace strings.Builder
	for _, id := range []int{3, 1, 2, 7, 4, 6, 5} {
		fmt.Fprintf(&trace, `{"timestamp": %g, "input_length": 10, "output_length": 4, "hash_ids": [%d]}`+"\n", stamps[id]+1e6, id)
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(path, []byte(trace.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	const slowdown = 2.0
	records := filepath.Join(t.TempDir(), "records.jsonl")
	code, stdout, stderr := run(t, nil, "--backend", "sglang", "--base-url", rs.url, "--model", "benchserve-sim",
		"--tokenizer", "o200k_base", "--dataset-name", "mooncake", "--dataset-path", path, "--num-prompts", "7",
		"--mooncake-slowdown-factor", "2", "--warmup-requests", "0", "--output-file", filepath.Join(t.TempDir(), "r.jsonl"),
		"--record-file", records)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if got := field(t, stdout, "Successful requests:"); got != "7" {
		t.Errorf("successful requests = %s", got)
	}
	// Every session reached the server once. (Their arrival order is not
	// checked: a loaded machine may swap two meant 10 ms apart, 7 and 3;
	// the records below show the schedule's order: seq k is the k-th in
	// time.)
	reqs := rs.on("/generate")
	if len(reqs) != 7 {
		t.Fatalf("%d requests reached the server", len(reqs))
	}
	order := []int{1, 2, 7, 3, 4, 5, 6} // by timestamp
	session := regexp.MustCompile(`Round 1: (\d+)hi`)
	sent := map[int]bool{}
	for i, r := range reqs {
		var body struct{ Text string }
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		m := session.FindStringSubmatch(body.Text)
		if m == nil {
			t.Fatalf("request %d: no session in %q", i, body.Text)
		}
		id, _ := strconv.Atoi(m[1])
		sent[id] = true
	}
	if len(sent) != 7 {
		t.Errorf("sessions sent: %v, want each of the 7 once", sent)
	}
	// Each request's intended time is its trace time × the slowdown, from
	// the first, exactly; and it left no earlier (a schedule that did not
	// drive sending would send them all at once, up to 620 ms early). How
	// late it left is the machine's load, not the schedule's.
	b, err := os.ReadFile(records)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 7 {
		t.Fatalf("%d records", len(lines))
	}
	for _, l := range lines {
		var r struct {
			Seq             int
			Intended, Start float64
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		want := (stamps[order[r.Seq]] - stamps[order[0]]) / 1000 * slowdown
		t.Logf("session %d: intended %.3f s (trace × slowdown %.3f s), sent at %.3f s", order[r.Seq], r.Intended, want, r.Start)
		if math.Abs(r.Intended-want) > 1e-9 || r.Start < r.Intended {
			t.Errorf("session %d: intended %.6f s, sent at %.6f s; want intended %.6f s and sent no earlier", order[r.Seq], r.Intended, r.Start, want)
		}
	}
}

// With a chat backend the rounds of a session go out as messages, all at
// the session's time.
func TestEndToEndMooncakeChatRounds(t *testing.T) {
	rs := newRecordingSim(t)
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(path, []byte(`{"timestamp": 5, "output_length": 3, "hash_ids": [42]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, nil, "--backend", "vllm-chat", "--base-url", rs.url, "--model", "benchserve-sim",
		"--tokenizer", "o200k_base", "--dataset-name", "mooncake", "--dataset-path", path, "--num-prompts", "1",
		"--mooncake-num-rounds", "2", "--warmup-requests", "0", "--output-file", filepath.Join(t.TempDir(), "r.jsonl"))
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	reqs := rs.on("/v1/chat/completions")
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var n []int
	for _, r := range reqs {
		var body struct {
			Messages []map[string]string `json:"messages"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		n = append(n, len(body.Messages))
		if last := body.Messages[len(body.Messages)-1]; last["role"] != "user" || !strings.HasPrefix(last["content"], fmt.Sprintf("Round %d: 42hi hi", len(body.Messages)/2+1)) {
			t.Errorf("last message %q", last)
		}
	}
	sort.Ints(n)
	if n[0] != 1 || n[1] != 3 {
		t.Errorf("message counts %v, want 1 and 3", n)
	}
}

// An agentic-trace run sends each turn with the whole history, the
// server's real replies included.
func TestEndToEndAgenticReplay(t *testing.T) {
	rs := newRecordingSim(t)
	trace := `{"metadata": {}, "conversations": [
  [{"messages": [{"role": "system", "content": "You are agent A."}, {"role": "user", "content": "task A"}], "prompt_tokens": 10},
   {"messages": [{"role": "tool", "content": "result A1"}]},
   {"messages": [{"role": "user", "content": "finish A"}]}],
  [{"messages": [{"role": "user", "content": "task B"}]},
   {"messages": [{"role": "tool", "content": "result B1"}]},
   {"messages": [{"role": "tool", "content": "result B2"}]}]
]}`
	path := filepath.Join(t.TempDir(), "trace.json")
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, nil, "--backend", "sglang-oai-chat", "--base-url", rs.url, "--model", "benchserve-sim",
		"--tokenizer", "o200k_base", "--dataset-name", "agentic-trace", "--dataset-path", path, "--num-prompts", "0",
		"--sharegpt-output-len", "6", "--warmup-requests", "0", "--output-file", filepath.Join(t.TempDir(), "r.jsonl"))
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "#Conversations: 2 (offset=0, turns/conv min=3 max=3 avg=3.0)") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if got := field(t, stdout, "Successful requests:"); got != "6" {
		t.Errorf("successful requests = %s", got)
	}
	type msg struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	turns := map[string][][]msg{
		"task A": {{{"system", "You are agent A."}, {"user", "task A"}}, {{"tool", "result A1"}}, {{"user", "finish A"}}},
		"task B": {{{"user", "task B"}}, {{"tool", "result B1"}}, {{"tool", "result B2"}}},
	}
	byConv := map[string][]*seen{}
	for _, r := range rs.on("/v1/chat/completions") {
		var body struct {
			Messages []msg `json:"messages"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		key := "task A"
		if strings.Contains(string(r.body), "task B") {
			key = "task B"
		}
		byConv[key] = append(byConv[key], r)
	}
	for key, reqs := range byConv {
		if len(reqs) != 3 {
			t.Fatalf("%s: %d requests", key, len(reqs))
		}
		var history []msg
		for k, r := range reqs {
			history = append(history, turns[key][k]...)
			var body struct {
				Messages []msg `json:"messages"`
			}
			json.Unmarshal(r.body, &body)
			if fmt.Sprint(body.Messages) != fmt.Sprint(history) {
				t.Errorf("%s turn %d sent\n%v\nwant\n%v", key, k+1, body.Messages, history)
			}
			reply := streamedContent(t, r.reply)
			if reply == "" {
				t.Fatalf("%s turn %d: empty reply", key, k+1)
			}
			history = append(history, msg{"assistant", reply})
		}
	}
}

// streamedContent joins the content deltas of a streamed chat completion.
func streamedContent(t *testing.T, sse []byte) string {
	t.Helper()
	var b strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(sse))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("bad chunk %q: %v", data, err)
		}
		for _, c := range chunk.Choices {
			b.WriteString(c.Delta.Content)
		}
	}
	return b.String()
}
