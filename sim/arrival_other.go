//go:build !linux

package sim

import "net"

// listenStamped is ln itself: without kernel receive times, a request's
// arrival is when its handler starts.
func listenStamped(ln net.Listener) net.Listener { return ln }
