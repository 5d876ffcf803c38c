package bench

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"benchserve/internal/jsonscan"
	"benchserve/internal/py/pyjson"
	"benchserve/internal/version"
	"benchserve/metrics"
	"benchserve/record"
	"benchserve/report"
)

// ShardFile is one shard's record file, read back.
type ShardFile struct {
	Path    string
	Shard   string
	StartAt float64 // the common --start-at (0: none)
	Start   float64 // when the shard's run really started (Unix seconds)
	Done    bool    // its footer came: the shard finished
	Header  map[string]float64
	Strs    map[string]string
	Records []record.Record
}

// ReadShard reads a --record-file written with --shard.
func ReadShard(path string) (*ShardFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sf := &ShardFile{Path: path, Header: map[string]float64{}, Strs: map[string]string{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		var rec record.Record
		isRec, err := record.DecodeLine(line, &rec)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: not a record line: %v", path, n, err)
		}
		if isRec {
			sf.Records = append(sf.Records, rec)
			continue
		}
		// The shard's header or end line: every member, by key.
		footer := false
		jsonscan.ParseObject(line, func(k []byte, v jsonscan.Value) {
			key := string(jsonscan.AppendUnquoted(nil, k))
			footer = footer || key == "shard_end"
			if x, ok := v.Float(); ok {
				sf.Header[key] = x
			} else if v.Kind == jsonscan.String {
				sf.Strs[key] = string(v.AppendString(nil))
			}
		})
		if footer {
			sf.Done, sf.Start = true, sf.Header["benchmark_start_unix"]
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	sf.Shard, sf.StartAt = sf.Strs["shard"], sf.Header["start_at_unix"]
	if sf.Shard == "" {
		return nil, fmt.Errorf("%s: not a shard's record file (no header with \"shard\": run with --shard I/N --record-file)", path)
	}
	return sf, nil
}

// ShardCheck is one shard's self-check in a merge.
type ShardCheck struct {
	Shard, Path        string
	Requests           int
	AchievedRate       float64 // (sent − 1) / (last send − first send)
	LagP99             float64 // ms: start − intended, p99
	StartOffset        float64 // ms: its real start − the common start
	Behind, ClockWarns bool
}

// Limits of a shard's merge check.
const (
	maxShardLag    = 10.0 // ms of p99 send lag: the shard fell behind its plan
	maxStartOffset = 50.0 // ms between a shard's start and the common start
)

// Merge is the whole run of a plan's shards: their records, merged in the
// plan's order, summarized as one run computes them (the duration from
// the common start to the last response), and each shard's check.
func Merge(shards []*ShardFile) (*report.Result, []ShardCheck, error) {
	if len(shards) == 0 {
		return nil, nil, fmt.Errorf("no record files")
	}
	seen := map[string]string{}
	var recs []record.Record
	var checks []ShardCheck
	for _, s := range shards {
		if other, dup := seen[s.Shard]; dup {
			return nil, nil, fmt.Errorf("%s and %s are both shard %s", other, s.Path, s.Shard)
		}
		seen[s.Shard] = s.Path
		recs = append(recs, s.Records...)
		checks = append(checks, checkShard(s))
	}
	sort.SliceStable(recs, func(a, b int) bool { return recs[a].Seq < recs[b].Seq })
	dur := 0.0
	for i := range recs {
		dur = math.Max(dur, recs[i].Start+recs[i].Latency)
	}
	h, st := shards[0].Header, shards[0].Strs
	run := report.Run{Backend: st["backend"], DatasetName: st["dataset_name"], Images: datasetSpec(st["dataset_name"]).Images, RequestRate: h["request_rate"],
		RandomInputLen: int(h["random_input_len"]), RandomOutputLen: int(h["random_output_len"]), RandomRangeRatio: h["random_range_ratio"]}
	if v, ok := h["max_concurrency"]; ok {
		c := int(v)
		run.MaxConcurrency = &c
	}
	if v, ok := h["sharegpt_output_len"]; ok {
		c := int(v)
		run.SharegptOutputLen = &c
	}
	if v, ok := st["tag"]; ok {
		run.Tag = &v
	}
	sum := metrics.Compute(recs, dur, countedOnly{}, metrics.Options{})
	start := shards[0].StartAt
	if start == 0 {
		start = shards[0].Start
	}
	res := &report.Result{Run: run, Summary: sum, Records: recs, Version: version.String(),
		Start: time.Unix(0, int64(start*1e9))}
	last := 0.0
	for i := range recs {
		last = math.Max(last, recs[i].Intended)
	}
	res.Check = metrics.Check(recs, metrics.ClientStats{}, metrics.Shape{Duration: dur, Rate: run.RequestRate,
		Closed: math.IsInf(run.RequestRate, 1), Slots: int(h["planned_slots"]), LastSlot: last}, sum.TotalOutput)
	res.Check.Verdict = "merged from shards: each shard's check is under \"shards\""
	res.Tail = &pyjson.Object{}
	list := []byte{'['}
	for i, c := range checks {
		if i > 0 {
			list = append(list, ", "...)
		}
		o := &pyjson.Object{}
		o.Set("shard", pyjson.String(c.Shard))
		o.Set("file", pyjson.String(filepath.Base(c.Path)))
		o.Set("requests", pyjson.Int(c.Requests))
		o.Set("achieved_request_rate", pyjson.Float(c.AchievedRate))
		o.Set("send_lag_p99_ms", pyjson.Float(c.LagP99))
		o.Set("start_offset_ms", pyjson.Float(c.StartOffset))
		o.Set("fell_behind", pyjson.Bool(c.Behind))
		o.Set("clock_disagrees", pyjson.Bool(c.ClockWarns))
		list = o.Append(list)
	}
	res.Tail.Set("shards", append(list, ']'))
	res.Tail.Set("merged_records", pyjson.Int(len(recs)))
	return res, checks, nil
}

func checkShard(s *ShardFile) ShardCheck {
	c := ShardCheck{Shard: s.Shard, Path: s.Path, Requests: len(s.Records), AchievedRate: math.NaN()}
	var lags []float64
	first, last := math.Inf(1), math.Inf(-1)
	for i := range s.Records {
		r := &s.Records[i]
		lags = append(lags, r.Start-r.Intended)
		first, last = math.Min(first, r.Start), math.Max(last, r.Start)
	}
	if len(lags) > 0 {
		c.LagP99 = metrics.Describe(lags).P99
	}
	if len(s.Records) > 1 && last > first {
		c.AchievedRate = float64(len(s.Records)-1) / (last - first)
	}
	if s.StartAt > 0 && s.Start > 0 {
		c.StartOffset = (s.Start - s.StartAt) * 1000
	}
	c.Behind = c.LagP99 > maxShardLag
	c.ClockWarns = math.Abs(c.StartOffset) > maxStartOffset
	return c
}

// countedOnly counts nothing: merged records carry their text's token
// count (text_tokens) instead of their text.
type countedOnly struct{}

func (countedOnly) Count(string) int { return 0 }
