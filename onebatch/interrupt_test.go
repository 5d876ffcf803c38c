package onebatch

import (
	"context"
	"io"
	"testing"
	"testing/synctest"
	"time"
)

// The interrupt ends the setup at once (nothing measured yet); the case in
// flight runs on until the grace period ends or the cut comes.
func TestWatchGraceAndCut(t *testing.T) {
	for _, withCut := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			interrupt, cut := make(chan struct{}), make(chan struct{})
			setup, cases, stop := watch(context.Background(), Env{Stderr: io.Discard, Interrupt: interrupt, Cut: cut, Grace: time.Hour})
			defer stop()
			time.Sleep(2 * time.Hour)
			synctest.Wait()
			if setup.Err() != nil || cases.Err() != nil {
				t.Fatal("ended without an interrupt")
			}
			close(interrupt)
			synctest.Wait()
			if setup.Err() == nil {
				t.Fatal("the interrupt did not end the setup")
			}
			time.Sleep(59 * time.Minute)
			synctest.Wait()
			if cases.Err() != nil {
				t.Fatal("the case was cancelled within the grace period, without a cut")
			}
			if withCut {
				close(cut)
			} else {
				time.Sleep(time.Minute)
			}
			synctest.Wait()
			if cases.Err() == nil {
				t.Fatalf("the case was not cancelled at the end of the grace period or at the cut (cut: %v)", withCut)
			}
		})
	}
}
