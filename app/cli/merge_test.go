package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"benchserve/internal/exit"
	"benchserve/record"
)

// shardRec writes shard i of n's record file in dir with the record
// package's writer, as a shard run writes it: the header (a plan of 5
// requests a shard), recs records (failed ones when failed), and the end
// line when end is "finished" or "interrupted". The writer stays open
// without an end line ("unfinished"), for the caller to go on with.
func shardRec(t *testing.T, dir string, i, n, recs int, end string, failed bool) (string, *record.Writer) {
	t.Helper()
	return shardRecAt(t, dir, i, n, recs, end, failed, 1_800_000_000)
}

// shardRecAt is shardRec for a run whose common start is startAt.
func shardRecAt(t *testing.T, dir string, i, n, recs int, end string, failed bool, startAt float64) (string, *record.Writer) {
	t.Helper()
	path := filepath.Join(dir, "records-"+strconv.Itoa(i)+".jsonl")
	w, err := record.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteHeader(&record.Header{Shard: strconv.Itoa(i) + "/" + strconv.Itoa(n), StartAt: startAt, PlannedSlots: 5 * n, PlannedRequests: 5 * n,
		Backend: "vllm", DatasetName: "random-ids", RequestRate: 10, RandomInputLen: 10, RandomOutputLen: 4})
	w.StartRun(time.Unix(0, int64(startAt*1e9)))
	for k := range recs {
		seq := i + k*n
		r := &record.Record{Seq: seq, Intended: float64(seq) / 10, Start: float64(seq) / 10, Sent: true, Success: true, Latency: 0.4, TTFT: 0.1,
			Gaps: record.GapsOf(100*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond), PromptLen: 10, InputLen: 10, InputTextLen: 10,
			OutputLen: 4, TextTokens: 4, TextCounted: true}
		if failed {
			*r = record.Record{Seq: seq, Intended: r.Intended, Start: r.Start, Sent: true, Latency: 0.01, PromptLen: 10, InputLen: 10,
				InputTextLen: 10, TextCounted: true, Error: "500 Internal Server Error", ErrorKind: record.KindHTTP5xx}
		}
		w.Write(r)
	}
	if end != "unfinished" {
		w.WriteEnd(&record.End{Start: startAt, Duration: 1, Records: recs, Interrupted: end == "interrupted"})
	}
	if end != "unfinished" {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return path, nil
	}
	return path, w
}

