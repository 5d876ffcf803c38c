//go:build !linux

package uring

import (
	"errors"
	"runtime"
)

// Available reports why there is no io_uring here: it is Linux's.
func Available() error { return errors.New("no io_uring on " + runtime.GOOS) }
