package clock

import (
	"context"
	"testing"
	"testing/synctest"
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

// SleepUntil returns at its deadline, to the nanosecond on the bubble's
// clock; at once for a deadline past; false when the context ends first,
// or had ended, even for a deadline past.
func TestSleepUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if !SleepUntil(context.Background(), start.Add(1500*time.Microsecond)) || time.Since(start) != 1500*time.Microsecond {
			t.Errorf("returned after %v, want 1.5ms", time.Since(start))
		}
		start = time.Now()
		if !SleepUntil(context.Background(), start.Add(-time.Hour)) || time.Since(start) != 0 {
			t.Error("a deadline past: did not return at once")
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start = time.Now()
		if SleepUntil(ctx, start.Add(time.Hour)) || time.Since(start) != time.Second {
			t.Errorf("the context ended after 1s: returned true or after %v", time.Since(start))
		}
		if SleepUntil(ctx, time.Now().Add(-time.Hour)) {
			t.Error("an ended context and a deadline past: reported true")
		}
	})
}
