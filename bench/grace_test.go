package bench

import (
	"context"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"benchserve/backend"
)

// After the interrupt, the requests in flight are cancelled at the end of
// the grace period, or at the cut (a second interrupt) if that comes first;
// not before either.
func TestGraceEndsAtTheCut(t *testing.T) {
	for _, withCut := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			interrupt, cut := make(chan struct{}), make(chan struct{})
			r := &runner{Plan: &Plan{Env: Env{Stderr: io.Discard, Interrupt: interrupt, Cut: cut, Grace: time.Hour}}, gate: &backend.Gate{}}
			inflight, cancel := context.WithCancel(context.Background())
			defer cancel()
			r.graceOnInterrupt(inflight, cancel)
			time.Sleep(2 * time.Hour)
			synctest.Wait()
			if inflight.Err() != nil {
				t.Fatal("cancelled without an interrupt")
			}
			close(interrupt)
			time.Sleep(59 * time.Minute)
			synctest.Wait()
			if inflight.Err() != nil {
				t.Fatal("cancelled within the grace period, without a cut")
			}
			if withCut {
				close(cut)
			} else {
				time.Sleep(time.Minute)
			}
			synctest.Wait()
			if inflight.Err() == nil {
				t.Fatalf("not cancelled at the end of the grace period or at the cut (cut: %v)", withCut)
			}
		})
	}
}
