package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"benchserve/internal/py/pyjson"
)

// A merged run's line ends with its shards, in order, and the count of
// records merged; its console section has a line per shard.
func TestShardKeys(t *testing.T) {
	shards := []Shard{
		{Shard: "0/2", File: "r0.jsonl", Requests: 3, AchievedRate: 2.5, LagP99: 0.25, StartOffset: -1.5},
		{Shard: "1/2", File: "r1.jsonl", Requests: 1, AchievedRate: math.NaN(), LagP99: 12, StartOffset: 60, Behind: true, ClockWarns: true},
	}
	o := &pyjson.Object{}
	shardKeys(o, shards, 4)
	want := `{"shards": [{"shard": "0/2", "file": "r0.jsonl", "requests": 3, "achieved_request_rate": 2.5, "send_lag_p99_ms": 0.25, "start_offset_ms": -1.5, "fell_behind": false, "clock_disagrees": false}, ` +
		`{"shard": "1/2", "file": "r1.jsonl", "requests": 1, "achieved_request_rate": NaN, "send_lag_p99_ms": 12.0, "start_offset_ms": 60.0, "fell_behind": true, "clock_disagrees": true}], "merged_records": 4}`
	if got := string(o.Bytes()); got != want {
		t.Errorf("keys\n%s\nwant\n%s", got, want)
	}
	var b bytes.Buffer
	if err := ShardsSection(&b, shards); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"Shard 0/2:", "3 requests, 2.50 req/s, send lag p99 0.25 ms, start -1.5 ms", "Shard 1/2:", "start +60.0 ms"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("section lacks %q:\n%s", line, b.String())
		}
	}
}
