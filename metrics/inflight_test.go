package metrics

import (
	"testing"

	"benchserve/record"
)

func TestMaxInflight(t *testing.T) {
	rec := func(start, end float64) record.Record { return record.Record{Sent: true, Start: start, End: end} }
	cases := []struct {
		recs []record.Record
		want int
	}{
		{nil, 0},
		{[]record.Record{rec(0, 1)}, 1},
		// A slot handed on at one instant: never two.
		{[]record.Record{rec(0, 1), rec(1, 2), rec(2, 3)}, 1},
		{[]record.Record{rec(0, 3), rec(1, 2), rec(1.5, 4), rec(3.5, 5)}, 3},
		// Not sent: not counted.
		{[]record.Record{rec(0, 2), {Start: 1, End: 3}}, 1},
	}
	for i, c := range cases {
		if got := MaxInflight(c.recs); got != c.want {
			t.Errorf("case %d: %d, want %d", i, got, c.want)
		}
	}
	// Short requests behind a cap of 2, one after another: the
	// reference's one-second buckets see many, in flight there are 2.
	var recs []record.Record
	for k := range 20 {
		s := float64(k/2) * 0.1
		recs = append(recs, record.Record{Sent: true, Success: true, Start: s, End: s + 0.1, Latency: 0.1})
	}
	s := Compute(recs, 1, nil, Options{})
	if got := MaxInflight(recs); got != 2 || s.MaxConcurrentRequests <= 2 {
		t.Errorf("in flight %d (want 2); the reference's peak %d (want more)", got, s.MaxConcurrentRequests)
	}
}
