//go:build !linux

package http1

import (
	"context"
	"errors"
	"runtime"
)

// Elsewhere than Linux every request reads through Go's poller: there is
// no event loop.
type sock struct{}

func eventLoops() error { return errors.New("no event loop on " + runtime.GOOS) }

func ringLoops() error { return eventLoops() }

func (t *Transport) dialSock(context.Context, string, bool) (*sock, error) { return nil, eventLoops() }

func (s *sock) write(*Exchange, []byte) (int, error) { return 0, eventLoops() }
func (s *sock) receive(*Exchange) (bool, error)      { return false, eventLoops() }
func (s *sock) shutdown()                            {}
func (s *sock) close()                               {}
func (s *sock) alive() bool                          { return false }
