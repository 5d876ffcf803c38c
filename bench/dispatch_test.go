package bench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"benchserve/backend"
	"benchserve/internal/py/pyrand"
	"benchserve/record"
	"benchserve/schedule"
)

// These tests run the dispatcher in a synctest bubble against memServer:
// time moves only by the schedule and the server's hold, so every send
// time is exact.

// A dispatch stopped part-way: the server answers after 20 ms; either
// every request is due at once behind a full --max-concurrency 4 (the
// dispatcher behind its schedule, slots coming free every 20 ms), or one
// is due every millisecond without a limit. Stopped at stop (off the
// times anything happens), sent requests went out at want(i), and the
// last reply ended at last.
type stopCase struct {
	name  string
	limit int
	slots []schedule.Slot // nil: 1000 due at once
	stop  time.Duration
	sent  int
	want  func(i int) time.Duration
	last  time.Duration
}

var stopCases = []stopCase{
	{name: "saturated limit", limit: 4, stop: 90 * time.Millisecond, sent: 20,
		want: func(i int) time.Duration { return time.Duration(i/4) * 20 * time.Millisecond }, last: 100 * time.Millisecond},
	{name: "no limit", slots: every(1000, time.Millisecond), stop: 50500 * time.Microsecond, sent: 51,
		want: func(i int) time.Duration { return time.Duration(i) * time.Millisecond }, last: 70 * time.Millisecond},
}

// After an interrupt no request leaves: those sent went out exactly when
// the schedule and the limit let them, before it, and the rest were
// never written.
func TestInterruptStopsSending(t *testing.T) {
	for _, c := range stopCases {
		t.Run(c.name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				srv := &memServer{hold: 20 * time.Millisecond}
				r := memRunner(t, srv, 1000, c.limit, c.slots)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				start := time.Now()
				go func() {
					time.Sleep(c.stop)
					// As the interrupt does: the gate, then the dispatcher.
					r.gate.Close()
					cancel()
				}()
				recs, last, unsent := r.dispatch(ctx, context.Background(), phase{slots: r.Slots, check: &selfCheck{}}, start)
				stoppedAt(t, c, srv, recs, last, unsent, start)
			})
		})
	}
}

// At the end of --duration no request leaves; those before it went out
// on time, and the run waited for their replies.
func TestDurationStopsSendingOnTime(t *testing.T) {
	for _, c := range stopCases {
		t.Run(c.name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				srv := &memServer{hold: 20 * time.Millisecond}
				r := memRunner(t, srv, 1000, c.limit, c.slots)
				start := time.Now()
				ph := phase{slots: r.Slots, check: &selfCheck{}, until: start.Add(c.stop)}
				recs, last, unsent := r.dispatch(context.Background(), context.Background(), ph, start)
				stoppedAt(t, c, srv, recs, last, unsent, start)
			})
		})
	}
}

// stoppedAt checks a dispatch stopped as c says: every request accounted
// for, the first c.sent sent at their times and answered, none after,
// the server saw just those, and the last reply's end.
func stoppedAt(t *testing.T, c stopCase, srv *memServer, recs []record.Record, last time.Time, unsent int, start time.Time) {
	t.Helper()
	n := 1000
	if len(recs)+unsent != n {
		t.Errorf("%d records and %d not reached, want %d in all", len(recs), unsent, n)
	}
	sent := 0
	for i := range recs {
		if !recs[i].Sent {
			continue
		}
		sent++
		if at := sinceStart(recs[i].Start); at != c.want(i) || !recs[i].Success {
			t.Errorf("request %d sent at %v (success %v: %s), want %v", i, at, recs[i].Success, recs[i].Error, c.want(i))
		}
	}
	if sent != c.sent {
		t.Errorf("%d requests sent, want %d (by %v)", sent, c.sent, c.stop)
	}
	at := srv.arrivals()
	if len(at) != sent {
		t.Errorf("the server saw %d requests, the records say %d were sent", len(at), sent)
	}
	for i, a := range at {
		if a.Sub(start) != c.want(i) {
			t.Errorf("request %d reached the server at %v, want %v", i, a.Sub(start), c.want(i))
		}
	}
	if got := last.Sub(start); got != c.last {
		t.Errorf("the last reply ended at %v, want %v", got, c.last)
	}
}

// Every request leaves at its planned time, or, when the concurrency
// limit holds it back, as the reply it waits for ends: request i at
// max(planned i, request i-1's send, request i-3's end) under
// --max-concurrency 3 with replies of 50 ms, over a Poisson schedule of
// 50 req/s; the pacer is never late.
func TestDispatchKeepsTheSchedule(t *testing.T) {
	slots, err := schedule.Plan(200, schedule.Arrival{Rate: 50, Burstiness: 1}, schedule.LoRA{}, pyrand.NewPython(1), pyrand.NewNumPy(1))
	if err != nil {
		t.Fatal(err)
	}
	const limit, hold = 3, 50 * time.Millisecond
	want := make([]time.Duration, len(slots))
	held := 0
	for i, s := range slots {
		want[i] = s.At
		if i > 0 {
			want[i] = max(want[i], want[i-1])
		}
		if i >= limit {
			want[i] = max(want[i], want[i-limit]+hold)
		}
		if want[i] > s.At {
			held++
		}
	}
	if held < 20 || held > len(slots)-20 {
		t.Fatalf("%d of %d requests held back by the limit: the case tests little", held, len(slots))
	}
	bubble(t, func(t *testing.T) {
		srv := &memServer{hold: hold}
		r := memRunner(t, srv, 0, limit, slots)
		check := &selfCheck{}
		start := time.Now()
		recs, last, unsent := r.dispatch(context.Background(), context.Background(), phase{slots: r.Slots, check: check}, start)
		if len(recs) != len(slots) || unsent != 0 {
			t.Fatalf("%d records, %d unsent", len(recs), unsent)
		}
		for i := range recs {
			if at := sinceStart(recs[i].Start); at != want[i] || sinceStart(recs[i].Intended) != slots[i].At || !recs[i].Success {
				t.Errorf("request %d: sent at %v, planned %v, want %v and %v", i, at, sinceStart(recs[i].Intended), want[i], slots[i].At)
			}
		}
		if got := last.Sub(start); got != want[len(want)-1]+hold {
			t.Errorf("the last reply ended at %v, want %v", got, want[len(want)-1]+hold)
		}
		for i, lag := range check.lags {
			if lag != 0 {
				t.Errorf("request %d: the pacer released it %v s late", i, lag)
			}
		}
	})
}

