package bench

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchserve/record"
	"benchserve/report"
)

// writeShardFile writes shard i of n's record file with the record
// package's writer, as a shard run does: its header (a plan of 4 requests
// a shard, from the common start 1_800_000_000), its records, and its end
// line unless end is "unfinished".
func writeShardFile(t *testing.T, dir string, i, n, recs int, end string) string {
	t.Helper()
	path := filepath.Join(dir, "records-"+strconv.Itoa(i)+".jsonl")
	w, err := record.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	const startAt = 1_800_000_000
	w.WriteHeader(&record.Header{Shard: strconv.Itoa(i) + "/" + strconv.Itoa(n), StartAt: startAt, PlannedSlots: 4 * n, PlannedRequests: 4 * n,
		Backend: "vllm", DatasetName: "random-ids", RequestRate: 10})
	w.StartRun(time.Unix(startAt, 2e6)) // 2 ms late
	for k := range recs {
		seq := i + k*n
		w.Write(&record.Record{Seq: seq, Intended: float64(seq) / 10, Start: float64(seq) / 10, Sent: true, Success: true, Latency: 0.5, TTFT: 0.1,
			Gaps: record.GapsOf(100*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond), PromptLen: 10, InputLen: 10, InputTextLen: 10,
			OutputLen: 4, TextTokens: 4, TextCounted: true})
	}
	if end != "unfinished" {
		w.WriteEnd(&record.End{Start: startAt + 0.002, Duration: 1, Records: recs, Interrupted: end == "interrupted"})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func readShards(t *testing.T, paths ...string) []*ShardFile {
	t.Helper()
	var out []*ShardFile
	for _, p := range paths {
		s, err := ReadShard(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// Each of the plan's shards gets a check with its status: finished,
// interrupted (its end line says so), unfinished (no end line; its start
// read from its records) and missing (no file), in the plan's order.
func TestMergeShardStatus(t *testing.T) {
	dir := t.TempDir()
	shards := readShards(t, writeShardFile(t, dir, 3, 5, 4, "finished"), writeShardFile(t, dir, 0, 5, 4, "finished"),
		writeShardFile(t, dir, 1, 5, 2, "interrupted"), writeShardFile(t, dir, 4, 5, 3, "unfinished"))
	res, checks, err := Merge(shards, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		shard, file, status string
		requests            int
	}{
		{"0/5", "records-0.jsonl", report.ShardFinished, 4},
		{"1/5", "records-1.jsonl", report.ShardInterrupted, 2},
		{"2/5", "", report.ShardMissing, 0},
		{"3/5", "records-3.jsonl", report.ShardFinished, 4},
		{"4/5", "records-4.jsonl", report.ShardUnfinished, 3},
	}
	if len(checks) != len(want) {
		t.Fatalf("%d checks: %+v", len(checks), checks)
	}
	for i, w := range want {
		c := checks[i]
		if c.Shard != w.shard || c.File != w.file || c.Status != w.status || c.Requests != w.requests {
			t.Errorf("check %d: %+v, want %+v", i, c, w)
		}
		if w.status != report.ShardMissing && math.Abs(c.StartOffset-2) > 1e-3 {
			t.Errorf("shard %s: start offset %v ms, want 2", c.Shard, c.StartOffset)
		}
	}
	if !math.IsNaN(checks[2].StartOffset) || !math.IsNaN(checks[2].LagP99) {
		t.Errorf("missing shard: %+v", checks[2])
	}
	if len(res.Records) != 13 || res.PlannedRequests != 20 || res.Summary.Completed != 13 {
		t.Errorf("%d records merged of %d planned, %d completed", len(res.Records), res.PlannedRequests, res.Summary.Completed)
	}
	if inc := report.Incomplete(checks); len(inc) != 3 {
		t.Errorf("incomplete: %+v", inc)
	}
	// --expect says N; a shard the files do not hold is missing.
	_, checks, err = Merge(shards[:1], 5)
	if err != nil || len(checks) != 5 || checks[3].Status != report.ShardFinished || checks[0].Status != report.ShardMissing {
		t.Errorf("one file of 5: %v %+v", err, checks)
	}
}

// Files whose headers disagree on N, or with --expect, are not one plan's
// shards: the error names them; so are two files of one shard.
func TestShardCount(t *testing.T) {
	dir := t.TempDir()
	a, b := writeShardFile(t, dir, 0, 4, 1, "finished"), writeShardFile(t, dir, 1, 4, 1, "finished")
	c := writeShardFile(t, t.TempDir(), 2, 3, 1, "finished")
	for _, tc := range []struct {
		files  []string
		expect int
		want   string
	}{
		{[]string{a, b, c}, 0, "the files are not one plan's shards: " + c + " of 3; " + a + ", " + b + " of 4"},
		{[]string{a, b}, 3, "--expect 3, but " + a + ", " + b + " are shards of 4"},
		{[]string{c}, 4, "--expect 4, but " + c + " is a shard of 3"},
		{[]string{a, writeShardFile(t, t.TempDir(), 0, 4, 1, "unfinished")}, 0, "are both shard 0/4"},
	} {
		_, _, err := Merge(readShards(t, tc.files...), tc.expect)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v --expect %d: %v, want %q", tc.files, tc.expect, err, tc.want)
		}
	}
	if n, err := ShardCount(readShards(t, a), 0); n != 4 || err != nil {
		t.Errorf("N %d %v", n, err)
	}
	for _, s := range []string{"4/4", "-1/4", "1/0", "1", "a/b", "1/4/2"} {
		if _, _, ok := ParseShard(s); ok {
			t.Errorf("%q read as a shard", s)
		}
	}
}

// A shard ready after the common start keeps it as its schedule's
// origin, so its run's start says nothing; its end line's late_ms is the
// offset its check reports and warns of (pods scheduled after the common
// start, seen on a real cluster with too little CPU for every pod).
func TestMergeLateShard(t *testing.T) {
	dir := t.TempDir()
	onTime := writeShardFile(t, dir, 0, 2, 3, "finished")
	path := filepath.Join(dir, "records-1.jsonl")
	w, err := record.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	const startAt = 1_800_000_000
	w.WriteHeader(&record.Header{Shard: "1/2", StartAt: startAt, PlannedSlots: 8, PlannedRequests: 8, Backend: "vllm", DatasetName: "random-ids", RequestRate: 10})
	w.StartRun(time.Unix(startAt, 0))
	w.WriteEnd(&record.End{Start: startAt, Duration: 1, Late: 15284})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, checks, err := Merge(readShards(t, onTime, path), 2)
	if err != nil {
		t.Fatal(err)
	}
	if c := checks[0]; math.Abs(c.StartOffset-2) > 0.01 || c.ClockWarns {
		t.Errorf("on time: offset %v ms, warns %v; want 2 ms and no warning", c.StartOffset, c.ClockWarns)
	}
	if c := checks[1]; math.Abs(c.StartOffset-15284) > 0.01 || !c.ClockWarns {
		t.Errorf("late: offset %v ms, warns %v; want 15284 ms and a warning", c.StartOffset, c.ClockWarns)
	}
}
