package bench

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"benchserve/internal/version"
	"benchserve/metrics"
	"benchserve/record"
	"benchserve/report"
)

// ShardFile is one shard's record file, read back.
type ShardFile struct {
	Path      string
	Shard     string  // "I/N"
	Index, Of int     // I and N
	StartAt   float64 // the common --start-at (0: none)
	// Start is when the shard's run really started (Unix seconds; 0: not
	// known, a shard that recorded nothing and wrote no end line).
	Start float64
	// Late is how many ms after the common start it was ready to send
	// (its end line's late_ms).
	Late float64
	// Done: its end line came; Interrupted: the end line says SIGINT or
	// SIGTERM stopped it (its pod deleted, say).
	Done, Interrupted bool
	// Torn: the file ended in a line cut short (the shard was killed
	// mid-write); Runs > 1: later runs appended to the file, and the last
	// one is read.
	Torn    bool
	Runs    int
	Header  record.Header
	Records []record.Record
}

// Status is the shard's part in the merge: report.ShardFinished,
// ShardInterrupted or ShardUnfinished.
func (s *ShardFile) Status() string {
	switch {
	case s.Interrupted:
		return report.ShardInterrupted
	case s.Done:
		return report.ShardFinished
	}
	return report.ShardUnfinished
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
	i, n, ok := ParseShard(f.Header.Shard)
	if !ok {
		return nil, fmt.Errorf("%s: its header's shard %q is not I/N with 0 <= I < N", path, f.Header.Shard)
	}
	sf := &ShardFile{Path: path, Shard: f.Header.Shard, Index: i, Of: n, StartAt: f.Header.StartAt, Header: *f.Header,
		Records: f.Records, Torn: f.Torn, Runs: f.Runs}
	if f.End != nil {
		sf.Done, sf.Interrupted, sf.Start, sf.Late = true, f.End.Interrupted, f.End.Start, f.End.Late
	} else if len(f.Records) > 0 {
		sf.Start = f.Records[0].RunStart // each record carries its run's start
	}
	return sf, nil
}

// ParseShard reads "I/N".
func ParseShard(s string) (i, n int, ok bool) {
	a, b, found := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	return i, n, found && err1 == nil && err2 == nil && i >= 0 && i < n
}

// ShardCount is the N of a plan's shards: the one their headers agree on,
// and --expect's when given (expect > 0).
func ShardCount(shards []*ShardFile, expect int) (int, error) {
	byN := map[int][]string{}
	var ns []int
	for _, s := range shards {
		if byN[s.Of] == nil {
			ns = append(ns, s.Of)
		}
		byN[s.Of] = append(byN[s.Of], s.Path)
	}
	sort.Ints(ns)
	switch {
	case len(ns) > 1:
		var parts []string
		for _, n := range ns {
			parts = append(parts, fmt.Sprintf("%s of %d", strings.Join(byN[n], ", "), n))
		}
		return 0, fmt.Errorf("the files are not one plan's shards: %s", strings.Join(parts, "; "))
	case len(ns) == 1 && expect > 0 && ns[0] != expect:
		return 0, fmt.Errorf("--expect %d, but %s %s of %d", expect, strings.Join(byN[ns[0]], ", "), plural(len(byN[ns[0]]), "is a shard", "are shards"), ns[0])
	case len(ns) == 1:
		return ns[0], nil
	}
	return expect, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Limits of a shard's merge check.
const (
	maxShardLag    = 10.0 // ms of p99 send lag: the shard fell behind its plan
	maxStartOffset = 50.0 // ms between a shard's start and the common start
)

// Merge is the whole run of a plan's shards: their records, merged in the
// plan's order, summarized as one run computes them (the duration from
// the common start to the last response), and each shard's check, one
// for each of the plan's N shards (ShardCount), a shard with no file
// among them (report.ShardMissing). Complete tells whether they all
// finished.
func Merge(shards []*ShardFile, expect int) (*report.Result, []report.Shard, error) {
	if len(shards) == 0 {
		return nil, nil, fmt.Errorf("no record files")
	}
	n, err := ShardCount(shards, expect)
	if err != nil {
		return nil, nil, err
	}
	byIndex := make([]*ShardFile, n)
	var recs []record.Record
	for _, s := range shards {
		if other := byIndex[s.Index]; other != nil {
			return nil, nil, fmt.Errorf("%s and %s are both shard %s", other.Path, s.Path, s.Shard)
		}
		byIndex[s.Index] = s
		recs = append(recs, s.Records...)
	}
	checks := make([]report.Shard, n)
	for i, s := range byIndex {
		if s == nil {
			checks[i] = report.Shard{Shard: fmt.Sprintf("%d/%d", i, n), Status: report.ShardMissing,
				AchievedRate: math.NaN(), LagP99: math.NaN(), StartOffset: math.NaN()}
			continue
		}
		checks[i] = checkShard(s)
	}
	sort.SliceStable(recs, func(a, b int) bool { return recs[a].Seq < recs[b].Seq })
	dur := 0.0
	for i := range recs {
		dur = math.Max(dur, recs[i].Start+recs[i].Latency)
	}
	first := shards[0]
	h := &first.Header
	run := report.Run{Backend: h.Backend, DatasetName: h.DatasetName, Images: datasetSpec(h.DatasetName).Images, RequestRate: h.RequestRate,
		RandomInputLen: h.RandomInputLen, RandomOutputLen: h.RandomOutputLen, RandomRangeRatio: h.RandomRangeRatio,
		MaxConcurrency: h.MaxConcurrency, SharegptOutputLen: h.SharegptOutputLen, Tag: h.Tag}
	sum := metrics.Compute(recs, dur, countedOnly{}, metrics.Options{})
	start := first.StartAt
	for _, s := range shards {
		if start == 0 && s.Start > 0 {
			start = s.Start
		}
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
	res.Shards, res.PlannedRequests = checks, h.PlannedRequests
	if len(h.URLs) > 1 {
		for i, f := range metrics.PerURL(recs, len(h.URLs), dur) {
			res.PerURL = append(res.PerURL, report.URLShare{URL: h.URLs[i], URLFigures: f})
		}
	}
	// Record files carry no cached tokens: no per-turn cached figures.
	res.PerTurn = metrics.ComputePerTurn(recs, false)
	res.PerSession = metrics.ComputePerSession(recs)
	return res, checks, nil
}

func checkShard(s *ShardFile) report.Shard {
	c := report.Shard{Shard: s.Shard, File: filepath.Base(s.Path), Status: s.Status(), Requests: len(s.Records),
		AchievedRate: math.NaN(), LagP99: math.NaN(), StartOffset: math.NaN()}
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
		// A late shard keeps the common start as its schedule's origin:
		// how late it was ready is the offset that matters.
		c.StartOffset = (s.Start-s.StartAt)*1000 + s.Late
	}
	c.Behind = c.LagP99 > maxShardLag
	c.ClockWarns = math.Abs(c.StartOffset) > maxStartOffset
	return c
}

// countedOnly counts nothing: merged records carry their text's token
// count (text_tokens) instead of their text.
type countedOnly struct{}

func (countedOnly) Count(string) int { return 0 }
