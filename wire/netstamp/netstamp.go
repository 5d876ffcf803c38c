// Package netstamp reads TCP connections together with the kernel's receive
// time of the bytes read, so that a byte's arrival is when it reached the
// machine, not when a busy process got round to reading it. On Linux a
// connection asks for SO_TIMESTAMPNS and reads with recvmsg; elsewhere, or
// where the kernel declines, connections are left as they are and
// callers fall back to the time of the read.
package netstamp

import "time"

// Stamped is a connection that knows when the bytes it last read reached
// its socket: for TCP, the kernel's receive time of the last segment read,
// as Unix nanoseconds; 0 when unknown.
type Stamped interface{ LastArrival() int64 }

// MaxAge bounds how old a receive time may be and still stand for the
// bytes just read; an older one is a clock step or a stale stamp.
const MaxAge = time.Minute

// At returns the instant of the receive time ns on now's monotonic clock:
// now moved back by the stamp's age (the wall clock and the monotonic clock
// of now are read together). It is now itself when ns is 0, in the future,
// or older than MaxAge.
func At(now time.Time, ns int64) time.Time {
	if ns == 0 {
		return now
	}
	age := time.Duration(now.UnixNano() - ns)
	if age <= 0 || age > MaxAge {
		return now
	}
	return now.Add(-age)
}
