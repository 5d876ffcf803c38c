package report

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchserve/metrics"
	"benchserve/record"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden (then check them with testdata/golden.py)")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

func TestConsoleGolden(t *testing.T) {
	cases := []struct {
		name string
		fix  func() (Run, metrics.Summary)
	}{
		{"console_completions", completionsRun},
		{"console_embedding", embeddingRun},
		{"console_cache_accept", cacheRun},
		{"console_image", imageRun},
		{"console_zero_success", zeroRun},
		{"console_failures", failuresRun},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run, s := c.fix()
			var buf bytes.Buffer
			if err := Console(&buf, run, s); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, buf.Bytes())
		})
	}
}

func TestLineGolden(t *testing.T) {
	cases := []struct {
		name string
		line func() []byte
	}{
		{"line_basic", func() []byte {
			run, s := completionsRun()
			return Line(run, s, nil)
		}},
		{"line_details", func() []byte {
			run, s := failuresRun()
			run.OutputDetails = true
			return Line(run, s, failuresRecords())
		}},
		{"line_cache", func() []byte {
			run, s := cacheRun()
			return Line(run, s, cacheRecords())
		}},
		{"line_details_cache", func() []byte {
			run, s := cacheRun()
			run.OutputDetails = true
			return Line(run, cacheNoDetails(s), cacheRecords())
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { golden(t, c.name, c.line()) })
	}
}

// The block's shape, independent of the goldens: every value line is
// 40 + 1 + at least 10 columns wide, trailing spaces kept.
func TestConsoleLineWidths(t *testing.T) {
	run, s := completionsRun()
	var buf bytes.Buffer
	if err := Console(&buf, run, s); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if lines[0] != "" || lines[1] != "============ Serving Benchmark Result ============" {
		t.Fatalf("block starts %q, %q", lines[0], lines[1])
	}
	if last := lines[len(lines)-1]; last != strings.Repeat("=", 50) {
		t.Errorf("last line %q", last)
	}
	if got, want := lines[2], "Backend:                                 sglang-oai"; got != want {
		t.Errorf("backend line %q, want %q", got, want)
	}
	if got, want := lines[5], "Successful requests:                     1000      "; got != want {
		t.Errorf("completed line %q, want %q", got, want)
	}
	for _, l := range lines[2:] {
		if len(l) == 50 && (l[0] == '-' || l[0] == '=') {
			continue
		}
		if len(l) < 51 || l[40] != ' ' {
			t.Errorf("line %q is not in the L/F layout", l)
		}
	}
}

func TestConsoleFailedLine(t *testing.T) {
	run, s := failuresRun()
	var buf bytes.Buffer
	if err := Console(&buf, run, s); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	want := strings.Repeat("=", 50) + "\nFailed requests:                         1         \n"
	if !strings.HasSuffix(out, want) {
		t.Errorf("block does not end with the failed line:\n%s", out)
	}
	s.Failed = 0
	buf.Reset()
	if err := Console(&buf, run, s); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "Failed requests:") {
		t.Error("failed line printed with no failure")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestConsoleWriteError(t *testing.T) {
	run, s := embeddingRun()
	if err := Console(failingWriter{}, run, s); err == nil {
		t.Error("no error from a failing writer")
	}
}

func TestLineExtraGoesLast(t *testing.T) {
	run, s := failuresRun()
	run.OutputDetails = true
	plain := Line(run, s, failuresRecords())
	run.Extra = extra()
	got := Line(run, s, failuresRecords())
	want := string(plain[:len(plain)-2]) + `, "schedule_p99_ms": 12.5}` + "\n"
	if string(got) != want {
		t.Errorf("with Extra:\n%s\nwant\n%s", got, want)
	}
}

func TestLineWithoutCacheSummary(t *testing.T) {
	run, s := zeroRun()
	got := string(Line(run, s, nil))
	want := `"cache_report": {"total_prompt_tokens": 0, "total_cached_tokens": 0, "cache_hit_rate_pct": 0.0, ` +
		`"device_cached_tokens": null, "host_cached_tokens": null, "storage_cached_tokens": null, "storage_backend": null}}` + "\n"
	if !strings.HasSuffix(got, want) {
		t.Errorf("line ends\n%s\nwant suffix\n%s", got, want)
	}
}

func TestLineDetailsLengths(t *testing.T) {
	run, s := failuresRun()
	run.OutputDetails = true
	got := string(Line(run, s, nil))
	want := `"input_lens": [], "output_lens": [12, 0, 1, 300], "ttfts": [], "itls": [], "generated_texts": [], "errors": []}` + "\n"
	if !strings.HasSuffix(got, want) {
		t.Errorf("line ends\n%s\nwant suffix\n%s", got, want)
	}
}

// Expected values are CPython 3.11's round(x, 2).
func TestRound(t *testing.T) {
	cases := []struct{ in, want float64 }{
		{float64(2469) / float64(20000) * 100, 12.35}, // 12.345000000000000639...
		{2.675, 2.67}, // 2.67499999999999982236431605997495353221893310546875
		{0.125, 0.12}, // exact tie: to even
		{0.375, 0.38}, // exact tie: to even
		{float64(7) / 400 * 100, 1.75},
		{100.0 / 3, 33.33},
		{99.995, 100.0}, // 99.99500000000000454...
		{1.005, 1.0},    // 1.00499999999999989...
		{0, 0},
		{1e17 + 0.5, 1e17},
	}
	for _, c := range cases {
		if got := round(c.in, 2); got != c.want {
			t.Errorf("round(%v, 2) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestFileName(t *testing.T) {
	now := time.Date(2026, 3, 7, 23, 30, 0, 0, time.Local)
	cases := []struct {
		run  NameParams
		want string
	}{
		// The dataset's part is dataset.FileTag's (its cases are in
		// dataset's TestFileTag).
		{NameParams{Backend: "sglang", Dataset: "128_64_2imgs_720p", NumPrompts: 100},
			"sglang_0307_100_128_64_2imgs_720p.jsonl"},
		{NameParams{Backend: "vllm", Dataset: "1024_512", NumPrompts: 3000},
			"vllm_0307_3000_1024_512.jsonl"},
		{NameParams{Backend: "sglang-oai-chat", Dataset: "generated-shared-prefix", NumPrompts: 1000},
			"sglang-oai-chat_0307_1000_generated-shared-prefix.jsonl"},
		{NameParams{Backend: "sglang", Dataset: "mmmu", NumPrompts: 0},
			"sglang_0307_0_mmmu.jsonl"},
	}
	for _, c := range cases {
		if got := FileName(c.run, now); got != c.want {
			t.Errorf("FileName(%s) = %q, want %q", c.run.Dataset, got, c.want)
		}
	}
}

func TestAppendKeepsLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	if err := CheckWritable(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("CheckWritable left a new file behind: %v", err)
	}
	if err := Append(path, []byte("{\"a\": 1}\n")); err != nil {
		t.Fatal(err)
	}
	if err := CheckWritable(path); err != nil {
		t.Fatal(err)
	}
	if err := Append(path, []byte("{\"a\": 2}\n")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"a\": 1}\n{\"a\": 2}\n"; string(got) != want {
		t.Errorf("file holds %q, want %q", got, want)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm() &^ 0o022; perm != 0o644&^0o022 {
		t.Errorf("mode %v", info.Mode())
	}
}

func TestCheckWritableErrors(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{dir, filepath.Join(dir, "missing", "out.jsonl")} {
		err := CheckWritable(path)
		if err == nil {
			t.Errorf("CheckWritable(%s): no error", path)
			continue
		}
		if !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
			t.Errorf("CheckWritable(%s): error %q does not name the path on one line", path, err)
		}
		if err := Append(path, []byte("x\n")); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("Append(%s): error %v", path, err)
		}
	}
}

// BenchmarkLineDetails writes a details line for 1000 requests of 256
// tokens each.
func BenchmarkLineDetails(b *testing.B) {
	run, s := failuresRun()
	run.OutputDetails = true
	recs := make([]record.Record, 1000)
	var itl record.Gaps
	for i := range 255 {
		itl.Append(12345678*time.Nanosecond + time.Duration(i)*time.Microsecond)
	}
	for i := range recs {
		recs[i] = record.Record{PromptLen: 1000, Success: true, TTFT: 0.123456, Gaps: itl, Text: strings.Repeat("token ", 256)}
	}
	s.OutputLens = make([]int, len(recs))
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n = len(Line(run, s, recs))
	}
	b.SetBytes(int64(n))
}
