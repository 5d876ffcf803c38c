package cli

import (
	"context"
	"io"
	"os"
	"slices"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// Signals within a second of the last one counted are one: coreutils
// timeout's pair, a key held down; later ones count.
func TestSignalCountBurst(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	for _, c := range []struct {
		name string
		at   []time.Time
		want []int // the count after each; 0: not counted
	}{
		{"one", []time.Time{ms(0)}, []int{1}},
		{"timeout's pair", []time.Time{ms(0), ms(0)}, []int{1, 0}},
		{"10 ms apart", []time.Time{ms(0), ms(10)}, []int{1, 0}},
		{"just inside", []time.Time{ms(0), ms(999)}, []int{1, 0}},
		{"a second apart", []time.Time{ms(0), ms(1000)}, []int{1, 2}},
		{"2 s apart", []time.Time{ms(0), ms(2000)}, []int{1, 2}},
		{"a burst of five", []time.Time{ms(0), ms(200), ms(400), ms(600), ms(800)}, []int{1, 0, 0, 0, 0}},
		// The window runs from the last signal counted, so that a key
		// held down still reaches the second count.
		{"held", []time.Time{ms(0), ms(500), ms(1000), ms(1500), ms(2000)}, []int{1, 0, 2, 0, 3}},
		{"pair, then pair", []time.Time{ms(0), ms(1), ms(2000), ms(2001)}, []int{1, 0, 2, 0}},
	} {
		var n signalCount
		for i, at := range c.at {
			k, counted := n.add(at)
			got := 0
			if counted {
				got = k
			}
			if got != c.want[i] {
				t.Errorf("%s: signal %d counted as %d, want %d", c.name, i+1, got, c.want[i])
			}
		}
	}
}

// The first signal (or burst) closes stop, the second cut, the third
// exits with 130; nothing more before each.
func TestInterruptsStages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		sigs := make(chan os.Signal, 2)
		exits := make(chan int, 3)
		stop, cut := interrupts(ctx, IO{Stderr: io.Discard, Signals: sigs, Exit: func(c int) { exits <- c }})
		closed := func(c <-chan struct{}) bool {
			select {
			case <-c:
				return true
			default:
				return false
			}
		}
		state := func(when string, wantStop, wantCut bool, wantExits int) {
			t.Helper()
			synctest.Wait()
			if closed(stop) != wantStop || closed(cut) != wantCut || len(exits) != wantExits {
				t.Fatalf("%s: stop %v, cut %v, exits %d; want %v, %v, %d", when, closed(stop), closed(cut), len(exits), wantStop, wantCut, wantExits)
			}
		}
		state("before any signal", false, false, 0)
		sigs <- syscall.SIGINT // timeout: the child, then the group
		sigs <- syscall.SIGINT
		state("after timeout's pair", true, false, 0)
		time.Sleep(10 * time.Millisecond)
		sigs <- syscall.SIGTERM
		state("10 ms later", true, false, 0)
		time.Sleep(2 * time.Second)
		sigs <- syscall.SIGINT
		state("2 s later", true, true, 0)
		time.Sleep(500 * time.Millisecond)
		sigs <- syscall.SIGINT
		state("0.5 s after the second", true, true, 0)
		time.Sleep(time.Second)
		sigs <- syscall.SIGINT
		state("the third", true, true, 1)
		if c := <-exits; c != 130 {
			t.Errorf("exit %d, want 130", c)
		}
	})
}

// called reports whether the server has had call ("POST /v1/completions").
func (f *fakeServer) called(call string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Contains(f.calls, call)
}
