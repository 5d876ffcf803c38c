package bench

import (
	"io"
	"math"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"benchserve/backend"
	"benchserve/dataset"
	iclock "benchserve/internal/clock"
	"benchserve/schedule"
)

// bubble runs f in a synctest bubble. The pooled request scratch it
// leaves behind carries no channel of the bubble (the event loop makes
// its own on first use), so the tests after it may use it.
func bubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	synctest.Test(t, f)
}

// memServer is a completions server in memory, for tests in a synctest
// bubble: an http.RoundTripper that notes when each request arrived and
// streams its reply (one token, then [DONE]) through a pipe, the token
// hold after the request. Reads and writes on the pipe block durably, so
// the bubble's clock moves only by the server's hold and the schedule.
type memServer struct {
	hold time.Duration
	mu   sync.Mutex
	at   []time.Time
	// keep: bodies holds each request's body, in order.
	keep   bool
	bodies [][]byte
}

func (m *memServer) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body.Close()
	}
	m.mu.Lock()
	m.at = append(m.at, time.Now())
	if m.keep {
		m.bodies = append(m.bodies, body)
	}
	m.mu.Unlock()
	pr, pw := io.Pipe()
	ctx := req.Context()
	go func() {
		if !iclock.SleepUntil(ctx, time.Now().Add(m.hold)) {
			pw.CloseWithError(ctx.Err())
			return
		}
		io.WriteString(pw, "data: {\"choices\": [{\"text\": \"a\"}]}\n\n")
		io.WriteString(pw, "data: [DONE]\n\n")
		pw.Close()
	}()
	return &http.Response{Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: pr, ContentLength: -1, Request: req}, nil
}

// arrivals are the times requests reached the server, in order.
func (m *memServer) arrivals() []time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]time.Time(nil), m.at...)
}

// memClient is a client whose requests go to srv, through the client
// NewHTTPClient makes with its transport replaced.
func memClient(t *testing.T, srv *memServer, opt backend.Options) *backend.Client {
	t.Helper()
	hc := backend.NewHTTPClient(backend.ClientOptions{KeepAlive: true})
	hc.Transport = srv
	opt.Stream = true
	client, err := backend.New("vllm", "http://server.test", opt, nil, hc)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// memRunner is a runner of one-token rows sent at slots (all at once
// when nil, n of them) to srv, with the concurrency limit (0: none), and
// the pacer on the bubble's timers.
func memRunner(t *testing.T, srv *memServer, n, limit int, slots []schedule.Slot) *runner {
	t.Helper()
	if slots == nil {
		slots = make([]schedule.Slot, n)
	}
	r := &runner{Plan: &Plan{Config: &Config{}, Client: memClient(t, srv, backend.Options{}), Model: "m",
		Rows: make([]dataset.Row, len(slots)), Slots: slots}, gate: &backend.Gate{}, wait: iclock.SleepUntil}
	for i := range r.Rows {
		r.Rows[i] = dataset.Row{Text: "x", PromptLen: 1, OutputLen: 1}
	}
	if limit > 0 {
		r.sem = make(chan struct{}, limit)
	}
	return r
}

// every is n slots d apart, from 0.
func every(n int, d time.Duration) []schedule.Slot {
	s := make([]schedule.Slot, n)
	for i := range s {
		s[i].At = time.Duration(i) * d
	}
	return s
}

// sinceStart is a record's time (seconds since the run's start) as a
// duration, to the nanosecond the bubble's clock keeps.
func sinceStart(sec float64) time.Duration { return time.Duration(math.Round(sec * 1e9)) }
