package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"benchserve/backend"
	"benchserve/dataset"
	"benchserve/schedule"
	"benchserve/tokenizer"
)

// chatServer answers /v1/models and streamed chat completions of two
// chunks, keeping each request's messages.
type chatServer struct {
	mu       sync.Mutex
	messages [][]map[string]string
	// onChat, when set, is called as each chat request comes.
	onChat func()
}

func (c *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/models":
		io.WriteString(w, `{"data": [{"id": "found-model"}]}`)
		return
	case "/v1/chat/completions", "/v1/completions":
	default:
		http.NotFound(w, r)
		return
	}
	var body struct {
		Messages []map[string]string `json:"messages"`
	}
	json.NewDecoder(r.Body).Decode(&body)
	c.mu.Lock()
	c.messages = append(c.messages, body.Messages)
	n := len(c.messages)
	on := c.onChat
	c.mu.Unlock()
	if on != nil && r.URL.Path == "/v1/chat/completions" {
		on()
	}
	w.Header().Set("Content-Type", "text/event-stream")
	if r.URL.Path == "/v1/completions" {
		io.WriteString(w, "data: {\"choices\": [{\"text\": \"a\"}]}\n\ndata: {\"choices\": [{\"text\": \"b\", \"finish_reason\": \"length\"}]}\n\ndata: [DONE]\n\n")
		return
	}
	reply := strings.Repeat("r", n)
	io.WriteString(w, "data: {\"choices\": [{\"delta\": {\"content\": \""+reply+"\"}}]}\n\n")
	io.WriteString(w, "data: {\"choices\": [{\"delta\": {\"content\": \"!\"}, \"finish_reason\": \"stop\"}]}\n\ndata: [DONE]\n\n")
}

// sent is the messages of the requests so far; reset forgets them.
func (c *chatServer) sent() [][]map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.messages
}

func (c *chatServer) reset(onChat func()) {
	c.mu.Lock()
	c.messages, c.onChat = nil, onChat
	c.mu.Unlock()
}

// testConfig is a run of n random-ids prompts against url, as the flags'
// defaults would make it.
func testConfig(url string, n int) *Config {
	tok := "o200k_base"
	cfg := &Config{BaseURL: &url, Host: "127.0.0.1", Tokenizer: &tok, DatasetName: "random-ids",
		RequestRate: math.Inf(1), Arrival: "poisson", Burstiness: 1, LoraDistribution: "uniform", LoraZipfAlpha: 1.5,
		TopP: 1, LogprobStartLen: -1, FlushCacheTimeout: 60, ConnectTimeout: 30}
	cfg.Backend, cfg.NumPrompts, cfg.Seed = "vllm", n, 42
	cfg.RandomInputLen, cfg.RandomOutputLen, cfg.RandomRangeRatio = 8, 2, 1
	cfg.MooncakeSlowdown, cfg.MooncakeNumRounds, cfg.MooncakeWorkload = 1, 1, "conversation"
	cfg.GSPNumTurns, cfg.GSPRangeRatio, cfg.GSPGroupDistribution = 1, 1, "uniform"
	cfg.ImageCount, cfg.ImageResolution, cfg.ImageFormat, cfg.ImageContent = 1, "1080p", "jpeg", "random"
	return cfg
}

func testEnv(t *testing.T) (Env, *bytes.Buffer) {
	var out bytes.Buffer
	return Env{Stdout: &out, Stderr: io.Discard, Getenv: func(string) string { return "" },
		Namespace: func(c *Config) string {
			if c.Model == nil {
				return "Namespace(model=None)"
			}
			return "Namespace(model=" + *c.Model + ")"
		}}, &out
}

