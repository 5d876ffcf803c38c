// Package syncio holds a writer safe for several goroutines at once.
package syncio

import (
	"io"
	"sync"
)

// Locked returns w with its writes serialised, for output shared by
// goroutines. A writer it made is returned as is.
func Locked(w io.Writer) io.Writer {
	if _, ok := w.(*lockedWriter); ok {
		return w
	}
	return &lockedWriter{w: w}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
