package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"benchserve/bench"
	"benchserve/internal/exit"
	"benchserve/internal/py/argparse"
	"benchserve/metrics"
	"benchserve/record"
	"benchserve/report"
)

func newMergeParser() *argparse.Parser {
	p := argparse.New("benchserve merge", "Merge the record files of a plan's shards (--shard I/N --record-file) into the "+
		"run they make together: the reference's block and result line computed from the union of their records, as one "+
		"process would, and each shard's check and status: finished, interrupted (its end line says SIGINT or SIGTERM "+
		"stopped it), unfinished (no end line) or missing (no file). Exit 0: every shard finished; 1: a shard did not "+
		"(the block and the line are still written, for the shards there are), or the files cannot be read or are not one "+
		"plan's shards; 3: every shard finished but no merged request succeeded. Usage: benchserve merge RECORDS.jsonl... (globs are expanded) [--output-file F] "+
		"[--steady-state-concurrency-ratio R [--steady-state-output-file PATH]]")
	p.Add(argparse.Option{Name: "--output-file", Default: "merged.jsonl", Help: "Where the merged result line is appended."})
	p.Add(argparse.Option{Name: "--expect", Type: argparse.Int, Default: 0, Help: "The plan's number of shards; 0: as the files' headers say."})
	p.Add(argparse.Option{Name: "--wait", Type: argparse.Float, Default: 0.0, Help: "Seconds to wait for --expect shards to write their end lines " +
		"(a Kubernetes merge step), printing which are still awaited; then what is there is merged. A shard with no record file two " +
		"minutes after the common start is not waited for: it can no longer join. SIGINT or SIGTERM ends the wait: what is there is " +
		"merged, exit 130."})
	p.Add(argparse.Option{Name: "--start-at", Type: argparse.Float, Help: "The run's common start (the shards' --start-at): a file " +
		"whose header names another is an earlier run's, left in the directory, and is left out."})
	addSteadyFlags(p, "the merged records")
	return p
}

// MergeMain runs "benchserve merge": 0 when every shard finished; 1 when
// one did not (the block and line are still written) or the files cannot
// be merged; 3 when every shard finished but no merged request succeeded;
// 2 for a bad command line.
func MergeMain(ctx context.Context, args []string, pio IO) int {
	patterns, rest := positionalsWith(args, map[string]bool{"--output-file": true, "--expect": true, "--wait": true, "--start-at": true,
		"--steady-state-concurrency-ratio": true, "--steady-state-output-file": true})
	ns, err := parseArgs(newMergeParser(), rest, pio.columns())
	if err == nil {
		err = checkMerge(ns, patterns)
	}
	if code, done := parseOutcome(err, pio); done {
		return code
	}
	expect, wait := ns.Get("expect").(int), ns.Get("wait").(float64)
	startAt, _ := ns.Get("start_at").(float64)
	stopped := false
	if wait > 0 {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop, _ := interrupts(ctx, pio)
		w := &shardWait{patterns: patterns, expect: expect, startAt: startAt, stderr: pio.Stderr, stop: stop}
		if err := w.run(ctx, time.Duration(wait*float64(time.Second))); err != nil {
			return exitCode(err, pio.Stderr)
		}
		stopped = w.stopped
	}
	steady := steadyOf(ns)
	code := exitCode(merge(patterns, expect, startAt, ns.Get("output_file").(string), steady, pio), pio.Stderr)
	if stopped {
		return exit.Interrupted
	}
	return code
}

