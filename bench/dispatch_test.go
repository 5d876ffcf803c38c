package bench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"benchserve/backend"
	"benchserve/dataset"
	"benchserve/record"
	"benchserve/schedule"
)

// arrivals is a completions server that notes when each request arrived
// and answers it after hold.
type arrivals struct {
	hold time.Duration
	mu   sync.Mutex
	at   []time.Time
}

func (a *arrivals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	io.Copy(io.Discard, r.Body)
	a.mu.Lock()
	a.at = append(a.at, now)
	a.mu.Unlock()
	time.Sleep(a.hold)
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, "data: {\"choices\": [{\"text\": \"a\"}]}\n\ndata: [DONE]\n\n")
}

// testRunner is a runner of n one-token rows, all due at once, against url.
func testRunner(t *testing.T, url string, n, limit int) *runner {
	t.Helper()
	hc := backend.NewHTTPClient(backend.ClientOptions{KeepAlive: true, MaxConns: max(limit, 64)})
	client, err := backend.New("vllm", url, backend.Options{Stream: true}, nil, hc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.CloseIdleConnections)
	r := &runner{Plan: &Plan{Config: &Config{}, Client: client, Model: "m",
		Rows: make([]dataset.Row, n), Slots: make([]schedule.Slot, n)}, gate: &backend.Gate{}}
	for i := range r.Rows {
		r.Rows[i] = dataset.Row{Text: "x", PromptLen: 1, OutputLen: 1}
	}
	if limit > 0 {
		r.sem = make(chan struct{}, limit)
	}
	return r
}

// After an interrupt no request leaves, even when the dispatcher is behind
// its schedule (rate inf) and slots keep coming free behind a full
// --max-concurrency, or when goroutines already started had not yet sent.
func TestInterruptStopsSending(t *testing.T) {
	behindAndWithoutLimit(t, func(t *testing.T, limit int, srv *arrivals, url string) {
		// Behind the limit, long enough for the first connections even
		// under the race detector on a loaded machine.
		n, after := 100000, 300*time.Millisecond
		if limit == 0 {
			n, after = 3000, 60*time.Millisecond
		}
		r := testRunner(t, url, n, limit)
		ctx, cancel := context.WithCancel(context.Background())
		cuts := make(chan time.Time, 1)
		go func() {
			time.Sleep(after)
			// As the interrupt does: the gate, then the dispatcher.
			r.gate.Close()
			cuts <- time.Now()
			cancel()
		}()
		start := time.Now()
		recs, _, unsent := r.dispatch(ctx, context.Background(), phase{slots: r.Slots, check: &selfCheck{}}, start)
		// When each request began to be written (or to connect, when
		// it had to), by the client's clock: none after the gate closed
		// (the server's own arrival times lag behind a burst of
		// thousands of connections).
		stoppedPartWay(t, srv, recs, unsent, n, limit, start, <-cuts)
	})
}

// behindAndWithoutLimit runs test behind a saturated --max-concurrency 4
// and without a limit, each against its own server that answers after
// 20 ms.
func behindAndWithoutLimit(t *testing.T, test func(t *testing.T, limit int, srv *arrivals, url string)) {
	for _, c := range []struct {
		name  string
		limit int
	}{{"saturated limit", 4}, {"no limit", 0}} {
		t.Run(c.name, func(t *testing.T) {
			srv := &arrivals{hold: 20 * time.Millisecond}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			test(t, c.limit, srv, ts.URL)
		})
	}
}

// stoppedPartWay checks a dispatch of n requests that was stopped at cut:
// every request accounted for, none that began at or after cut, the
// server saw just those sent, and they succeeded. Behind a limit some went
// out before the cut; without one, thousands of new connections may all
// still be dialling then.
func stoppedPartWay(t *testing.T, srv *arrivals, recs []record.Record, unsent, n, limit int, start, cut time.Time) {
	t.Helper()
	if len(recs)+unsent != n {
		t.Errorf("%d records and %d not reached, want %d in all", len(recs), unsent, n)
	}
	sent := 0
	for i := range recs {
		if !recs[i].Sent {
			continue
		}
		sent++
		if at := start.Add(time.Duration(recs[i].Start * 1e9)); !at.Before(cut) {
			t.Fatalf("request %d left %v after the cut", i, at.Sub(cut))
		}
		if !recs[i].Success {
			t.Fatalf("request %d: %s", i, recs[i].Error)
		}
	}
	if sent == n || (limit > 0 && sent == 0) {
		t.Errorf("%d of %d requests sent; want the cut to stop them part-way", sent, n)
	}
	srv.mu.Lock()
	got := len(srv.at)
	srv.mu.Unlock()
	if got != sent {
		t.Errorf("the server saw %d requests, the records say %d were sent", got, sent)
	}
}