// finishShard writes the end line of a shard shardRec left open.
func finishShard(t *testing.T, w *record.Writer, recs int) {
	t.Helper()
	w.WriteEnd(&record.End{Start: 1_800_000_000, Duration: 1, Records: recs})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func flushShard(t *testing.T, w *record.Writer) {
	t.Helper()
	if err := w.Close(); err != nil { // the file stays without its end line
		t.Fatal(err)
	}
}

// A merge says which shards did not finish: one warning each, naming the
// shard and its file, and a last error line with what the figures cover;
// the block, the Shards section and the result line are written all the
// same, and the exit code is 1. Every shard finished is exit 0 and
// "complete": true; no request succeeded is 3.
func TestMergeNamesIncompleteShards(t *testing.T) {
	type want struct {
		code       int
		stderr     []string // every line, in order
		complete   bool
		incomplete []any
		statuses   []any
		merged     float64
	}
	for _, c := range []struct {
		name  string
		write func(dir string) // the shards' files
		args  []string
		want  want
	}{
		{"all finished", func(dir string) {
			for i := range 4 {
				shardRec(t, dir, i, 4, 5, "finished", false)
			}
		}, nil, want{0, nil, true, []any{}, []any{"finished", "finished", "finished", "finished"}, 20}},
		{"one interrupted", func(dir string) {
			for i := range 4 {
				end := "finished"
				if i == 2 {
					end = "interrupted"
				}
				shardRec(t, dir, i, 4, []int{5, 5, 2, 5}[i], end, false)
			}
		}, nil, want{1, []string{
			"benchserve: warning: shard 2/4 was interrupted (records-2.jsonl: its end line says SIGINT or SIGTERM stopped it): its 2 records up to then are merged",
			"benchserve: error: the run is incomplete: shard 2/4 interrupted (records-2.jsonl); the merged figures cover 17 of 20 planned requests",
		}, false, []any{"2/4"}, []any{"finished", "finished", "interrupted", "finished"}, 17}},
		{"one missing, one unfinished", func(dir string) {
			shardRec(t, dir, 0, 4, 5, "finished", false)
			shardRec(t, dir, 2, 4, 5, "finished", false)
			_, w := shardRec(t, dir, 3, 4, 4, "unfinished", false)
			flushShard(t, w)
		}, nil, want{1, []string{
			"benchserve: warning: shard 1/4 is missing: none of the record files given is its",
			"benchserve: warning: shard 3/4 did not finish (records-3.jsonl has no end line: the shard still runs, or was killed): its 4 records so far are merged",
			"benchserve: error: the run is incomplete: shard 1/4 missing (no record file), shard 3/4 unfinished (records-3.jsonl); the merged figures cover 14 of 20 planned requests",
		}, false, []any{"1/4", "3/4"}, []any{"finished", "missing", "finished", "unfinished"}, 14}},
		{"killed mid-write", func(dir string) {
			shardRec(t, dir, 0, 2, 5, "finished", false)
			path, w := shardRec(t, dir, 1, 2, 3, "unfinished", false)
			flushShard(t, w)
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString(`{"seq": 7, "id": "", "intended": 0.7, "sta`); err != nil {
				t.Fatal(err)
			}
		}, nil, want{1, []string{
			"benchserve: warning: " + "DIR/records-1.jsonl ends in a line cut short (its shard was killed while writing it, or is writing it still): that line is left out",
			"benchserve: warning: shard 1/2 did not finish (records-1.jsonl has no end line: the shard still runs, or was killed): its 3 records so far are merged",
			"benchserve: error: the run is incomplete: shard 1/2 unfinished (records-1.jsonl); the merged figures cover 8 of 10 planned requests",
		}, false, []any{"1/2"}, []any{"finished", "unfinished"}, 8}},
		{"--expect names the missing last shard", func(dir string) {
			for i := range 3 {
				shardRec(t, dir, i, 4, 5, "finished", false)
			}
		}, []string{"--expect", "4"}, want{1, []string{
			"benchserve: warning: shard 3/4 is missing: none of the record files given is its",
			"benchserve: error: the run is incomplete: shard 3/4 missing (no record file); the merged figures cover 15 of 20 planned requests",
		}, false, []any{"3/4"}, []any{"finished", "finished", "finished", "missing"}, 15}},
		{"no request succeeded", func(dir string) {
			for i := range 2 {
				shardRec(t, dir, i, 2, 5, "finished", true)
			}
		}, nil, want{exit.AllFailed, []string{
			"benchserve: error: all 10 merged requests failed; first error: 500 Internal Server Error",
		}, true, []any{}, []any{"finished", "finished"}, 10}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.write(dir)
			out := filepath.Join(dir, "merged.jsonl")
			code, stdout, errb := run(t, nil, append([]string{"merge", filepath.Join(dir, "records-*.jsonl"), "--output-file", out}, c.args...)...)
			var lines []string
			if errb != "" {
				lines = strings.Split(strings.TrimSuffix(strings.ReplaceAll(errb, dir, "DIR"), "\n"), "\n")
			}
			if code != c.want.code || !reflect.DeepEqual(lines, c.want.stderr) {
				t.Errorf("exit %d, stderr:\n%s\nwant %d:\n%s", code, errb, c.want.code, strings.Join(c.want.stderr, "\n"))
			}
			if !strings.Contains(stdout, "Serving Benchmark Result") || !strings.Contains(stdout, "Merged requests:") {
				t.Errorf("no block or Shards section:\n%s", stdout)
			}
			line := mergedLine(t, out)
			var statuses []any
			for _, s := range line["shards"].([]any) {
				statuses = append(statuses, s.(map[string]any)["status"])
			}
			if line["complete"] != c.want.complete || !reflect.DeepEqual(line["incomplete_shards"], c.want.incomplete) ||
				!reflect.DeepEqual(statuses, c.want.statuses) || num(t, line, "merged_records") != c.want.merged || num(t, line, "planned_requests") != 5*float64(len(statuses)) {
				t.Errorf("line: complete %v, incomplete %v, statuses %v, merged %v of %v", line["complete"], line["incomplete_shards"], statuses, line["merged_records"], line["planned_requests"])
			}
			for i, s := range statuses {
				if row := "Shard " + strconv.Itoa(i) + "/" + strconv.Itoa(len(statuses)) + ":"; !strings.Contains(stdout, row) || !strings.Contains(stdout, s.(string)) {
					t.Errorf("section lacks %s %s:\n%s", row, s, stdout)
				}
			}
		})
	}
}

