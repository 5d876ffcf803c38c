// Package clock waits for deadlines on the monotonic clock more precisely
// than a timer does. It is neutral ground: the client's pacer (package
// schedule) and the simulated server (package sim) both wait with it, and
// neither depends on the other.
package clock

import (
	"context"
	"runtime"
	"time"
)

// spinWindow is how close to a deadline WaitUntil stops sleeping and starts
// yielding: Go rounds short timer sleeps up to about a millisecond, so a
// plain sleep to the deadline would leave late.
const spinWindow = 1100 * time.Microsecond

// holdWindow is the last stretch before a deadline in which WaitUntil spins
// without yielding.
const holdWindow = 50 * time.Microsecond

// WaitUntil blocks until the monotonic clock reaches deadline or ctx ends,
// sleeping while far away and yielding the processor for the last stretch.
// It reports false if ctx ended first, and at once when ctx has already
// ended, even for a deadline in the past: a caller that is behind its
// schedule must still stop when told to.
func WaitUntil(ctx context.Context, deadline time.Time) bool {
	for {
		if ctx.Err() != nil {
			return false
		}
		d := time.Until(deadline)
		if d <= 0 {
			return true
		}
		if d > spinWindow {
			t := time.NewTimer(d - spinWindow)
			select {
			case <-ctx.Done():
				t.Stop()
				return false
			case <-t.C:
			}
			continue
		}
		// Yield to other goroutines while there is time; for the last
		// stretch keep the processor, so a goroutine that runs long when
		// the deadline comes cannot make the release late.
		if d > holdWindow {
			runtime.Gosched()
		}
	}
}

// SleepUntil is WaitUntil on a plain timer, as late as the timer is
// (about a millisecond), without the spin: for waits that need no
// better (the metrics scraper's), and for tests in a synctest bubble,
// where time moves only once every goroutine is blocked, so that
// WaitUntil's last stretch would never end.
func SleepUntil(ctx context.Context, deadline time.Time) bool {
	if ctx.Err() != nil {
		return false
	}
	d := time.Until(deadline)
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