// At the end of --duration no request leaves, though thousands of
// goroutines were started before it and many run only after it: every
// request sent began before the end, and the server saw just those.
func TestDurationStopsSendingOnTime(t *testing.T) {
	behindAndWithoutLimit(t, func(t *testing.T, limit int, srv *arrivals, url string) {
		// Behind the limit, long enough for the first connections even
		// under the race detector on a loaded machine.
		n, run := 100000, 300*time.Millisecond
		if limit == 0 {
			n, run = 3000, 50*time.Millisecond
		}
		r := testRunner(t, url, n, limit)
		start := time.Now()
		until := start.Add(run)
		recs, _, unsent := r.dispatch(context.Background(), context.Background(), phase{slots: r.Slots, check: &selfCheck{}, until: until}, start)
		stoppedPartWay(t, srv, recs, unsent, n, limit, start, until)
	})
}

// cancelAfter is a RoundTripper that ends the run's in-flight context as
// each response comes: the grace period running out just after a request
// failed on its own.
type cancelAfter struct {
	rt     http.RoundTripper
	cancel context.CancelFunc
}

func (c cancelAfter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	c.cancel()
	return resp, err
}

// A request that failed on its own keeps its kind, though the grace period
// ended before the run looked at it; only one the interrupt cut counts as
// interrupted.
func TestGraceFailureKeepsKind(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	defer ts.Close()
	inflight, cancel := context.WithCancel(context.Background())
	hc := backend.NewHTTPClient(backend.ClientOptions{KeepAlive: true})
	hc.Transport = cancelAfter{hc.Transport, cancel}
	client, err := backend.New("vllm", ts.URL, backend.Options{Stream: true}, nil, hc)
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{Plan: &Plan{Config: &Config{}, Client: client, Model: "m"}}
	rec := &record.Record{}
	r.send(inflight, &backend.Input{Text: "x", OutputLen: 1}, rec, time.Now(), nil, nil)
	if rec.Success || rec.ErrorKind != record.KindHTTP5xx {
		t.Errorf("kind %q (%s), want %s", rec.ErrorKind, rec.Error, record.KindHTTP5xx)
	}
}

// gatedCounter's count of a reply waits until the server has seen want
// requests (or gives up after a while): it can only finish if the next
// request is sent while the reply before is being counted.
type gatedCounter struct {
	srv  *arrivals
	want int
}

func (g gatedCounter) Count(text string) int {
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		g.srv.mu.Lock()
		n := len(g.srv.at)
		g.srv.mu.Unlock()
		if n >= g.want {
			return len(text)
		}
		time.Sleep(time.Millisecond)
	}
	return -1
}

// Counting a reply's tokens happens off its concurrency slot: with one
// slot, the second request leaves while the first reply is still being
// counted (the counter waits for it), and both are counted.
func TestCountingDoesNotHoldTheSlot(t *testing.T) {
	srv := &arrivals{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	r := testRunner(t, ts.URL, 2, 1)
	client, err := backend.New("vllm", ts.URL, backend.Options{Stream: true, Counter: gatedCounter{srv, 2}, DeferCount: true, DropText: true}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.CloseIdleConnections()
	r.Client = client
	recs, _, _ := r.dispatch(context.Background(), context.Background(), phase{slots: r.Slots, check: &selfCheck{}}, time.Now())
	for i := range recs {
		if !recs[i].Success || !recs[i].TextCounted || recs[i].TextTokens != 1 || recs[i].Text != "" {
			t.Errorf("request %d: success %v, counted %v (%d tokens), text %q: the count waited for a send the slot held up", i, recs[i].Success, recs[i].TextCounted, recs[i].TextTokens, recs[i].Text)
		}
	}
}
