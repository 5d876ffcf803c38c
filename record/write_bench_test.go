package record

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkWriterParallel writes records from every processor at once, as
// requests ending together do: with -cpu 1,2 it shows whether the writer
// serializes them (the line is made outside its lock; only the copy into
// the file's buffer is inside).
func BenchmarkWriterParallel(b *testing.B) {
	w, err := Create(filepath.Join(b.TempDir(), "r.rec"))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	w.StartRun(time.Unix(1_700_000_000, 0))
	rec := Record{ID: "req-0123456789", Success: true, Latency: 1.25, TTFT: 0.125, PromptLen: 512, OutputLen: 256,
		Text: "", Intended: 3.5, Start: 1_700_000_003.5}
	for range 255 {
		rec.Gaps.Append(4 * time.Millisecond)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		r := rec
		for pb.Next() {
			w.Write(&r)
		}
	})
}