// Real shard runs against the simulator, one of a 3-shard plan left out:
// its header carries the plan's request count, each finished shard is
// "finished", and the one not run is named missing when --expect says 3.
func TestMergeRealShards(t *testing.T) {
	_, base := newSim(t, steadySim(time.Millisecond, time.Millisecond))
	dir := t.TempDir()
	for i := range 2 {
		rec := filepath.Join(dir, "records-"+strconv.Itoa(i)+".jsonl")
		if code, out, errb := run(t, nil, "--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids", "--random-input-len", "16",
			"--random-output-len", "4", "--num-prompts", "9", "--request-rate", "inf", "--warmup-requests", "0", "--no-server-metrics", "--disable-tqdm",
			"--shard", strconv.Itoa(i)+"/3", "--record-file", rec, "--output-file", filepath.Join(dir, "r"+strconv.Itoa(i)+".jsonl")); code != 0 {
			t.Fatalf("shard %d: exit %d\n%s\n%s", i, code, out, errb)
		}
	}
	out := filepath.Join(dir, "merged.jsonl")
	code, _, errb := run(t, nil, "merge", filepath.Join(dir, "records-*.jsonl"), "--expect", "3", "--output-file", out)
	want := "benchserve: warning: shard 2/3 is missing: none of the record files given is its\n" +
		"benchserve: error: the run is incomplete: shard 2/3 missing (no record file); the merged figures cover 6 of 9 planned requests\n"
	// A shard that ran late on a loaded machine is warned about too: that
	// line depends on the machine, not on the merge.
	var kept []string
	for _, l := range strings.SplitAfter(errb, "\n") {
		if !strings.Contains(l, "fell behind its plan") {
			kept = append(kept, l)
		}
	}
	if got := strings.Join(kept, ""); code != exit.Failure || got != want {
		t.Errorf("exit %d, stderr:\n%s\nwant 1:\n%s", code, errb, want)
	}
	line := mergedLine(t, out)
	if line["complete"] != false || num(t, line, "completed") != 6 || num(t, line, "planned_requests") != 9 {
		t.Errorf("line: complete %v, completed %v of %v", line["complete"], line["completed"], line["planned_requests"])
	}
}

// Files that are not one plan's shards are refused before anything is
// printed: the error names them.
func TestMergeShardCountMismatch(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	a, _ := shardRec(t, dir, 0, 4, 2, "finished", false)
	b, _ := shardRec(t, other, 1, 3, 2, "finished", false)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{a, b}, "benchserve: error: the files are not one plan's shards: " + b + " of 3; " + a + " of 4\n"},
		{[]string{a, "--expect", "3"}, "benchserve: error: --expect 3, but " + a + " is a shard of 4\n"},
	} {
		code, out, errb := run(t, nil, append(append([]string{"merge"}, c.args...), "--output-file", filepath.Join(dir, "m.jsonl"))...)
		if code != exit.Failure || out != "" || errb != c.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 1 and %q", c.args, code, out, errb, c.want)
		}
	}
	if code, _, errb := run(t, nil, "merge", a, "--wait", "5"); code != exit.Usage || errb != "benchserve: error: --wait: give --expect N too, the number of shards to wait for\n" {
		t.Errorf("--wait alone: exit %d %q", code, errb)
	}
}

