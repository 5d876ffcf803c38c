//go:build !linux

package memtrim

// Executable does nothing here.
func Executable() int64 { return 0 }
