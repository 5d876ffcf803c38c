//go:build linux

package backend

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"benchserve/record"
)

// BenchmarkEventStream is BenchmarkStream through the event loop's path:
// the response arrives one chunk per read (the head with the first), as a
// server writes it a token a step, and each read goes through the
// decoder, the line splitter and the parser (exchange.received), then the
// record is concluded. allocs/chunk is the steady cost per streamed chunk.
func BenchmarkEventStream(b *testing.B) {
	for _, backend := range []string{"vllm", "sglang-oai-chat", "sglang"} {
		b.Run(backend, func(b *testing.B) {
			events := bytes.SplitAfter(benchStream(backend), []byte("\n\n"))
			var reads [][]byte
			head := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
			for i, ev := range events {
				if len(ev) == 0 {
					continue
				}
				r := fmt.Sprintf("%x\r\n%s\r\n", len(ev), ev)
				if i == 0 {
					r = head + r
				}
				reads = append(reads, []byte(r))
			}
			reads = append(reads, []byte("0\r\n\r\n"))
			c, _ := New(backend, "http://h", Options{Stream: true, IgnoreEOS: true}, nil, nil)
			run := func() record.Record {
				cn := getScratch()
				defer putScratch(cn)
				rec := record.Record{}
				x := &cn.x
				x.start(c, posted)
				st := time.Now()
				cn.p.reset(c, st, &rec, benchChunks)
				ended := false
				for _, r := range reads {
					ended = x.received(r, st, 0)
				}
				if !ended {
					b.Fatal("the response did not end")
				}
				c.conclude(context.Background(), cn, &rec)
				return rec
			}
			b.ReportAllocs()
			for b.Loop() {
				if rec := run(); !rec.Success || rec.Gaps.Len() != benchChunks-1 {
					b.Fatalf("%s: %+v", backend, rec.Error)
				}
			}
			allocs := testing.AllocsPerRun(20, func() { run() })
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchChunks, "ns/chunk")
			b.ReportMetric(allocs/benchChunks, "allocs/chunk")
		})
	}
}
