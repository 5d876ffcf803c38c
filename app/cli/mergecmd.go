package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"benchserve/bench"
	"benchserve/internal/py/argparse"
	"benchserve/report"
)

func newMergeParser() *argparse.Parser {
	p := argparse.New("benchserve merge", "Merge the record files of a plan's shards (--shard I/N --record-file) into the "+
		"run they make together: the reference's block and result line computed from the union of their records, as one "+
		"process would, and each shard's check. Usage: benchserve merge RECORDS.jsonl... (globs are expanded) [--output-file F]")
	p.Add(argparse.Option{Name: "--output-file", Default: "merged.jsonl", Help: "Where the merged result line is appended."})
	p.Add(argparse.Option{Name: "--expect", Type: argparse.Int, Default: 0, Help: "Wait for this many finished shard files (a Kubernetes merge step)."})
	p.Add(argparse.Option{Name: "--wait", Type: argparse.Float, Default: 0.0, Help: "Seconds to wait for --expect files to be complete."})
	return p
}

// MergeMain runs "benchserve merge": 0; 1 when a file cannot be read, a
// shard is missing or the wait timed out; 2 for a bad command line.
func MergeMain(ctx context.Context, args []string, pio IO) int {
	patterns, rest := positionalsWith(args, map[string]bool{"--output-file": true, "--expect": true, "--wait": true})
	ns, err := parseArgs(newMergeParser(), rest, pio.columns())
	if err == nil && len(patterns) == 0 {
		err = &UsageError{Msg: "give the shards' record files: benchserve merge RECORDS.jsonl..."}
	}
	if code, done := parseOutcome(err, pio); done {
		return code
	}
	expect, wait := ns.Get("expect").(int), ns.Get("wait").(float64)
	deadline := time.Now().Add(time.Duration(wait * float64(time.Second)))
	var shards []*bench.ShardFile
	for {
		shards, err = readShards(patterns)
		done := err == nil && len(shards) >= expect
		for _, s := range shards {
			done = done && s.Done
		}
		if done || expect == 0 || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return exitCode(failed(ctx.Err()), pio.Stderr)
		case <-time.After(time.Second):
		}
	}
	if err != nil {
		return exitCode(failed(err), pio.Stderr)
	}
	if expect > 0 && len(shards) < expect {
		return exitCode(failed(fmt.Errorf("%d shard files, --expect %d", len(shards), expect)), pio.Stderr)
	}
	for _, s := range shards {
		if !s.Done {
			fmt.Fprintf(pio.Stderr, "benchserve: warning: %s has no end line: shard %s did not finish; its records so far are merged\n", s.Path, s.Shard)
		}
	}
	res, checks, err := bench.Merge(shards)
	if err != nil {
		return exitCode(failed(err), pio.Stderr)
	}
	if err := report.Console(pio.Stdout, res.Run, res.Summary); err != nil {
		return exitCode(failed(err), pio.Stderr)
	}
	for _, c := range checks {
		if c.Behind {
			fmt.Fprintf(pio.Stderr, "benchserve: warning: shard %s fell behind its plan (send lag p99 %.1f ms): its part of the run was sent late\n", c.Shard, c.LagP99)
		}
		if c.ClockWarns {
			fmt.Fprintf(pio.Stderr, "benchserve: warning: shard %s started %+.1f ms from the common start: its clock, or its start, disagrees with the others' by more than 50 ms\n", c.Shard, c.StartOffset)
		}
	}
	if err := report.ShardsSection(pio.Stdout, checks); err != nil {
		return exitCode(failed(err), pio.Stderr)
	}
	out := ns.Get("output_file").(string)
	if err := report.Append(out, res.Line()); err != nil {
		return exitCode(failed(fmt.Errorf("--output-file: %v", err)), pio.Stderr)
	}
	return 0
}

// readShards reads the files the patterns name (globs expanded), each
// once, in name order.
func readShards(patterns []string) ([]*bench.ShardFile, error) {
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
	var out []*bench.ShardFile
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return out, err
		}
		s, err := bench.ReadShard(p)
		if err != nil {
			return out, err
		}
		out = append(out, s)
	}
	return out, nil
}
