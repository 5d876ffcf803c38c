package http1

import (
	"io"
	"time"

	"benchserve/internal/hist"
	"benchserve/wire/netstamp"
)

// This file is the client's policy for when response bytes arrived. A
// body's bytes are timed with the kernel's receive time of the newest of
// them when the connection knows it (netstamp.Stamped), else with the time
// their read returned; a stamp is never before the request's send time
// (the floor, against a wall clock stepped while it ran) nor before the
// stamp of the read before, so that a response's times never run
// backwards.

// ReadClock is the reader a line reader (package sse) reads a body from
// an http.Response through (RoundTrip's, for a caller that pulls): it
// passes each Read on to the body and times it. The line reader returns
// each line before reading again, so when it returns a line, At is that
// line's time.
type ReadClock struct {
	r      io.Reader
	stamps netstamp.Stamped // r, when it knows when its bytes arrived
	floor  time.Time        // no stamp is earlier
	// At is when the bytes of the last Read arrived.
	At time.Time
	// delay is how long the bytes of the last Read that returned any
	// waited in the socket: from the kernel's receive time of the newest
	// of them to the Read's return (0 when the Read had no receive time).
	delay time.Duration
	// reads counts the Reads that returned bytes, kernelReads those of
	// them timed with the kernel's receive time.
	reads, kernelReads int
	// delays, when set, counts the delay of each kernel-timed Read.
	delays *hist.Few
}

// Reset makes the clock time the Reads of r, stamping none before floor
// and counting the read delays in delays (nil: not counted).
func (c *ReadClock) Reset(r io.Reader, floor time.Time, delays *hist.Few) {
	*c = ReadClock{r: r, floor: floor, delays: delays}
	c.stamps, _ = r.(netstamp.Stamped)
}

// Read reads from the body and times the Read.
func (c *ReadClock) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	var kernel bool
	var delay time.Duration
	c.At, delay, kernel = arrival(c.stamps, n, c.floor, c.At)
	if n > 0 {
		c.reads++
		c.delay = delay
		if kernel {
			c.kernelReads++
			if c.delays != nil {
				c.delays.Add(delay)
			}
		}
	}
	return n, err
}

// KernelTimed reports whether every Read that returned bytes since reset
// was timed with the kernel's receive time (false if none returned any).
func (c *ReadClock) KernelTimed() bool { return c.reads > 0 && c.kernelReads == c.reads }

// arrival is when the n bytes a Read just returned arrived: now, or the
// kernel's receive time when stamps (the body as a netstamp.Stamped, or
// nil) knows it (kernel is then true, and delay is how long the bytes
// waited: from that time to now); never before floor nor before prev, the
// stamp of the Read before.
func arrival(stamps netstamp.Stamped, n int, floor, prev time.Time) (at time.Time, delay time.Duration, kernel bool) {
	var ns int64
	if stamps != nil && n > 0 {
		ns = stamps.LastArrival()
	}
	return arrivalAt(time.Now(), ns, floor, prev)
}

// arrivalAt is arrival for a read that returned at now with the kernel's
// receive time ns (Unix ns; 0: none).
func arrivalAt(now time.Time, ns int64, floor, prev time.Time) (at time.Time, delay time.Duration, kernel bool) {
	at = now
	if ns != 0 {
		if k := netstamp.At(now, ns); !k.Equal(now) {
			at, delay, kernel = k, now.Sub(k), true
		}
	}
	if at.Before(floor) {
		at = floor
	}
	if at.Before(prev) {
		at = prev
	}
	return at, delay, kernel
}
