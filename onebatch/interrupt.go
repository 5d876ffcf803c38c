package onebatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"benchserve/internal/exit"
)

// watch derives the run's contexts from ctx: setup (the server's facts,
// the warmup) ends at the interrupt, as nothing is measured yet; cases
// ends when the grace period after it has passed, or at the cut.
func watch(ctx context.Context, env Env) (setup, cases context.Context, stop func()) {
	setup, endSetup := context.WithCancel(ctx)
	cases, endCases := context.WithCancel(ctx)
	stop = func() { endSetup(); endCases() }
	if env.Interrupt == nil {
		return setup, cases, stop
	}
	grace := env.Grace
	if grace <= 0 {
		grace = exit.Grace
	}
	go func() {
		select {
		case <-env.Interrupt:
		case <-cases.Done():
			return
		}
		endSetup()
		fmt.Fprintf(env.Stderr, "\nInterrupted: no new case will start; the case in flight has %v to finish. Interrupt again to cancel it.\n", grace)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C:
		case <-env.Cut:
		case <-cases.Done():
		}
		endCases()
	}()
	return setup, cases, stop
}

// interrupted reports whether the user asked the run to stop.
func interrupted(env Env) bool {
	select {
	case <-env.Interrupt:
		return true
	default:
		return false
	}
}

// beforeCases is err, or the interrupt's exit when an interrupt ended the
// run before its first case.
func beforeCases(err error, env Env) error {
	var ee *exit.Error
	if errors.As(err, &ee) && ee.Code == exit.Interrupted {
		return err
	}
	if err != nil && interrupted(env) {
		return &exit.Error{Code: exit.Interrupted, Msg: "interrupted before the first case: nothing to report"}
	}
	return err
}
