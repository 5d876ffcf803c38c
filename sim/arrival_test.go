package sim

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"
)

// fakeStamped is a connection whose last read's bytes arrived at ns.
type fakeStamped struct {
	net.Conn
	ns int64
}

func (c fakeStamped) LastArrival() int64 { return c.ns }

// A request's arrival is when its bytes reached the socket (the kernel's
// receive time of the connection's last read, wire/netstamp), however
// late the handler starts; without one, the handler's start.
func TestArrival(t *testing.T) {
	sent := time.Now().Add(-20 * time.Millisecond)
	r := (&http.Request{}).WithContext(withConn(context.Background(), fakeStamped{ns: sent.UnixNano()}))
	if d := arrival(r).Sub(sent); d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("arrival %v from the stamp, want it (the wall and monotonic clocks read apart)", d)
	}
	before := time.Now()
	h2 := (&http.Request{ProtoMajor: 2}).WithContext(withConn(context.Background(), fakeStamped{ns: sent.UnixNano()}))
	if a := arrival(h2); a.Before(before) {
		t.Errorf("h2 (the stamp may be another stream's): arrival %v before the handler's start %v", a, before)
	}
	if a := arrival((&http.Request{}).WithContext(withConn(context.Background(), fakeStamped{}))); a.Before(before) {
		t.Errorf("no stamp yet: arrival %v before the handler's start %v", a, before)
	}
	if a := arrival(&http.Request{}); a.Before(before) {
		t.Errorf("unstamped connection: arrival %v before the handler's start %v", a, before)
	}
}
