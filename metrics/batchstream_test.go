package metrics

import (
	"math"
	"slices"
	"testing"
	"time"
)

type chunk struct {
	i, tokens int
	finish    string
	at        time.Duration
}

func feed(t *testing.T, n int, chunks []chunk) *BatchRecorder {
	t.Helper()
	r := NewBatchRecorder(n)
	for _, c := range chunks {
		if err := r.Chunk(c.i, c.tokens, c.finish, c.at); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// The recorder's rules, case by case (one-batch spec §3.8): the boundaries
// at the last first token and the first finish, each prompt's tokens there
// interpolated between the chunks around it.
func TestBatchRecorderWindow(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name      string
		n         int
		chunks    []chunk
		all       time.Duration // -1: never
		total     int
		stopped   int
		before    float64
		winTokens float64 // 0: no window
		winDur    time.Duration
	}{
		{
			name: "interpolated at both ends", n: 2,
			chunks: []chunk{{0, 1, "", 10 * ms}, {1, 1, "", 20 * ms}, {0, 2, "", 25 * ms}, {1, 2, "", 30 * ms},
				{0, 3, "length", 40 * ms}, {1, 3, "length", 45 * ms}},
			// t0 = 20: prompt 0 between (10,1) and (25,2) → 1+10/15; prompt 1 has 1.
			// t1 = 40: prompt 0 has 3; prompt 1 between (30,2) and (45,3) → 2+10/15.
			all: 20 * ms, total: 6, before: 1 + 10.0/15 + 1, winTokens: 3 + 2 + 10.0/15 - (1 + 10.0/15 + 1), winDur: 20 * ms,
		},
		{
			name: "no later chunk keeps the snapshot", n: 2,
			chunks: []chunk{{0, 4, "", 10 * ms}, {1, 1, "", 30 * ms}, {1, 5, "", 50 * ms}, {1, 8, "length", 60 * ms}, {0, 4, "length", 70 * ms}},
			// t0 = 30: prompt 0's next chunk is at 70 with 4 → 4; prompt 1 → 1.
			// t1 = 60: prompt 0 between (10,4) and (70,4) → 4; prompt 1 → 8.
			all: 30 * ms, total: 12, before: 5, winTokens: 7, winDur: 30 * ms,
		},
		{
			name: "a stop before the last start: no window", n: 2,
			chunks: []chunk{{0, 1, "stop", 10 * ms}, {1, 1, "", 20 * ms}, {1, 4, "length", 30 * ms}},
			all:    20 * ms, total: 5, stopped: 1, before: 2,
		},
		{
			name: "zero-token chunks are no first token", n: 2,
			chunks: []chunk{{0, 0, "", 5 * ms}, {1, 1, "", 10 * ms}, {0, 1, "", 15 * ms}, {0, 2, "length", 25 * ms}, {1, 2, "length", 30 * ms}},
			// t0 = 15: prompt 1 between (10,1) and (30,2) → 1.25; t1 = 25: → 1.75.
			all: 15 * ms, total: 4, before: 2.25, winTokens: 2 + 1.75 - 2.25, winDur: 10 * ms,
		},
		{
			name: "one prompt never starts", n: 3,
			chunks: []chunk{{0, 1, "", 10 * ms}, {2, 1, "length", 20 * ms}},
			all:    -1, total: 2,
		},
		{
			name: "everything in one chunk time", n: 2,
			chunks: []chunk{{0, 1, "length", 10 * ms}, {1, 1, "length", 10 * ms}},
			all:    10 * ms, total: 2, before: 2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := feed(t, tc.n, tc.chunks)
			at, ok := r.AllStarted()
			if tc.all < 0 {
				if ok || len(r.NotStarted()) == 0 {
					t.Fatalf("AllStarted = %v, %v; NotStarted %v", at, ok, r.NotStarted())
				}
			} else if !ok || at != tc.all {
				t.Fatalf("AllStarted = %v, %v, want %v", at, ok, tc.all)
			}
			if got := r.TotalTokens(); got != tc.total {
				t.Errorf("TotalTokens = %d, want %d", got, tc.total)
			}
			if got := r.EarlyStopped(); got != tc.stopped {
				t.Errorf("EarlyStopped = %d, want %d", got, tc.stopped)
			}
			if got := r.TokensBeforeAllStarted(); !near(got, tc.before) {
				t.Errorf("TokensBeforeAllStarted = %v, want %v", got, tc.before)
			}
			tok, d, ok := r.Window()
			if tc.winTokens == 0 {
				if ok {
					t.Errorf("Window = %v over %v, want none", tok, d)
				}
				return
			}
			if !ok || !near(tok, tc.winTokens) || d != tc.winDur {
				t.Errorf("Window = %v over %v (%v), want %v over %v", tok, d, ok, tc.winTokens, tc.winDur)
			}
		})
	}
}

func TestBatchRecorderRejectsBadIndex(t *testing.T) {
	r := NewBatchRecorder(2)
	for _, i := range []int{-1, 2} {
		if err := r.Chunk(i, 1, "", 0); err == nil {
			t.Errorf("Chunk(%d) of a batch of 2: no error", i)
		}
	}
	if got := r.NotStarted(); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("NotStarted = %v", got)
	}
}