// merge --expect N --wait S waits on a fake clock (synctest) for the
// shards' end lines, with a status line when what it waits for changes
// and once a minute otherwise; at the deadline it merges what is there
// and names the shard that never finished (exit 1). When the last end
// line comes, it merges at once (exit 0).
func TestMergeWaits(t *testing.T) {
	t.Run("deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			dir := t.TempDir()
			shardRec(t, dir, 0, 4, 5, "finished", false)
			shardRec(t, dir, 1, 4, 5, "finished", false)
			_, w3 := shardRec(t, dir, 3, 4, 3, "unfinished", false)
			flushShard(t, w3)
			go func() {
				time.Sleep(30500 * time.Millisecond)
				shardRec(t, dir, 2, 4, 5, "finished", false)
			}()
			var out, errb bytes.Buffer
			start := time.Now()
			code := Main(context.Background(), []string{"merge", filepath.Join(dir, "records-*.jsonl"), "--expect", "4", "--wait", "600",
				"--output-file", filepath.Join(dir, "merged.jsonl")}, IO{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
			if took := time.Since(start); took != 600*time.Second {
				t.Errorf("merged after %v, want the 600 s wait", took)
			}
			want := []string{
				"benchserve merge: waiting for 2 of 4 shards: 2/4 (no record file), 3/4 (running, 3 records) [0 s of 600 s]",
				"benchserve merge: waiting for 1 of 4 shards: 3/4 (running, 3 records) [31 s of 600 s]",
			}
			for s := 91; s < 600; s += 60 {
				want = append(want, "benchserve merge: waiting for 1 of 4 shards: 3/4 (running, 3 records) ["+strconv.Itoa(s)+" s of 600 s]")
			}
			want = append(want, "benchserve merge: waiting for 1 of 4 shards: 3/4 (running, 3 records) [600 s of 600 s]",
				"benchserve: warning: shard 3/4 did not finish (records-3.jsonl has no end line: the shard still runs, or was killed): its 3 records so far are merged",
				"benchserve: error: the run is incomplete: shard 3/4 unfinished (records-3.jsonl); the merged figures cover 18 of 20 planned requests")
			if got := strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n"); code != exit.Failure || !reflect.DeepEqual(got, want) {
				t.Errorf("exit %d, stderr:\n%s\nwant 1:\n%s", code, errb.String(), strings.Join(want, "\n"))
			}
			if line := mergedLine(t, filepath.Join(dir, "merged.jsonl")); line["complete"] != false || !reflect.DeepEqual(line["incomplete_shards"], []any{"3/4"}) {
				t.Errorf("line: %v %v", line["complete"], line["incomplete_shards"])
			}
		})
	})
	// A shard with no record file two minutes after the common start can
	// no longer join (its pod never ran): the wait ends there, not at the
	// deadline, and the shard is named missing.
	t.Run("cannot join", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			dir := t.TempDir()
			start := time.Now()
			shardRecAt(t, dir, 0, 2, 5, "finished", false, float64(start.Add(10*time.Second).Unix()))
			var out, errb bytes.Buffer
			code := Main(context.Background(), []string{"merge", filepath.Join(dir, "records-*.jsonl"), "--expect", "2", "--wait", "86400",
				"--output-file", filepath.Join(dir, "merged.jsonl")}, IO{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
			if took := time.Since(start); took != 131*time.Second {
				t.Errorf("merged after %v, want 131 s (the first poll past the common start + 2 min)", took)
			}
			want := "benchserve merge: waiting for 1 of 2 shards: 1/2 (no record file) [0 s of 86400 s]\n" +
				"benchserve merge: waiting for 1 of 2 shards: 1/2 (no record file) [60 s of 86400 s]\n" +
				"benchserve merge: waiting for 1 of 2 shards: 1/2 (no record file) [120 s of 86400 s]\n" +
				"benchserve merge: not waiting for 1/2 (no record file): no record file 2m0s after the common start, so they can no longer join [131 s]\n" +
				"benchserve: warning: shard 1/2 is missing: none of the record files given is its\n" +
				"benchserve: error: the run is incomplete: shard 1/2 missing (no record file); the merged figures cover 5 of 10 planned requests\n"
			if code != exit.Failure || errb.String() != want {
				t.Errorf("exit %d, stderr:\n%s\nwant 1:\n%s", code, errb.String(), want)
			}
		})
	})
	// SIGINT or SIGTERM (the merge Job deleted) ends the wait: what is
	// there is merged and written, and the exit code is 130.
	t.Run("interrupted", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			dir := t.TempDir()
			shardRec(t, dir, 0, 2, 5, "finished", false)
			sig := make(chan os.Signal, 1)
			go func() {
				time.Sleep(5500 * time.Millisecond)
				sig <- syscall.SIGTERM
			}()
			var out, errb bytes.Buffer
			start := time.Now()
			code := Main(context.Background(), []string{"merge", filepath.Join(dir, "records-*.jsonl"), "--expect", "2", "--wait", "86400",
				"--output-file", filepath.Join(dir, "merged.jsonl")}, IO{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Signals: sig})
			if took := time.Since(start); took != 5500*time.Millisecond {
				t.Errorf("merged after %v, want 5.5 s (at the signal)", took)
			}
			if code != exit.Interrupted || !strings.Contains(errb.String(), "benchserve merge: interrupted while waiting for 1/2 (no record file): merging what is there\n") {
				t.Errorf("exit %d, stderr:\n%s\nwant 130 and the interrupt named", code, errb.String())
			}
			if line := mergedLine(t, filepath.Join(dir, "merged.jsonl")); line["complete"] != false || num(t, line, "merged_records") != 5 {
				t.Errorf("line: %v %v", line["complete"], line["merged_records"])
			}
		})
	})
	// With --start-at, files an earlier run left in the directory are not
	// this run's: merge waits for the shards to write theirs and leaves the
	// old ones out.
	t.Run("earlier run's files", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			dir := t.TempDir()
			shardRecAt(t, dir, 0, 2, 5, "finished", false, 1_700_000_000)
			shardRecAt(t, dir, 1, 2, 5, "finished", false, 1_700_000_000)
			now := float64(time.Now().Add(3 * time.Second).Unix())
			go func() {
				time.Sleep(5500 * time.Millisecond)
				shardRecAt(t, dir, 0, 2, 2, "finished", false, now)
				shardRecAt(t, dir, 1, 2, 3, "finished", false, now)
			}()
			var out, errb bytes.Buffer
			start := time.Now()
			code := Main(context.Background(), []string{"merge", filepath.Join(dir, "records-*.jsonl"), "--expect", "2", "--wait", "600",
				"--start-at", strconv.FormatFloat(now, 'f', -1, 64), "--output-file", filepath.Join(dir, "merged.jsonl")},
				IO{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
			if took := time.Since(start); took != 6*time.Second {
				t.Errorf("merged after %v, want 6 s (the poll after the new files)", took)
			}
			if code != 0 || !strings.HasPrefix(errb.String(), "benchserve merge: waiting for 2 of 2 shards: 0/2 (no record file), 1/2 (no record file) [0 s of 600 s]\n") {
				t.Errorf("exit %d, stderr:\n%s\nwant 0, the old files not counted", code, errb.String())
			}
			if line := mergedLine(t, filepath.Join(dir, "merged.jsonl")); line["complete"] != true || num(t, line, "merged_records") != 5 {
				t.Errorf("line: %v %v, want this run's 5 records", line["complete"], line["merged_records"])
			}
		})
	})
	t.Run("all finish", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			dir := t.TempDir()
			_, w0 := shardRec(t, dir, 0, 2, 1, "unfinished", false)
			go func() {
				time.Sleep(45500 * time.Millisecond)
				shardRec(t, dir, 1, 2, 5, "finished", false)
				time.Sleep(20 * time.Second)
				finishShard(t, w0, 1)
			}()
			var out, errb bytes.Buffer
			start := time.Now()
			code := Main(context.Background(), []string{"merge", filepath.Join(dir, "records-*.jsonl"), "--expect", "2", "--wait", "86400",
				"--output-file", filepath.Join(dir, "merged.jsonl")}, IO{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
			if took := time.Since(start); took != 66*time.Second {
				t.Errorf("merged after %v, want 66 s (the poll after the last end line)", took)
			}
			want := "benchserve merge: waiting for 2 of 2 shards: 0/2 (running, 0 records), 1/2 (no record file) [0 s of 86400 s]\n" +
				"benchserve merge: waiting for 1 of 2 shards: 0/2 (running, 0 records) [46 s of 86400 s]\n"
			if code != 0 || errb.String() != want {
				t.Errorf("exit %d, stderr:\n%s\nwant 0:\n%s", code, errb.String(), want)
			}
			if line := mergedLine(t, filepath.Join(dir, "merged.jsonl")); line["complete"] != true || num(t, line, "merged_records") != 6 {
				t.Errorf("line: %v %v", line["complete"], line["merged_records"])
			}
		})
	})
}

