package clock

import (
	"context"
	"testing"
	"time"
)

func TestWaitUntil(t *testing.T) {
	deadline := time.Now().Add(3 * time.Millisecond)
	if !WaitUntil(context.Background(), deadline) {
		t.Fatal("WaitUntil gave up")
	}
	if time.Now().Before(deadline) {
		t.Error("WaitUntil returned before its deadline")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if WaitUntil(ctx, time.Now().Add(time.Hour)) {
		t.Error("WaitUntil ignored a cancelled context")
	}
}

// Deadlines inside the spin window go through the kernel sleep, the
// yielding and the hold; none may return early, and a cancelled context
// still ends the wait.
func TestWaitUntilShort(t *testing.T) {
	for _, d := range []time.Duration{-time.Millisecond, 0, 30 * time.Microsecond, 120 * time.Microsecond,
		250 * time.Microsecond, 600 * time.Microsecond, 1050 * time.Microsecond, 2 * time.Millisecond} {
		deadline := time.Now().Add(d)
		if !WaitUntil(context.Background(), deadline) {
			t.Fatalf("%v: WaitUntil gave up", d)
		}
		if late := time.Since(deadline); late < 0 {
			t.Errorf("%v: returned %v before the deadline", d, -late)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if WaitUntil(ctx, time.Now().Add(600*time.Microsecond)) {
		t.Error("WaitUntil ignored a cancelled context inside the spin window")
	}
}

// An ended context wins over a deadline already past: a caller behind its
// schedule stops when told to.
func TestWaitUntilEndedContextPastDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, deadline := range []time.Time{{}, time.Now().Add(-time.Hour), time.Now()} {
		if WaitUntil(ctx, deadline) {
			t.Errorf("deadline %v in the past: WaitUntil reported true with the context ended", deadline)
		}
	}
}

// The windows are ordered as WaitUntil assumes, and the spin window spans
// Go's rounding of short timer sleeps.
func TestWindows(t *testing.T) {
	if !(0 < holdWindow && holdWindow < spinWindow && spinWindow > time.Millisecond) {
		t.Errorf("hold %v, spin %v", holdWindow, spinWindow)
	}
}
