//go:build !unix

package http1

import "syscall"

// alive reports true: without a non-blocking peek, a connection the server
// closed while idle shows when it is used.
func alive(syscall.RawConn) bool { return true }
