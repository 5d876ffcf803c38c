package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"benchserve/dataset"
)

// On the bubble's clock, --think-time trace: each later turn of a session
// trace leaves exactly its recorded delay (scaled, capped) after the reply
// before it ended, a turn without one at once; each turn asks for its own
// output length; a session of snapshots sends each turn's messages alone.
func TestTraceDelaysAndOutputs(t *testing.T) {
	cap := 0.1
	for _, c := range []struct {
		name  string
		scale float64
		cap   *float64
		want  []time.Duration // planned delay of records 1, 2 and 4
	}{
		{"recorded", 1, nil, []time.Duration{30 * time.Millisecond, 70 * time.Millisecond, 0}},
		{"scaled and capped", 2, &cap, []time.Duration{60 * time.Millisecond, 100 * time.Millisecond, 0}},
	} {
		bubble(t, func(t *testing.T) {
			srv := &memServer{hold: 10 * time.Millisecond, keep: true}
			r := memRunner(t, srv, 2, 1, nil)
			r.Tok = wordTok{}
			msg := func(s string) []byte { return []byte(`[{"role": "user", "content": "` + s + `"}]`) }
			r.Rows[0] = dataset.Row{Turns: [][]byte{msg("a0"), msg("a1"), msg("a2")}, PromptLen: 1, OutputLen: 2,
				TurnInfo: []dataset.TurnInfo{{OutputLen: 2}, {DelayMs: 30, HasDelay: true, OutputLen: 3}, {DelayMs: 70, HasDelay: true, OutputLen: 4}}}
			r.Rows[1] = dataset.Row{Turns: [][]byte{msg("b0"), msg("b1")}, PromptLen: 1, OutputLen: 5, Snapshots: true,
				TurnInfo: []dataset.TurnInfo{{OutputLen: 5}, {}}}
			var err error
			r.traffic.think, err = parseThink(&Config{ThinkTime: "trace", ThinkTimeScale: c.scale, ThinkTimeCap: c.cap, DatasetName: "tracelab"})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			recs, _, _ := r.dispatch(context.Background(), context.Background(), phase{slots: r.Slots, check: &selfCheck{}}, start)
			at := srv.arrivals()
			if len(recs) != 5 || len(at) != 5 {
				t.Fatalf("%d records, %d requests", len(recs), len(at))
			}
			wantOut := []int{2, 3, 4, 5, 5}
			delays := map[int]time.Duration{1: c.want[0], 2: c.want[1], 4: c.want[2]}
			for j := range recs {
				rec := &recs[j]
				if !rec.Success || rec.OutputLen != wantOut[j] {
					t.Fatalf("%s: record %d: success %v, output %d, want %d", c.name, j, rec.Success, rec.OutputLen, wantOut[j])
				}
				var body struct {
					MaxTokens int `json:"max_tokens"`
				}
				if err := json.Unmarshal(srv.bodies[j], &body); err != nil || body.MaxTokens != wantOut[j] {
					t.Errorf("%s: request %d asked for %d tokens, want %d (%s)", c.name, j, body.MaxTokens, wantOut[j], srv.bodies[j])
				}
				d, later := delays[j]
				if !later {
					continue
				}
				prev := &recs[j-1]
				if sinceStart(rec.PlannedDelay) != d || sinceStart(rec.Intended) != sinceStart(prev.End)+d {
					t.Errorf("%s: record %d: planned %v, intended %v, the turn before ended %v; want a delay of %v", c.name, j, rec.PlannedDelay, rec.Intended, prev.End, d)
				}
				if got := at[j].Sub(start); got != sinceStart(rec.Intended) {
					t.Errorf("%s: record %d arrived at %v, due at %v", c.name, j, got, sinceStart(rec.Intended))
				}
			}
			// Live history: the third turn carries the first two; snapshots
			// carry their own turn alone.
			if !bytes.Contains(srv.bodies[2], []byte("a0")) || !bytes.Contains(srv.bodies[2], []byte("a1")) {
				t.Errorf("%s: the third turn lacks the history: %s", c.name, srv.bodies[2])
			}
			if bytes.Contains(srv.bodies[4], []byte("b0")) || !bytes.Contains(srv.bodies[4], []byte("b1")) {
				t.Errorf("%s: a snapshot turn sent more than its own messages: %s", c.name, srv.bodies[4])
			}
		})
	}
}
