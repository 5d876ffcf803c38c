package syncio

import (
	"strings"
	"sync"
	"testing"
)

func TestLocked(t *testing.T) {
	var b strings.Builder
	w := Locked(&b)
	if Locked(w) != w {
		t.Error("Locked wrapped its own writer again")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				w.Write([]byte("ab"))
			}
		})
	}
	wg.Wait()
	if got := b.String(); len(got) != 1600 || strings.Count(got, "ab") != 800 {
		t.Errorf("%d bytes, %d pairs: writes interleaved", len(got), strings.Count(got, "ab"))
	}
}
