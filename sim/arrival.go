package sim

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"time"

	"benchserve/wire/netstamp"
)

// A request's arrival is when its bytes reached the server's socket. Under
// load the simulator reads requests late: on few cores, handlers that
// arrive together run one after another, each reading, parsing and
// tokenizing before the next is even read. Stamping arrival when the
// handler starts would make the truth's TTFT short by that wait, which is
// the server's, not the client's. Where the kernel can say when the bytes
// came (netstamp, on Linux), arrival is that instant; elsewhere it is when
// the handler started.

type connKey struct{}

// withConn is the server's ConnContext: it makes the connection reachable
// from its requests.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn() // its last read brought the record of the headers
	}
	if sc, ok := c.(netstamp.Stamped); ok {
		return context.WithValue(ctx, connKey{}, sc)
	}
	return ctx
}

// arrival is when r's bytes reached the socket, on the monotonic clock:
// now, moved back by the age of the kernel's receive time of the last read
// on r's connection, which read r's headers (clients do not pipeline, so no
// later request's bytes can have been read yet). On h2 it is now.
func arrival(r *http.Request) time.Time {
	now := time.Now()
	sc, ok := r.Context().Value(connKey{}).(netstamp.Stamped)
	// On h2 the connection's last read may be another stream's frames.
	if !ok || r.ProtoMajor == 2 {
		return now
	}
	return netstamp.At(now, sc.LastArrival())
}