// mergedLine is the merged result line: Python's NaN, which a shard
// with no rate or lag gets, read as null.
func mergedLine(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fixed := filepath.Join(t.TempDir(), "line.jsonl")
	if err := os.WriteFile(fixed, bytes.ReplaceAll(data, []byte(": NaN"), []byte(": null")), 0o644); err != nil {
		t.Fatal(err)
	}
	return readLine(t, fixed)
}

// A shard whose --start-at has passed when it is ready still runs, on the
// common schedule, and says how late it was: merge reports that as its
// start offset and warns (a pod scheduled after the common start).
func TestMergeLateShardRun(t *testing.T) {
	_, base := newSim(t, steadySim(time.Millisecond, time.Millisecond))
	dir := t.TempDir()
	at := strconv.FormatFloat(float64(time.Now().Add(-2*time.Second).UnixNano())/1e9, 'f', 3, 64)
	rec := filepath.Join(dir, "records-0.jsonl")
	if code, out, errb := run(t, nil, "--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids", "--random-input-len", "16",
		"--random-output-len", "4", "--num-prompts", "3", "--request-rate", "inf", "--warmup-requests", "0", "--no-server-metrics", "--disable-tqdm",
		"--shard", "0/1", "--start-at", at, "--record-file", rec, "--output-file", filepath.Join(dir, "r.jsonl")); code != 0 {
		t.Fatalf("shard: exit %d\n%s\n%s", code, out, errb)
	}
	out := filepath.Join(dir, "merged.jsonl")
	code, _, errb := run(t, nil, "merge", rec, "--output-file", out)
	if code != 0 || !strings.Contains(errb, "shard 0/1 started +") || !strings.Contains(errb, "ready after the common start") {
		t.Errorf("exit %d, stderr:\n%s\nwant 0 and the late start named", code, errb)
	}
	shards := mergedLine(t, out)["shards"].([]any)
	if off := num(t, shards[0].(map[string]any), "start_offset_ms"); off < 2000 {
		t.Errorf("start_offset_ms %v, want >= 2000 (the shard was ready 2 s after the common start or later)", off)
	}
}