// --concurrency-ramp-duration: the cap of 4 starts at 1 and rises by one
// at each step (100, 200, 300 ms). Eight requests due at once, each
// answered in 250 ms, go out at 0, at the steps 100 and 200, at 250 (the
// first reply's end), at the last step 300, then as replies end: 350,
// 450, 500.
func TestConcurrencyRampSteps(t *testing.T) {
	bubble(t, func(t *testing.T) {
		srv := &memServer{hold: 250 * time.Millisecond}
		r := memRunner(t, srv, 8, 4, nil)
		r.capSteps = []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond}
		start := time.Now()
		recs, _, _ := r.dispatch(context.Background(), context.Background(), phase{slots: r.Slots, check: &selfCheck{}, capRamp: true}, start)
		want := []time.Duration{0, 100, 200, 250, 300, 350, 450, 500}
		for i := range recs {
			if at := sinceStart(recs[i].Start); at != want[i]*time.Millisecond {
				t.Errorf("request %d sent at %v, want %v", i, at, want[i]*time.Millisecond)
			}
		}
	})
}

// --warmup-duration 1: the warmup's own plan (10 req/s, constant) sends
// the 10 requests planned before the second is up; a closed loop of 2
// (replies of 300 ms) sends 2 at 0, 300, 600 and 900 ms, and none at
// 1200; the requests in flight at the end finish before the warmup does.
func TestWarmupByTime(t *testing.T) {
	planned, err := schedule.PlanFor(time.Second, schedule.Arrival{Rate: 10, Constant: true, Burstiness: 1}, schedule.LoRA{}, pyrand.NewPython(1), pyrand.NewNumPy(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		slots  []schedule.Slot
		cyclic bool
		limit  int
		want   []time.Duration
	}{
		{"planned", planned, false, 0, []time.Duration{0, 100, 200, 300, 400, 500, 600, 700, 800, 900}},
		{"closed loop", make([]schedule.Slot, 2), true, 2, []time.Duration{0, 0, 300, 300, 600, 600, 900, 900}},
	} {
		t.Run(c.name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				srv := &memServer{hold: 300 * time.Millisecond}
				r := memRunner(t, srv, 0, c.limit, c.slots)
				r.Env.Stdout = io.Discard
				r.traffic.warmup, r.warmupSlots, r.warmupCyclic = time.Second, c.slots, c.cyclic
				start := time.Now()
				sent, err := r.warmupFor(context.Background())
				if err != nil || sent != len(c.want) {
					t.Fatalf("%d sent (%v), want %d", sent, err, len(c.want))
				}
				for i, a := range srv.arrivals() {
					if a.Sub(start) != c.want[i]*time.Millisecond {
						t.Errorf("warmup request %d at %v, want %v", i, a.Sub(start), c.want[i]*time.Millisecond)
					}
				}
				if end := time.Since(start); end != c.want[len(c.want)-1]*time.Millisecond+300*time.Millisecond {
					t.Errorf("the warmup ended at %v, before its last reply or long after", end)
				}
			})
		})
	}
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
// requests (or gives up after a minute): it can only finish if the next
// request is sent while the reply before is being counted.
type gatedCounter struct {
	srv  *memServer
	want int
}

func (g gatedCounter) Count(text string) int {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if len(g.srv.arrivals()) >= g.want {
			return len(text)
		}
	}
	return -1
}

// Counting a reply's tokens happens off its concurrency slot: with one
// slot, the second request leaves while the first reply is still being
// counted (the counter waits for it), and both are counted.
func TestCountingDoesNotHoldTheSlot(t *testing.T) {
	bubble(t, func(t *testing.T) {
		srv := &memServer{}
		r := memRunner(t, srv, 2, 1, nil)
		r.Client = memClient(t, srv, backend.Options{Counter: gatedCounter{srv, 2}, DeferCount: true, DropText: true})
		recs, _, _ := r.dispatch(context.Background(), context.Background(), phase{slots: r.Slots, check: &selfCheck{}}, time.Now())
		for i := range recs {
			if !recs[i].Success || !recs[i].TextCounted || recs[i].TextTokens != 1 || recs[i].Text != "" {
				t.Errorf("request %d: success %v, counted %v (%d tokens), text %q: the count waited for a send the slot held up", i, recs[i].Success, recs[i].TextCounted, recs[i].TextTokens, recs[i].Text)
			}
		}
	})
}
