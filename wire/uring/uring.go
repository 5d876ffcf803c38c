// Package uring is a small io_uring binding over golang.org/x/sys/unix
// (no cgo), with just what a receiver of many sockets needs: a ring whose
// completion queue is read in place, multishot recvmsg into a provided
// buffer ring (each completion carrying its own control messages, so its
// own SCM_TIMESTAMPNS receive time), and cancellation. Linux only; elsewhere
// Available says why there is none.
package uring
