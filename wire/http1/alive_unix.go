//go:build unix

package http1

import "syscall"

// alive reports whether an idle connection can still be used: the server
// has neither closed it (a peek reads end of file or an error) nor sent
// anything unasked (a peek reads data). The peek does not wait.
func alive(rc syscall.RawConn) bool {
	if rc == nil {
		return true
	}
	ok := false
	var b [1]byte
	err := rc.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		ok = err == syscall.EAGAIN
		return true
	})
	return err == nil && ok
}
