package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"benchserve/internal/py/pyjson"
)

// A merged run's line ends with its shards, in order, each with its
// status, the count of records merged against the plan's, and whether
// every shard finished; its console section has a line per shard and
// says the same.
func TestShardKeys(t *testing.T) {
	nan := math.NaN()
	shards := []Shard{
		{Shard: "0/3", File: "r0.jsonl", Status: ShardFinished, Requests: 3, AchievedRate: 2.5, LagP99: 0.25, StartOffset: -1.5},
		{Shard: "1/3", File: "r1.jsonl", Status: ShardInterrupted, Requests: 1, AchievedRate: nan, LagP99: 12, StartOffset: 60, Behind: true, ClockWarns: true},
		{Shard: "2/3", Status: ShardMissing, AchievedRate: nan, LagP99: nan, StartOffset: nan},
	}
	o := &pyjson.Object{}
	shardKeys(o, shards, 4, 9)
	want := `{"shards": [{"shard": "0/3", "file": "r0.jsonl", "status": "finished", "requests": 3, "achieved_request_rate": 2.5, "send_lag_p99_ms": 0.25, "start_offset_ms": -1.5, "fell_behind": false, "clock_disagrees": false}, ` +
		`{"shard": "1/3", "file": "r1.jsonl", "status": "interrupted", "requests": 1, "achieved_request_rate": NaN, "send_lag_p99_ms": 12.0, "start_offset_ms": 60.0, "fell_behind": true, "clock_disagrees": true}, ` +
		`{"shard": "2/3", "file": null, "status": "missing", "requests": 0, "achieved_request_rate": NaN, "send_lag_p99_ms": NaN, "start_offset_ms": NaN, "fell_behind": false, "clock_disagrees": false}], ` +
		`"merged_records": 4, "planned_requests": 9, "complete": false, "incomplete_shards": ["1/3", "2/3"]}`
	if got := string(o.Bytes()); got != want {
		t.Errorf("keys\n%s\nwant\n%s", got, want)
	}
	var b bytes.Buffer
	if err := ShardsSection(&b, shards, 4, 9); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"Shard 0/3:", "finished, 3 requests, 2.50 req/s, send lag p99 0.25 ms, start -1.5 ms", "Shard 1/3:",
		"interrupted, 1 requests", "start +60.0 ms", "Shard 2/3:                               missing   \n",
		"Merged requests:                         4 of 9 planned\n", "Complete:                                no: 1/3 interrupted, 2/3 missing\n"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("section lacks %q:\n%s", line, b.String())
		}
	}

	// Every shard finished; the plan's count not known (a closed loop by
	// time) is null, and the section gives the count alone.
	o = &pyjson.Object{}
	shardKeys(o, shards[:1], 3, 0)
	if got := string(o.Bytes()); !strings.HasSuffix(got, `"merged_records": 3, "planned_requests": null, "complete": true, "incomplete_shards": []}`) {
		t.Errorf("complete: %s", got)
	}
	b.Reset()
	if err := ShardsSection(&b, []Shard{{Shard: "0/1", Status: ShardUnfinished, AchievedRate: nan, LagP99: nan, StartOffset: nan}}, 0, 0); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"unfinished, 0 requests, nan req/s, send lag p99 nan ms, start n/a", "Merged requests:                         0         \n", "Complete:                                no: 0/1 unfinished\n"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("section lacks %q:\n%s", line, b.String())
		}
	}
}
