//go:build !linux

package backend

import (
	"context"
	"time"

	"benchserve/record"
)

// Elsewhere than Linux every request reads through Go's poller: there is
// no event loop.
type sock struct {
	idleSince time.Time
	key       string
	x         *exchange
}

func eventsOn() bool               { return false }
func eventsFor(*Client) *transport { return nil }
func (s *sock) close()             {}
func (s *sock) alive() bool        { return false }
func (t *transport) dialSock(context.Context, string) (*sock, error) {
	panic("no event loop")
}
func (c *Client) startEvents(context.Context, *transport, *Input, *record.Record, time.Time, func()) {
	panic("no event loop")
}

type evreq struct{}

func (evreq) resume() {}
