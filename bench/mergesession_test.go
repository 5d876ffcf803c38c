package bench

import (
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchserve/metrics"
	"benchserve/record"
)

// merge gives a multi-turn run's per-session figures from the shards'
// record files, equal to those of the records the shards wrote: a
// session whose later turns a shard never sent counts as truncated.
func TestMergePerSession(t *testing.T) {
	dir := t.TempDir()
	round := func(seq, s, k, plan int, intended, delay, start float64) record.Record {
		return record.Record{Seq: seq, Round: true, Session: s, Turn: k, SessionTurns: plan, PlannedDelay: delay,
			Intended: intended, Start: start, Sent: true, Success: true, Latency: 0.25, TTFT: 0.05,
			PromptLen: 10, InputLen: 10, InputTextLen: 10, OutputLen: 4, TextTokens: 4, TextCounted: true}
	}
	shards := [][]record.Record{
		{round(0, 0, 0, 2, 0, 0, 0.001), round(1, 0, 1, 2, 0.351, 0.1, 0.352)},
		{round(2, 1, 0, 3, 0.1, 0, 0.103), round(3, 1, 1, 3, 0.403, 0.05, 0.405)}, // turn 2 not sent
	}
	var all []record.Record
	var paths []string
	for i, recs := range shards {
		path := filepath.Join(dir, "s"+strconv.Itoa(i)+".jsonl")
		w, err := record.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		const startAt = 1_800_000_000
		w.WriteHeader(&record.Header{Shard: strconv.Itoa(i) + "/2", StartAt: startAt, PlannedSlots: 2, PlannedRequests: 5,
			Backend: "vllm-chat", DatasetName: "random-ids", RequestRate: 10})
		w.StartRun(time.Unix(startAt, 0))
		for j := range recs {
			w.Write(&recs[j])
		}
		w.WriteEnd(&record.End{Start: startAt, Duration: 1, Records: len(recs)})
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
		all = append(all, recs...)
	}
	res, _, err := Merge(readShards(t, paths...), 2)
	if err != nil {
		t.Fatal(err)
	}
	ps := res.PerSession
	if ps == nil || ps.Started != 2 || ps.Completed != 1 || ps.Truncated != 1 {
		t.Fatalf("merged per-session figures %+v, want 2 sessions, 1 completed", ps)
	}
	if want := metrics.ComputePerSession(all); !reflect.DeepEqual(ps, want) {
		t.Errorf("merged %+v\nwritten %+v", ps, want)
	}
	if line := string(res.Line()); !strings.Contains(line, `"per_session": {"started": 2, "completed": 1, "truncated": 1`) {
		t.Errorf("no per_session key in %s", line)
	}
}
