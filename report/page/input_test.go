package page

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A record file is read into its runs by the run start each line
// carries: a file from before lines carried it is one run, a shard's
// header and end line are no requests, and a sweep's file (or one reused)
// gives each run its section, labelled from its result line; compare's
// reader refuses a file of several.
func TestReadRecordRuns(t *testing.T) {
	rec := func(seq int, run float64) string {
		l := fmt.Sprintf(`{"seq": %d, "id": "x", "intended": 0.1, "start": 0.1, "success": true, "latency": 1.0, "ttft": 0.1, "itl": [0.01], "prompt_len": 4, "output_len": 2, "error": "", "error_kind": ""`, seq)
		if run > 0 {
			l += fmt.Sprintf(`, "benchmark_start_unix": %v`, run)
		}
		return l + "}"
	}
	lines := []Line{
		{Num: map[string]float64{"benchmark_start_unix": 1700000010.5, "request_rate": 10, "max_concurrency": 8}},
		{Num: map[string]float64{"benchmark_start_unix": 1700000020.25, "request_rate": math.Inf(1)}, Str: map[string]string{"tag": "b"}},
	}
	cases := []struct {
		name  string
		lines []string
		runs  []string // each run's Run label
		sizes []int
	}{
		{"before the run start", []string{rec(0, 0), rec(1, 0)}, []string{""}, []int{2}},
		{"one run", []string{rec(1, 1700000010.5), rec(0, 1700000010.5)}, []string{""}, []int{2}},
		{"shard", []string{`{"shard": "1/4", "seed": 1}`, rec(0, 5), `{"shard_end": true, "benchmark_start_unix": 5.0, "duration": 2.0, "records": 1, "interrupted": false}`}, []string{""}, []int{1}},
		{"sweep", []string{rec(0, 1700000010.5), rec(1, 1700000010.5), rec(1, 1700000020.25), rec(0, 1700000020.25), rec(0, 1700000030)},
			[]string{"run 1 of 3 (request rate 10, max concurrency 8)", "run 2 of 3 (request rate inf, tag b)", "run 3 of 3"}, []int{2, 2, 1}},
		{"appended to an old file", []string{rec(0, 0), rec(0, 1700000010.5), rec(1, 1700000010.5)},
			[]string{"run 1 of 2", "run 2 of 2 (request rate 10, max concurrency 8)"}, []int{1, 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "r.jsonl")
			if err := os.WriteFile(path, []byte(strings.Join(c.lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			runs, err := ReadRecordRuns(path)
			if err != nil {
				t.Fatal(err)
			}
			Label(runs, lines)
			var labels []string
			var sizes []int
			for _, r := range runs {
				if r.Name != path {
					t.Errorf("name %q", r.Name)
				}
				labels, sizes = append(labels, r.Run), append(sizes, len(r.Recs))
			}
			if !reflect.DeepEqual(labels, c.runs) || !reflect.DeepEqual(sizes, c.sizes) {
				t.Errorf("runs %q sizes %v, want %q %v", labels, sizes, c.runs, c.sizes)
			}
			_, err = ReadRecords(path)
			if one := len(c.runs) == 1; one != (err == nil) {
				t.Errorf("ReadRecords: %v", err)
			} else if !one && !strings.Contains(err.Error(), fmt.Sprintf("holds %d runs", len(c.runs))) {
				t.Errorf("ReadRecords: %v", err)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "h.jsonl")
	os.WriteFile(path, []byte(`{"shard": "1/2", "seed": 1}`+"\n"), 0o644)
	if _, err := ReadRecordRuns(path); err == nil || !strings.Contains(err.Error(), "no records") {
		t.Errorf("a header alone: %v", err)
	}
}