func checkMerge(ns *argparse.Namespace, patterns []string) error {
	expect, wait := ns.Get("expect").(int), ns.Get("wait").(float64)
	switch {
	case len(patterns) == 0:
		return &UsageError{Msg: "give the shards' record files: benchserve merge RECORDS.jsonl..."}
	case expect < 0:
		return &UsageError{Msg: fmt.Sprintf("--expect %d: give the plan's number of shards", expect)}
	case wait < 0:
		return &UsageError{Msg: fmt.Sprintf("--wait %s: give seconds, >= 0", strconv.FormatFloat(wait, 'f', -1, 64))}
	case wait > 0 && expect == 0:
		return &UsageError{Msg: "--wait: give --expect N too, the number of shards to wait for"}
	case ns.Get("start_at") != nil && !(ns.Get("start_at").(float64) > 0):
		return &UsageError{Msg: "--start-at: give the shards' common start, Unix seconds"}
	}
	return steadyOf(ns).check()
}

// merge merges the shards' files and writes the block, the Shards section
// and the result line, whatever shards are there; its error carries the
// exit code.
func merge(patterns []string, expect int, startAt float64, out string, steady steadyFlags, pio IO) error {
	shards, err := readShards(patterns, startAt, pio.Stderr)
	if err != nil {
		return failed(err)
	}
	res, checks, err := bench.Merge(shards, expect)
	if err != nil {
		return failed(err)
	}
	if err := report.Console(pio.Stdout, res.Run, res.Summary); err != nil {
		return failed(err)
	}
	if steady.ratio != nil {
		st := metrics.ComputeSteady(res.Records, *steady.ratio, nil)
		res.Steady = &st
		if err := report.SteadyBlock(pio.Stdout, &st); err != nil {
			return failed(err)
		}
	}
	for _, c := range checks {
		if c.Behind {
			fmt.Fprintf(pio.Stderr, "benchserve: warning: shard %s fell behind its plan (send lag p99 %.1f ms): its part of the run was sent late\n", c.Shard, c.LagP99)
		}
		if c.ClockWarns {
			fmt.Fprintf(pio.Stderr, "benchserve: warning: shard %s started %+.1f ms from the common start: its clock disagrees with the others', or it was ready after the common start (its pod started late: give a later --start-at or --start-delay)\n", c.Shard, c.StartOffset)
		}
	}
	if err := report.MergeSections(pio.Stdout, res.Steady, checks, len(res.Records), res.PlannedRequests); err != nil {
		return failed(err)
	}
	if err := report.Append(out, res.Line()); err != nil {
		return failed(fmt.Errorf("--output-file: %v", err))
	}
	if res.Steady != nil && steady.file != "" {
		if err := report.Append(steady.file, report.SteadyLine(res.Steady)); err != nil {
			return failed(fmt.Errorf("--steady-state-output-file: %v", err))
		}
	}
	if bad := report.Incomplete(checks); len(bad) > 0 {
		var names []string
		for _, c := range bad {
			fmt.Fprintf(pio.Stderr, "benchserve: warning: %s\n", shardWarning(c))
			where := c.File
			if c.Status == report.ShardMissing {
				where = "no record file"
			}
			names = append(names, fmt.Sprintf("shard %s %s (%s)", c.Shard, c.Status, where))
		}
		cover := fmt.Sprintf("%d requests", len(res.Records))
		if res.PlannedRequests > 0 {
			cover = fmt.Sprintf("%d of %d planned requests", len(res.Records), res.PlannedRequests)
		}
		return &exit.Error{Code: exit.Failure, Msg: fmt.Sprintf("the run is incomplete: %s; the merged figures cover %s", strings.Join(names, ", "), cover)}
	}
	if res.Summary.Completed == 0 {
		first := ""
		for i := range res.Records {
			if e := res.Records[i].Error; e != "" {
				first = e
				break
			}
		}
		return &exit.Error{Code: exit.AllFailed, Msg: fmt.Sprintf("all %d merged requests failed; first error: %s", len(res.Records), first)}
	}
	return nil
}

// shardWarning says what became of a shard that did not finish.
func shardWarning(c report.Shard) string {
	switch c.Status {
	case report.ShardInterrupted:
		return fmt.Sprintf("shard %s was interrupted (%s: its end line says SIGINT or SIGTERM stopped it): its %d records up to then are merged", c.Shard, c.File, c.Requests)
	case report.ShardUnfinished:
		return fmt.Sprintf("shard %s did not finish (%s has no end line: the shard still runs, or was killed): its %d records so far are merged", c.Shard, c.File, c.Requests)
	}
	return fmt.Sprintf("shard %s is missing: none of the record files given is its", c.Shard)
}

