package bench

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"time"

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
	Done    bool    // its end line came: the shard finished
	Header  record.Header
	Records []record.Record
}

// ReadShard reads a --record-file written with --shard.
func ReadShard(path string) (*ShardFile, error) {
	f, err := record.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if f.Header == nil {
		return nil, fmt.Errorf("%s: not a shard's record file (no header with \"shard\": run with --shard I/N --record-file)", path)
	}
	sf := &ShardFile{Path: path, Shard: f.Header.Shard, StartAt: f.Header.StartAt, Header: *f.Header, Records: f.Records}
	if f.End != nil {
		sf.Done, sf.Start = true, f.End.Start
	}
	return sf, nil
}

// Limits of a shard's merge check.
const (
	maxShardLag    = 10.0 // ms of p99 send lag: the shard fell behind its plan
	maxStartOffset = 50.0 // ms between a shard's start and the common start
)

// Merge is the whole run of a plan's shards: their records, merged in the
// plan's order, summarized as one run computes them (the duration from
// the common start to the last response), and each shard's check.
func Merge(shards []*ShardFile) (*report.Result, []report.Shard, error) {
	if len(shards) == 0 {
		return nil, nil, fmt.Errorf("no record files")
	}
	seen := map[string]string{}
	var recs []record.Record
	var checks []report.Shard
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
	h := &shards[0].Header
	run := report.Run{Backend: h.Backend, DatasetName: h.DatasetName, Images: datasetSpec(h.DatasetName).Images, RequestRate: h.RequestRate,
		RandomInputLen: h.RandomInputLen, RandomOutputLen: h.RandomOutputLen, RandomRangeRatio: h.RandomRangeRatio,
		MaxConcurrency: h.MaxConcurrency, SharegptOutputLen: h.SharegptOutputLen, Tag: h.Tag}
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
		Closed: math.IsInf(run.RequestRate, 1), Slots: h.PlannedSlots, LastSlot: last}, sum.TotalOutput)
	res.Check.Verdict = "merged from shards: each shard's check is under \"shards\""
	res.Shards = checks
	return res, checks, nil
}

func checkShard(s *ShardFile) report.Shard {
	c := report.Shard{Shard: s.Shard, File: filepath.Base(s.Path), Requests: len(s.Records), AchievedRate: math.NaN()}
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
