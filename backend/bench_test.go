package backend

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"benchserve/record"
)

const benchChunks = 256

// benchStream builds a realistic stream of benchChunks chunks for a backend,
// in the shapes vLLM and SGLang send.
func benchStream(backend string) []byte {
	words := []string{" the", " quick", " brown", " fox", " jumps", " over", " a", " lazy", " dog", ",", " caf\\u00e9", "\\n"}
	var b bytes.Buffer
	var text strings.Builder
	ids := "128000"
	for i := range benchChunks {
		w := words[i%len(words)]
		switch backend {
		case "vllm":
			fmt.Fprintf(&b, `data: {"id":"cmpl-8a1f0c2e9b7d4e3f","object":"text_completion","created":1732900000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"text":"%s","logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":null}`+"\n\n", w)
		case "sglang-oai-chat":
			fmt.Fprintf(&b, `data: {"id":"5b8c7e1d2f3a4b","object":"chat.completion.chunk","created":1732900000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"role":null,"content":"%s","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}`+"\n\n", w)
		case "sglang":
			text.WriteString(w)
			ids += fmt.Sprintf(",%d", 1000+i)
			fmt.Fprintf(&b, `data: {"text":"%s","output_ids":[%s],"meta_info":{"id":"9f2e4c1a","finish_reason":null,"prompt_tokens":128,"weight_version":"default","completion_tokens":%d,"cached_tokens":0,"e2e_latency":0.%03d}}`+"\n\n", text.String(), ids, i+1, i)
		}
	}
	if backend == "vllm" || backend == "sglang-oai-chat" {
		b.WriteString(`data: {"choices":[],"usage":{"prompt_tokens":128,"completion_tokens":256,"total_tokens":384}}` + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// BenchmarkStream reads a whole 256-chunk response through the line reader
// and parser, as Do does after the headers (pool, record, final text
// included), and reports the cost per chunk.
func BenchmarkStream(b *testing.B) {
	for _, backend := range []string{"vllm", "sglang-oai-chat", "sglang"} {
		b.Run(backend, func(b *testing.B) {
			body := benchStream(backend)
			c, _ := New(backend, "http://h", Options{Stream: true, IgnoreEOS: true}, nil, nil)
			r := bytes.NewReader(body)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			var allocs float64
			for b.Loop() {
				r.Reset(body)
				rec := record.Record{}
				c.readBody(context.Background(), r, &rec, time.Now(), benchChunks)
				if !rec.Success || rec.Gaps.Len() != benchChunks-1 {
					b.Fatalf("%s: %+v", backend, rec.Error)
				}
			}
			allocs = testing.AllocsPerRun(20, func() {
				r.Reset(body)
				rec := record.Record{}
				c.readBody(context.Background(), r, &rec, time.Now(), benchChunks)
			})
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchChunks, "ns/chunk")
			b.ReportMetric(allocs/benchChunks, "allocs/chunk")
		})
	}
}

// BenchmarkWireStream is BenchmarkStream through the state machine's
// receiving of a whole HTTP/1.1 response, as the receivers read one: the
// response arrives one chunk per read (the head with the first), as a
// server writes it a token a step, and each read goes through the decoder,
// the line splitter and the parser, then the record is completed.
// allocs/chunk is the steady cost per streamed chunk.
func BenchmarkWireStream(b *testing.B) {
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
			r := &pieces{}
			run := func() record.Record {
				r.reset(reads)
				rec := record.Record{}
				c.readResponse(context.Background(), r, &rec, time.Now(), benchChunks)
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

// pieces returns its pieces one per Read.
type pieces struct {
	p      [][]byte
	i, off int
}

func (r *pieces) reset(p [][]byte) { r.p, r.i, r.off = p, 0, 0 }

func (r *pieces) Read(b []byte) (int, error) {
	if r.i == len(r.p) {
		return 0, io.EOF
	}
	n := copy(b, r.p[r.i][r.off:])
	if r.off += n; r.off == len(r.p[r.i]) {
		r.i, r.off = r.i+1, 0
	}
	return n, nil
}

// BenchmarkChunk times the parser alone on one typical chunk (a steady
// stream: the first token is already in).
func BenchmarkChunk(b *testing.B) {
	for _, backend := range []string{"vllm", "sglang-oai-chat", "sglang"} {
		b.Run(backend, func(b *testing.B) {
			lines := bytes.Split(bytes.TrimSpace(benchStream(backend)), []byte("\n\n"))
			line := lines[100]
			c, _ := New(backend, "http://h", Options{Stream: true}, nil, nil)
			var p parser
			rec := record.Record{}
			st := time.Now()
			p.reset(c, st, &rec, 1<<20)
			p.line(lines[99], st)
			b.ReportAllocs()
			for b.Loop() {
				if p.proto == protoNative {
					p.lastOutputLen-- // one new token each time
				}
				if err := p.line(line, st); err != nil {
					b.Fatal(err)
				}
				if p.itl.Len() > 1<<16 {
					p.itl.Reset()
					p.chunkLens, p.text = p.chunkLens[:0], p.text[:0]
				}
			}
		})
	}
}

// BenchmarkBody builds a completions body for a prompt of about 1 KB of
// mixed-script text, as random-ids prompts decode to.
func BenchmarkBody(b *testing.B) {
	c, _ := New("vllm", "http://h", Options{Stream: true, IgnoreEOS: true}, nil, nil)
	text := strings.Repeat(" the quick brown fox, café 世界 naïve ", 24)
	in := &Input{Text: text, OutputLen: 96, Model: "meta-llama/Llama-3.1-8B-Instruct"}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		c.Body(in)
	}
}
