package dataset

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"benchserve/internal/py/pyrand"
)

func TestAheadOrderAndBound(t *testing.T) {
	for _, w := range []int{1, 2, 5} {
		var calls atomic.Int64
		var got []int
		err := ahead(context.Background(), 1000, w, func(i int) int {
			calls.Add(1)
			return i * i
		}, func(i, v int) bool {
			if v != i*i || i != len(got) {
				t.Fatalf("workers %d: yield(%d, %d) after %d results", w, i, v, len(got))
			}
			got = append(got, v)
			return len(got) < 10
		})
		if err != nil || len(got) != 10 {
			t.Fatalf("workers %d: %d results, %v", w, len(got), err)
		}
		// The work done past the stop is bounded by the look-ahead window.
		if c := calls.Load(); c > int64(10+4*w+2) {
			t.Errorf("workers %d: %d calls for 10 results", w, c)
		}
	}
}

func TestAheadAll(t *testing.T) {
	n := 0
	err := ahead(context.Background(), 37, 3, func(i int) int { return i }, func(i, v int) bool {
		n++
		return true
	})
	if err != nil || n != 37 {
		t.Errorf("%d results, %v", n, err)
	}
}

func TestAheadCancel(t *testing.T) {
	for _, w := range []int{1, 3} {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		err := ahead(ctx, 1000, w, func(i int) int { return i }, func(i, v int) bool {
			if n++; n == 5 {
				cancel()
			}
			return true
		})
		if !errors.Is(err, context.Canceled) || n != 5 {
			t.Errorf("workers %d: %d results, err %v", w, n, err)
		}
	}
}

// TestZeroPrompts: with --num-prompts 0 the reference still loads and
// shuffles the file, which moves Python's generator, and np.sum of an
// empty list prints 0.0.
func TestZeroPrompts(t *testing.T) {
	path := writeFile(t, "sg.json", makeShareGPT(80))
	for _, name := range []string{"sharegpt", "random", "random-ids"} {
		var out bytes.Buffer
		env := testEnv(42, &out)
		rows, err := Load(context.Background(), Params{Name: name, Path: path, RandomInputLen: 5, RandomOutputLen: 5}, env)
		if err != nil || len(rows) != 0 {
			t.Fatalf("%s: %d rows, %v", name, len(rows), err)
		}
		if want := "#Input tokens: 0.0\n#Output tokens: 0.0\n"; out.String() != want {
			t.Errorf("%s: printed %q, want %q", name, out.String(), want)
		}
		ref := pyrand.NewPython(42)
		if name != "random-ids" {
			ref.Shuffle(50, func(int, int) {}) // the file's 50 usable conversations
		}
		if got, want := env.Py.Random(), ref.Random(); got != want {
			t.Errorf("%s: next random() %v, want %v", name, got, want)
		}
	}
}
