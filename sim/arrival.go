package sim

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// A request's arrival is when its bytes reached the server's socket. Under
// load the simulator reads requests late: on few cores, handlers that
// arrive together run one after another, each reading, parsing and
// tokenizing before the next is even read. Stamping arrival when the
// handler starts would make the truth's TTFT short by that wait, which is
// the server's, not the client's. Where the kernel can say when the bytes
// came (stampConn, on Linux), arrival is that instant; elsewhere it is when
// the handler started.

// maxStampAge bounds how old a kernel receive time may be and still count
// as this request's arrival (older: a clock step, or an idle connection's
// stale time).
const maxStampAge = time.Minute

// stamped is a connection that records when the bytes it last read
// reached the socket, as wall-clock Unix nanoseconds (0: unknown).
type stamped interface{ lastArrival() int64 }

type connKey struct{}

// withConn is the server's ConnContext: it makes the connection reachable
// from its requests.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if sc, ok := c.(stamped); ok {
		return context.WithValue(ctx, connKey{}, sc)
	}
	return ctx
}

// arrival is when r's bytes reached the socket, on the monotonic clock:
// now, moved back by the age of the kernel's receive time of the last read
// on r's connection, which read r's headers (clients do not pipeline, so no
// later request's bytes can have been read yet).
func arrival(r *http.Request) time.Time {
	now := time.Now()
	sc, ok := r.Context().Value(connKey{}).(stamped)
	if !ok {
		return now
	}
	ts := sc.lastArrival()
	if ts == 0 {
		return now
	}
	age := time.Duration(now.UnixNano() - ts)
	if age <= 0 || age > maxStampAge {
		return now
	}
	return now.Add(-age)
}

// stampTime holds a connection's last receive time.
type stampTime struct{ ns atomic.Int64 }

func (t *stampTime) lastArrival() int64 { return t.ns.Load() }
