package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"benchserve/internal/py/pyjson"
	"benchserve/metrics"
)

// A shard's status in a merged run.
const (
	ShardFinished    = "finished"    // its end line came
	ShardInterrupted = "interrupted" // its end line says SIGINT or SIGTERM stopped it
	ShardUnfinished  = "unfinished"  // no end line: it still runs, or was killed
	ShardMissing     = "missing"     // no record file is this shard's
)

// Shard is one shard's self-check in a merged run (benchserve merge).
type Shard struct {
	Shard  string // "I/N"
	File   string // its record file's name ("": missing)
	Status string // ShardFinished...
	// Requests is how many records it wrote; AchievedRate is
	// (sent − 1) / (last send − first send).
	Requests     int
	AchievedRate float64
	LagP99       float64 // ms: start − intended, p99 (NaN: no records)
	StartOffset  float64 // ms: its real start − the common start (NaN: not known)
	// Behind: it fell behind its plan; ClockWarns: its start, or its
	// clock, disagrees with the common start.
	Behind, ClockWarns bool
}

// Incomplete are the shards that did not finish: missing, unfinished or
// interrupted.
func Incomplete(shards []Shard) []Shard {
	var out []Shard
	for _, c := range shards {
		if c.Status != ShardFinished {
			out = append(out, c)
		}
	}
	return out
}

// shardKeys writes a merged run's "shards", "merged_records",
// "planned_requests" (null: not known), "complete" and
// "incomplete_shards".
func shardKeys(o *pyjson.Object, shards []Shard, merged, planned int) {
	list := []byte{'['}
	for i, c := range shards {
		if i > 0 {
			list = append(list, ", "...)
		}
		s := &pyjson.Object{}
		s.Set("shard", pyjson.String(c.Shard))
		if c.File == "" {
			s.Set("file", []byte("null"))
		} else {
			s.Set("file", pyjson.String(c.File))
		}
		s.Set("status", pyjson.String(c.Status))
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
	if planned > 0 {
		o.Set("planned_requests", pyjson.Int(planned))
	} else {
		o.Set("planned_requests", []byte("null"))
	}
	var names []string
	for _, c := range Incomplete(shards) {
		names = append(names, c.Shard)
	}
	o.Set("complete", pyjson.Bool(len(names) == 0))
	o.Set("incomplete_shards", pyjson.Strings(names))
}

// ShardsSection prints the "Shards" section of a merge: a line per shard,
// then the records merged against the plan's and whether every shard
// finished.
func ShardsSection(w io.Writer, shards []Shard, merged, planned int) error {
	return MergeSections(w, nil, shards, merged, planned)
}

// MergeSections prints a merge's sections: ours over the steady-state
// window when st is set, then the Shards section.
func MergeSections(w io.Writer, st *metrics.Steady, shards []Shard, merged, planned int) error {
	titled, order := map[string][]Row{}, []string{}
	if st != nil {
		titled[steadyTitle], order = steadyRows(st), append(order, steadyTitle)
	}
	titled["Shards"], order = shardRows(shards, merged, planned), append(order, "Shards")
	return Section(w, titled, order)
}

func shardRows(shards []Shard, merged, planned int) []Row {
	var rows []Row
	for _, c := range shards {
		v := c.Status
		if c.Status != ShardMissing {
			start := "n/a"
			if !math.IsNaN(c.StartOffset) {
				start = fmt.Sprintf("%+.1f ms", c.StartOffset)
			}
			v = fmt.Sprintf("%s, %d requests, %s req/s, send lag p99 %s ms, start %s", c.Status, c.Requests, F(c.AchievedRate), F(c.LagP99), start)
		}
		rows = append(rows, Row{Label: "Shard " + c.Shard + ":", Value: v})
	}
	cover := fmt.Sprint(merged)
	if planned > 0 {
		cover = fmt.Sprintf("%d of %d planned", merged, planned)
	}
	rows = append(rows, Row{Label: "Merged requests:", Value: cover})
	complete := "yes"
	if bad := Incomplete(shards); len(bad) > 0 {
		var names []string
		for _, c := range bad {
			names = append(names, c.Shard+" "+c.Status)
		}
		complete = "no: " + strings.Join(names, ", ")
	}
	rows = append(rows, Row{Label: "Complete:", Value: complete})
	return rows
}
