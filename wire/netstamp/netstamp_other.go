//go:build !linux

package netstamp

import "net"

// Listen is ln itself: without kernel receive times, callers stamp reads
// when they return.
func Listen(ln net.Listener) net.Listener { return ln }

// Wrap is c itself.
func Wrap(c net.Conn) net.Conn { return c }