// Prepare finds the model the server lists, prints it in the second
// Namespace line, and plans one slot a row; Execute sends them all and
// Summarize counts them, with the self-check and the output file's line.
func TestStages(t *testing.T) {
	srv := httptest.NewServer(&chatServer{})
	defer srv.Close()
	cfg := testConfig(srv.URL, 6)
	limit := 2
	cfg.MaxConcurrency = &limit
	file := filepath.Join(t.TempDir(), "r.jsonl")
	cfg.OutputFile = &file
	env, out := testEnv(t)
	p, err := Prepare(context.Background(), cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Model != "found-model" || len(p.Rows) != 6 || len(p.Slots) != 6 || !p.Closed() {
		t.Fatalf("model %q, %d rows, %d slots, closed %v", p.Model, len(p.Rows), len(p.Slots), p.Closed())
	}
	if !strings.Contains(out.String(), "Namespace(model=found-model)\n\n") {
		t.Errorf("printed:\n%s", out.String())
	}
	// One plan, two executions (as a sweep runs them).
	for round := range 2 {
		e, err := Execute(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Records) != 6 || e.Stopped || e.Duration <= 0 || e.Start.IsZero() {
			t.Fatalf("round %d: %d records, stopped %v, duration %v", round, len(e.Records), e.Stopped, e.Duration)
		}
		res := Summarize(p, e)
		if res.Summary.Completed != 6 || res.Check.MaxInflight > limit || res.Check.MaxInflight < 1 || res.Check.Anchored != nil {
			t.Errorf("round %d: completed %d, max in flight %d, anchored %v", round, res.Summary.Completed, res.Check.MaxInflight, res.Check.Anchored)
		}
		if res.Summary.TotalOutput != 12 || res.Check.Sources[2] != 0 {
			t.Errorf("round %d: output %d (finish_reason length: the requested 2 each)", round, res.Summary.TotalOutput)
		}
		if line := string(res.Line()); !strings.Contains(line, `"completed": 6`) || !strings.Contains(line, `"client_version": "`) {
			t.Errorf("round %d: line %.200s", round, line)
		}
	}
}

// A conversation sends its whole history each round, the server's replies
// in it; each round after the first is due when the round before ended;
// and an interrupt between rounds sends no more of them.
func TestConversation(t *testing.T) {
	srv := &chatServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	r := testRunner(t, ts.URL, 1, 1)
	client, err := backend.New("vllm-chat", ts.URL, backend.Options{Stream: true}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.CloseIdleConnections()
	r.Client = client
	if r.Tok, err = tokenizer.Resolve(context.Background(), "o200k_base", tokenizer.ResolveOptions{}); err != nil {
		t.Fatal(err)
	}
	r.Rows = []dataset.Row{{Turns: [][]byte{[]byte(`[{"role": "user", "content": "one"}]`),
		[]byte(`[{"role": "user", "content": "two"}]`), []byte(`[{"role": "user", "content": "three"}]`)}, OutputLen: 2}}
	r.Slots = []schedule.Slot{{}}
	recs, _, _ := r.dispatch(context.Background(), context.Background(), phase{slots: r.Slots, check: &selfCheck{}}, time.Now())
	if len(srv.sent()) != 3 {
		t.Fatalf("%d rounds sent", len(srv.sent()))
	}
	last := srv.sent()[2]
	roles := []string{}
	for _, m := range last {
		roles = append(roles, m["role"]+":"+m["content"])
	}
	if got := strings.Join(roles, " "); got != "user:one assistant:r! user:two assistant:rr! user:three" {
		t.Errorf("third round's messages: %s", got)
	}
	for k := 1; k < 3; k++ {
		if recs[k].Intended < recs[k-1].Start+recs[k-1].Latency-1e-3 || !recs[k].Success {
			t.Errorf("round %d due at %v, the round before ended at %v", k, recs[k].Intended, recs[k-1].Start+recs[k-1].Latency)
		}
	}

	// Interrupted during the first round: the others are not sent.
	ctx, cancel := context.WithCancel(context.Background())
	srv.reset(cancel)
	recs, _, _ = r.dispatch(ctx, context.Background(), phase{slots: r.Slots, check: &selfCheck{}}, time.Now())
	if len(srv.sent()) != 1 || !recs[0].Sent || recs[1].Sent || recs[2].Sent {
		t.Errorf("%d rounds sent after an interrupt in the first; sent %v %v %v", len(srv.sent()), recs[0].Sent, recs[1].Sent, recs[2].Sent)
	}
}

// A conversation whose second round fails sends no more rounds: they are
// counted as not sent, with the reason, and not as failures (two
// conversations of four rounds, each failing in round 2: 2 failed, 4 not
// sent).
func TestConversationFailedRound(t *testing.T) {
	var mu sync.Mutex
	n := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []map[string]string `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		n++
		mu.Unlock()
		if len(body.Messages) > 1 {
			http.Error(w, `{"error": {"message": "slot unavailable"}}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\": [{\"delta\": {\"content\": \"r\"}, \"finish_reason\": \"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer ts.Close()
	r := testRunner(t, ts.URL, 2, 2)
	client, err := backend.New("vllm-chat", ts.URL, backend.Options{Stream: true}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.CloseIdleConnections()
	r.Client = client
	if r.Tok, err = tokenizer.Resolve(context.Background(), "o200k_base", tokenizer.ResolveOptions{}); err != nil {
		t.Fatal(err)
	}
	var turns [][]byte
	for _, s := range []string{"one", "two", "three", "four"} {
		turns = append(turns, []byte(`[{"role": "user", "content": "`+s+`"}]`))
	}
	r.Rows = []dataset.Row{{Turns: turns, OutputLen: 2}, {Turns: turns, OutputLen: 2}}
	recs, _, _ := r.dispatch(context.Background(), context.Background(), phase{slots: r.Slots, check: &selfCheck{}}, time.Now())
	mu.Lock()
	sent := n
	mu.Unlock()
	if sent != 4 || len(recs) != 8 {
		t.Fatalf("%d requests sent, %d records", sent, len(recs))
	}
	for _, k := range []int{2, 3, 6, 7} {
		if recs[k].Sent || recs[k].Error != "not sent: round 2 of its conversation failed" {
			t.Errorf("round %d: sent %v, error %q", k%4+1, recs[k].Sent, recs[k].Error)
		}
	}
	kept, skipped := skippedRounds(recs)
	failed := 0
	for _, rec := range kept {
		if !rec.Success {
			failed++
		}
	}
	if len(kept) != 4 || skipped != 4 || failed != 2 {
		t.Errorf("kept %d, skipped %d, failed %d; want 4, 4, 2", len(kept), skipped, failed)
	}
}
