package dataset

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// workers is how many goroutines tokenize ahead of a walk; 1 walks serially.
// A variable so that tests can compare the two.
var workers = runtime.GOMAXPROCS(0)

// ahead calls f(0), f(1), ... f(n-1) on up to workers goroutines and hands
// the results to yield in index order until yield returns false. At most
// 4*workers results are computed ahead of yield, which bounds the work
// wasted when the walk stops early. yield runs on the caller's goroutine.
func ahead[T any](ctx context.Context, n, workers int, f func(i int) T, yield func(i int, v T) bool) error {
	if workers <= 1 || n <= 1 {
		for i := 0; i < n; i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			if !yield(i, f(i)) {
				return nil
			}
		}
		return nil
	}
	type slot struct {
		i    int
		v    T
		done chan struct{}
	}
	window := 4 * workers
	queue := make(chan *slot, window) // in index order, for yield
	jobs := make(chan *slot, window)  // in any order, for the workers
	stop := make(chan struct{})

	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for s := range jobs {
				s.v = f(s.i)
				close(s.done)
			}
		})
	}
	wg.Go(func() {
		defer close(jobs)
		defer close(queue)
		for i := 0; i < n; i++ {
			s := &slot{i: i, done: make(chan struct{})}
			select {
			case queue <- s:
			case <-stop:
				return
			}
			jobs <- s
		}
	})

	var err error
	for s := range queue {
		<-s.done
		if err = ctx.Err(); err != nil || !yield(s.i, s.v) {
			break
		}
	}
	close(stop)
	wg.Wait()
	return err
}

// parallel calls f(i) for i in [0, n) on up to workers goroutines until
// some call returns false; the calls already started then finish.
func parallel(n, workers int, f func(i int) bool) {
	if workers <= 1 || n <= 1 {
		for i := 0; i < n; i++ {
			if !f(i) {
				return
			}
		}
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var stop atomic.Bool
	next := 0
	const batch = 16
	for range min(workers, n) {
		wg.Go(func() {
			for !stop.Load() {
				mu.Lock()
				lo := next
				next += batch
				mu.Unlock()
				if lo >= n {
					return
				}
				for i := lo; i < min(lo+batch, n); i++ {
					if !f(i) {
						stop.Store(true)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}