// readShards reads the files the patterns name (globs expanded), each
// once, in name order. A file that does not exist, or is empty (its shard
// ended before writing its header), is named in a warning and left out:
// its shard is then missing from the merge.
func readShards(patterns []string, startAt float64, stderr io.Writer) ([]*bench.ShardFile, error) {
	var out []*bench.ShardFile
	for _, p := range expand(patterns) {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) || err == nil && st.Size() == 0 {
			what := "no such file"
			if err == nil {
				what = "empty (its shard wrote nothing, not even its header)"
			}
			fmt.Fprintf(stderr, "benchserve: warning: %s: %s\n", p, what)
			continue
		}
		s, err := bench.ReadShard(p)
		if err != nil {
			return nil, err
		}
		if s.Torn {
			fmt.Fprintf(stderr, "benchserve: warning: %s ends in a line cut short (its shard was killed while writing it, or is writing it still): that line is left out\n", p)
		}
		if !sameStart(s.StartAt, startAt) {
			fmt.Fprintf(stderr, "benchserve: warning: %s is another run's (its common start is %s, not --start-at %s): left out\n",
				p, strconv.FormatFloat(s.StartAt, 'f', -1, 64), strconv.FormatFloat(startAt, 'f', -1, 64))
			continue
		}
		if s.Runs > 1 {
			fmt.Fprintf(stderr, "benchserve: warning: %s holds %d runs (later runs appended to it): only the last is merged\n", p, s.Runs)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no record files to merge: %s", strings.Join(patterns, " "))
	}
	return out, nil
}

// sameStart says whether a header's common start is the run's (--start-at;
// 0: any). Headers keep it to the nanosecond; a millisecond of slack
// absorbs the float's rounding.
func sameStart(header, run float64) bool {
	return run == 0 || math.Abs(header-run) < 1e-3
}

// expand is the files the patterns name, globs expanded, each once, in
// name order; a pattern that matches nothing stands for itself.
func expand(patterns []string) []string {
	seen := map[string]bool{}
	var paths []string
	for _, p := range patterns {
		m, err := filepath.Glob(p)
		if err != nil || len(m) == 0 {
			m = []string{p}
		}
		for _, f := range m {
			if !seen[f] {
				seen[f] = true
				paths = append(paths, f)
			}
		}
	}
	sort.Strings(paths)
	return paths
}

// shardWait waits for the plan's expect shards to write their end lines,
// following their files as they grow (record.Follower).
type shardWait struct {
	patterns []string
	expect   int
	startAt  float64 // --start-at (0: taken from the headers)
	stderr   io.Writer
	stop     <-chan struct{} // closed at SIGINT or SIGTERM
	files    map[string]*record.Follower
	stopped  bool // the wait ended at a signal
}

// joinBy is how long after the common start a shard may still create its
// record file: benchserve refuses a --start-at more than a minute past,
// and a shard writes its header before it waits for the start, so a shard
// with no file by then will never have one (its pod never ran).
const joinBy = 2 * time.Minute

// waitStatusEvery is how often the status line is repeated when nothing
// changes.
const waitStatusEvery = time.Minute

