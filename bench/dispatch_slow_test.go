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
	"benchserve/internal/testenv"
	"benchserve/record"
	"benchserve/schedule"
)

// The tests in this file stop dispatches over real sockets, through the
// client's own transport (on Linux its event loop): there the gate, not
// only the dispatcher, keeps a request whose goroutine ran late from
// being written after the cut. They need real time (the slow tier); their
// bounds hold however slowly either side runs. dispatch_test.go checks
// the dispatcher's times exactly, in a synctest bubble.

// arrivals is a completions server that notes when each request arrived
// and answers it after hold.
type arrivals struct {
	hold time.Duration
	mu   sync.Mutex
	at   []time.Time
	// seen, when set, receives the count of requests seen after each.
	seen chan int
}

func (a *arrivals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	io.Copy(io.Discard, r.Body)
	a.mu.Lock()
	a.at = append(a.at, now)
	n := len(a.at)
	a.mu.Unlock()
	if a.seen != nil {
		select {
		case a.seen <- n:
		default:
		}
	}
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

// behindAndWithoutLimit runs test against a server that answers after
// 20 ms: 1,000 requests due at once behind a saturated --max-concurrency
// 4 (5 s of work at the least), and 3,000 due one a millisecond without
// a limit (3 s of schedule).
func behindAndWithoutLimit(t *testing.T, test func(t *testing.T, limit int, slots []schedule.Slot, srv *arrivals, url string)) {
	for _, c := range []struct {
		name  string
		limit int
		slots []schedule.Slot
	}{{"saturated limit", 4, make([]schedule.Slot, 1000)}, {"no limit", 0, every(3000, time.Millisecond)}} {
		t.Run(c.name, func(t *testing.T) {
			srv := &arrivals{hold: 20 * time.Millisecond, seen: make(chan int, 1)}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			test(t, c.limit, c.slots, srv, ts.URL)
		})
	}
}

// After an interrupt no request leaves, over real sockets: the cut comes
// once the server has seen 8 requests, and no request sent began at or
// after it.
func TestInterruptStopsSendingOverSockets(t *testing.T) {
	testenv.Slow(t)
	behindAndWithoutLimit(t, func(t *testing.T, limit int, slots []schedule.Slot, srv *arrivals, url string) {
		r := testRunner(t, url, len(slots), limit)
		r.Slots = slots
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cuts := make(chan time.Time, 1)
		go func() {
			for n := range srv.seen {
				if n >= 8 {
					break
				}
			}
			// As the interrupt does: the gate, then the dispatcher.
			r.gate.Close()
			cuts <- time.Now()
			cancel()
		}()
		start := time.Now()
		recs, _, unsent := r.dispatch(ctx, context.Background(), phase{slots: r.Slots, check: &selfCheck{}}, start)
		stoppedPartWay(t, srv, recs, unsent, len(slots), start, <-cuts)
	})
}

// At the end of --duration (1 s) no request leaves, over real sockets,
// though many goroutines started before it may run only after it.
func TestDurationStopsSendingOverSockets(t *testing.T) {
	testenv.Slow(t)
	behindAndWithoutLimit(t, func(t *testing.T, limit int, slots []schedule.Slot, srv *arrivals, url string) {
		r := testRunner(t, url, len(slots), limit)
		r.Slots = slots
		start := time.Now()
		until := start.Add(time.Second)
		recs, _, unsent := r.dispatch(context.Background(), context.Background(), phase{slots: r.Slots, check: &selfCheck{}, until: until}, start)
		stoppedPartWay(t, srv, recs, unsent, len(slots), start, until)
	})
}

// stoppedPartWay checks a dispatch of n requests that was stopped at cut:
// every request accounted for, none that began at or after cut, the
// server saw just those sent, they succeeded, and some were not sent.
func stoppedPartWay(t *testing.T, srv *arrivals, recs []record.Record, unsent, n int, start, cut time.Time) {
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
		// When the request began to be written (or to connect, when it
		// had to), by the client's clock.
		if at := start.Add(time.Duration(recs[i].Start * 1e9)); !at.Before(cut) {
			t.Fatalf("request %d left %v after the cut", i, at.Sub(cut))
		}
		if !recs[i].Success {
			t.Fatalf("request %d: %s", i, recs[i].Error)
		}
	}
	if sent == n || sent == 0 {
		t.Errorf("%d of %d requests sent; want the cut to stop them part-way", sent, n)
	}
	srv.mu.Lock()
	got := len(srv.at)
	srv.mu.Unlock()
	if got != sent {
		t.Errorf("the server saw %d requests, the records say %d were sent", got, sent)
	}
}
