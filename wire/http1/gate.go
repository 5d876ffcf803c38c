package http1

import (
	"sync"
	"time"
)

// Gate lets requests be written until it is closed, and none after: Close
// waits for the writes under way, so once it returns no byte of a request
// that passes the gate goes out. (A check of a context before the write
// would leave a window in which a goroutine that saw the gate open is
// preempted, and writes after the interrupt.) The zero value is open.
type Gate struct {
	mu     sync.RWMutex
	closed bool
	until  time.Time
}

// Close shuts the gate, once the writes under way are done.
func (g *Gate) Close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// CloseAt shuts the gate at t (--duration): a request whose write would
// start at t or later is not sent, however late its goroutine ran.
func (g *Gate) CloseAt(t time.Time) {
	g.mu.Lock()
	g.until = t
	g.mu.Unlock()
}

// pass runs write unless the gate is closed (a nil Gate is open), and
// reports whether it ran.
func (g *Gate) pass(write func()) bool {
	if g == nil {
		write()
		return true
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed || (!g.until.IsZero() && !time.Now().Before(g.until)) {
		return false
	}
	write()
	return true
}
