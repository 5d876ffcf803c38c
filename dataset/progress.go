package dataset

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// A build that has run this long prints a progress line, then at most one
// per progressEvery: 1,500 images or a large GSP build take minutes, and
// silence looks like a hang.
const (
	progressAfter = 2 * time.Second
	progressEvery = 2 * time.Second
)

// meter is one Load's progress and cancellation: each long stage of the
// build counts its items through it.
type meter struct {
	ctx   context.Context
	w     io.Writer // nil: no progress lines
	now   func() time.Time
	start time.Time
	next  atomic.Int64 // the earliest Unix nanosecond of the next line
	mu    sync.Mutex   // one line at a time
}

func newMeter(ctx context.Context, w io.Writer, now func() time.Time) *meter {
	if now == nil {
		now = time.Now
	}
	m := &meter{ctx: ctx, w: w, now: now, start: now()}
	m.next.Store(m.start.Add(progressAfter).UnixNano())
	return m
}

// stage counts the items of one step of a build ("Generating images" of
// 1500). Safe for concurrent use.
type stage struct {
	m     *meter
	what  string
	total int
	done  atomic.Int64
}

// stage starts counting what, of total items (0: not known). A nil meter
// (a helper called without Load, in tests) gives a stage that neither
// prints nor stops.
func (m *meter) stage(what string, total int) *stage {
	return &stage{m: m, what: what, total: total}
}

// add counts k more items done, prints a line when one is due, and
// returns the context's error once the build is cancelled, so that loops
// can stop.
func (s *stage) add(k int) error {
	if s == nil || s.m == nil {
		return nil
	}
	done := s.done.Add(int64(k))
	m := s.m
	if m.w != nil {
		if now := m.now(); now.UnixNano() >= m.next.Load() {
			m.mu.Lock()
			if now.UnixNano() >= m.next.Load() {
				m.next.Store(now.Add(progressEvery).UnixNano())
				of := ""
				if s.total > 0 {
					of = "/" + strconv.Itoa(s.total)
				}
				fmt.Fprintf(m.w, "%s: %d%s (%d s)\n", s.what, done, of, int(now.Sub(m.start).Seconds()))
			}
			m.mu.Unlock()
		}
	}
	return m.ctx.Err()
}

// err is the build's context error, nil while it runs.
func (s *stage) err() error {
	if s == nil || s.m == nil {
		return nil
	}
	return s.m.ctx.Err()
}

// each calls f(i) for i in [0, n) on up to workers goroutines, counting
// each call, and stops handing out items once the build is cancelled,
// returning the context's error.
func (s *stage) each(n int, f func(i int)) error {
	parallel(n, workers, func(i int) bool {
		if s.err() != nil {
			return false
		}
		f(i)
		return s.add(1) == nil
	})
	return s.err()
}
