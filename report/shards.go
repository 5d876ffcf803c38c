package report

import (
	"fmt"
	"io"

	"benchserve/internal/py/pyjson"
)

// Shard is one shard's self-check in a merged run (benchserve merge).
type Shard struct {
	Shard string // "I/N"
	File  string // its record file's name
	// Requests is how many records it wrote; AchievedRate is
	// (sent − 1) / (last send − first send).
	Requests     int
	AchievedRate float64
	LagP99       float64 // ms: start − intended, p99
	StartOffset  float64 // ms: its real start − the common start
	// Behind: it fell behind its plan; ClockWarns: its start, or its
	// clock, disagrees with the common start.
	Behind, ClockWarns bool
}

// shardKeys writes a merged run's "shards" and "merged_records".
func shardKeys(o *pyjson.Object, shards []Shard, merged int) {
	list := []byte{'['}
	for i, c := range shards {
		if i > 0 {
			list = append(list, ", "...)
		}
		s := &pyjson.Object{}
		s.Set("shard", pyjson.String(c.Shard))
		s.Set("file", pyjson.String(c.File))
		s.Set("requests", pyjson.Int(c.Requests))
		s.Set("achieved_request_rate", pyjson.Float(c.AchievedRate))
		s.Set("send_lag_p99_ms", pyjson.Float(c.LagP99))
		s.Set("start_offset_ms", pyjson.Float(c.StartOffset))
		s.Set("fell_behind", pyjson.Bool(c.Behind))
		s.Set("clock_disagrees", pyjson.Bool(c.ClockWarns))
		list = s.Append(list)
	}
	o.Set("shards", append(list, ']'))
	o.Set("merged_records", pyjson.Int(merged))
}

// ShardsSection prints the "Shards" section of a merge: a line per shard.
func ShardsSection(w io.Writer, shards []Shard) error {
	var rows []Row
	for _, c := range shards {
		v := fmt.Sprintf("%d requests, %s req/s, send lag p99 %s ms, start %+.1f ms", c.Requests, F(c.AchievedRate), F(c.LagP99), c.StartOffset)
		rows = append(rows, Row{Label: "Shard " + c.Shard + ":", Value: v})
	}
	return Section(w, map[string][]Row{"Shards": rows}, []string{"Shards"})
}