// run polls the files once a second until every shard has its end line
// or the wait is over, then returns to merge what is there. A status line
// goes to stderr when which shards are awaited, or why, changes (not
// their growing record counts), and once a minute otherwise. Files that
// are not one plan's expect shards end it at once.
func (w *shardWait) run(ctx context.Context, wait time.Duration) error {
	start := time.Now()
	deadline := start.Add(wait)
	var last string
	var lastAt time.Time
	for {
		st, err := w.poll()
		if err != nil {
			return failed(err)
		}
		if st.n == 0 {
			return nil
		}
		now := time.Now()
		over := !now.Before(deadline)
		common := w.startAt
		if common == 0 {
			common = st.startAt
		}
		// Only shards that can no longer join are awaited: stop.
		if st.n == st.missing && common > 0 && now.After(time.Unix(0, int64(common*1e9)).Add(joinBy)) {
			fmt.Fprintf(w.stderr, "benchserve merge: not waiting for %s: no record file %s after the common start, so they can no longer join [%.0f s]\n",
				st.line, joinBy, now.Sub(start).Seconds())
			return nil
		}
		if st.key != last || now.Sub(lastAt) >= waitStatusEvery || over {
			fmt.Fprintf(w.stderr, "benchserve merge: waiting for %d of %d shards: %s [%.0f s of %s s]\n",
				st.n, w.expect, st.line, now.Sub(start).Seconds(), strconv.FormatFloat(wait.Seconds(), 'f', -1, 64))
			last, lastAt = st.key, now
		}
		if over {
			return nil
		}
		select {
		case <-ctx.Done():
			return failed(ctx.Err())
		case <-w.stop:
			fmt.Fprintf(w.stderr, "benchserve merge: interrupted while waiting for %s: merging what is there\n", st.line)
			w.stopped = true
			return nil
		case <-time.After(min(time.Second, deadline.Sub(now))):
		}
	}
}

// waitState is what a poll saw: n shards awaited, the line that names
// them with their record counts, and key, the same without the counts.
type waitState struct {
	n         int
	missing   int     // of them, shards with no record file
	startAt   float64 // the common start the headers name (0: none yet)
	line, key string
}

// poll reads what the files gained and says which shards are awaited:
// those without an end line.
func (w *shardWait) poll() (waitState, error) {
	if w.files == nil {
		w.files = map[string]*record.Follower{}
	}
	var pending []string // files with no header yet
	shards := make([]*record.Follower, w.expect)
	var bad []*bench.ShardFile
	for _, p := range expand(w.patterns) {
		f := w.files[p]
		if f == nil {
			f = &record.Follower{Path: p}
			w.files[p] = f
		}
		if err := f.Update(); errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return waitState{}, err
		}
		if f.Header == nil {
			pending = append(pending, filepath.Base(p)+" (no header yet)")
			continue
		}
		if !sameStart(f.Header.StartAt, w.startAt) {
			continue // an earlier run's file: its shard has not begun this run
		}
		i, of, ok := bench.ParseShard(f.Header.Shard)
		if !ok {
			return waitState{}, fmt.Errorf("%s: its header's shard %q is not I/N with 0 <= I < N", p, f.Header.Shard)
		}
		if of != w.expect {
			bad = append(bad, &bench.ShardFile{Path: p, Of: of})
			continue
		}
		// Of two files of one shard, the finished one counts (merge
		// refuses the pair).
		if shards[i] == nil || shards[i].End == nil {
			shards[i] = f
		}
	}
	if len(bad) > 0 {
		_, err := bench.ShardCount(bad, w.expect)
		return waitState{}, err
	}
	var st waitState
	var parts, keys []string
	for i, f := range shards {
		if f != nil && f.Header.StartAt > 0 {
			st.startAt = f.Header.StartAt
		}
		switch {
		case f == nil:
			parts = append(parts, fmt.Sprintf("%d/%d (no record file)", i, w.expect))
			keys = append(keys, parts[len(parts)-1])
			st.missing++
		case f.End == nil:
			parts = append(parts, fmt.Sprintf("%d/%d (running, %d records)", i, w.expect, f.Records))
			keys = append(keys, fmt.Sprintf("%d/%d running", i, w.expect))
		default:
			continue
		}
		st.n++
	}
	st.line = strings.Join(append(parts, pending...), ", ")
	st.key = strings.Join(append(keys, pending...), ", ")
	return st, nil
}
