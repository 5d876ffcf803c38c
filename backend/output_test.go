package backend

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"benchserve/record"
)

// Output lengths are the server's count where it sends one, else the
// text's own tokens when the server said it stopped early, else (it hit
// the limit, or said nothing) the requested length; the record says which.
func TestOutputCountSources(t *testing.T) {
	stream := Options{Stream: true, IgnoreEOS: true, Counter: words{}}
	const req = 99
	cases := []struct {
		fixture, backend string
		n                int // -1: the text's word count
		src              record.OutputSource
	}{
		// finish_reason "stop" and no usage: the text, not the 99 asked for.
		{"llm-d-inference-sim/completions-stream", "vllm", -1, record.OutputRetokenized},
		{"llm-d-inference-sim/chat-stream", "vllm-chat", -1, record.OutputRetokenized},
		// usage in a last chunk.
		{"llm-d-inference-sim/completions-stream-usage", "vllm", 2, record.OutputServer},
		{"llm-d-inference-sim/chat-stream-usage", "sglang-oai-chat", 4, record.OutputServer},
		{"llm-d-inference-sim/completions-stream-length", "lmdeploy", 8, record.OutputServer},
		// Zeros in every chunk, the real count at the end.
		{"ollama/completions-stream-usage", "vllm", 8, record.OutputServer},
		// "length" and no usage: the limit was reached, the request is right.
		{"ollama/completions-stream", "vllm", req, record.OutputRequested},
		{"ollama/chat-stream", "vllm-chat", req, record.OutputRequested},
	}
	for _, c := range cases {
		body := fixture(t, "wire/"+c.fixture+"/response.body")
		texts := streamTexts(t, body)
		for seed := range 10 {
			rec := parse(client(t, c.backend, stream), body, seed, req, 1)
			want := c.n
			if want < 0 {
				want = words{}.Count(strings.Join(texts, ""))
			}
			if !rec.Success || rec.OutputLen != want || rec.OutputSource != c.src {
				t.Fatalf("%s: success %v, output %d from %s; want %d from %s (%s)", c.fixture, rec.Success, rec.OutputLen, rec.OutputSource, want, c.src, rec.Error)
			}
			if int(rec.Chunks) != len(texts) {
				t.Errorf("%s: %d chunks counted, %d in the stream", c.fixture, rec.Chunks, len(texts))
			}
		}
	}
	// Ollama's zero usage on every chunk and no count at the end is no
	// count: a stop reason makes it the text's.
	body := "data: {\"choices\":[{\"text\":\"a b\",\"finish_reason\":null}],\"usage\":{\"completion_tokens\":0}}\n\n" +
		"data: {\"choices\":[{\"text\":\" c\",\"finish_reason\":\"stop\"}],\"usage\":{\"completion_tokens\":0}}\n\ndata: [DONE]\n\n"
	rec := parse(client(t, "vllm", stream), []byte(body), 1, req, 1)
	if rec.OutputLen != 3 || rec.OutputSource != record.OutputRetokenized {
		t.Errorf("zero usage: %d from %s, want 3 from retokenized", rec.OutputLen, rec.OutputSource)
	}
	// Without a tokenizer the text cannot be counted: the request stands.
	rec = parse(client(t, "vllm", Options{Stream: true}), []byte(body), 1, req, 1)
	if rec.OutputLen != req || rec.OutputSource != record.OutputRequested {
		t.Errorf("no counter: %d from %s", rec.OutputLen, rec.OutputSource)
	}
	// /generate always counts; trt never does.
	native := "data: {\"text\":\"a\",\"meta_info\":{\"completion_tokens\":1}}\n\ndata: {\"text\":\"a b\",\"meta_info\":{\"completion_tokens\":2}}\n\ndata: [DONE]\n\n"
	if rec := parse(client(t, "sglang", stream), []byte(native), 1, req, 1); rec.OutputLen != 2 || rec.OutputSource != record.OutputServer || rec.Chunks != 2 {
		t.Errorf("native: %d from %s, %d chunks", rec.OutputLen, rec.OutputSource, rec.Chunks)
	}
	if rec := parse(client(t, "trt", stream), []byte("data: {\"text_output\":\"a\"}\n"), 1, req, 1); rec.OutputLen != req || rec.OutputSource != record.OutputRequested {
		t.Errorf("trt: %d from %s", rec.OutputLen, rec.OutputSource)
	}
}

// A reply that runs far past its requested length calls Runaway once.
func TestRunaway(t *testing.T) {
	var calls []string
	o := Options{Stream: true, Runaway: func(requested, got int) { calls = append(calls, fmt.Sprint(requested, got)) }}
	var b strings.Builder
	for range 200 {
		b.WriteString("data: {\"choices\":[{\"text\":\"x\"}]}\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	parse(client(t, "vllm", o), []byte(b.String()), 1, 10, 1)
	if len(calls) != 1 || calls[0] != "10 74" {
		t.Errorf("calls %q, want one at 74 chunks (twice 10, and 64 more than it)", calls)
	}
	calls = nil
	parse(client(t, "vllm", o), []byte(b.String()), 1, 150, 1)
	if len(calls) != 0 {
		t.Errorf("200 chunks for 150 requested: calls %q, want none", calls)
	}
}

// stampedReader hands out its pieces one read each, each read's bytes
// having waited ages[i] in the socket.
type stampedReader struct {
	pieces []string
	ages   []time.Duration
	i      int
	last   int64
}

func (s *stampedReader) Read(p []byte) (int, error) {
	if s.i == len(s.pieces) {
		return 0, io.EOF
	}
	n := copy(p, s.pieces[s.i])
	s.last = time.Now().Add(-s.ages[s.i]).UnixNano()
	s.i++
	return n, nil
}

func (s *stampedReader) LastArrival() int64 { return s.last }

// Chunks that come in one read are counted bunched, and late-bunched when
// the read came long after the bytes; the reads' delays are gathered.
func TestBunchedChunks(t *testing.T) {
	ev := func(s string) string { return "data: {\"choices\":[{\"text\":\"" + s + "\"}]}\n\n" }
	r := &stampedReader{
		pieces: []string{ev("a"), ev("b") + ev("c"), ev("d") + ev("e") + ev("f"), "data: [DONE]\n\n"},
		ages:   []time.Duration{0, 100 * time.Microsecond, 20 * time.Millisecond, 0},
	}
	c := client(t, "vllm", Options{Stream: true})
	rec := &record.Record{}
	c.readBody(context.Background(), r, rec, time.Now().Add(-time.Second), 6)
	if !rec.Success || rec.Chunks != 6 || rec.Bunched != 3 || rec.LateBunched != 2 {
		t.Errorf("chunks %d bunched %d late %d (%s); want 6, 3 (c, e, f), 2 (e, f)", rec.Chunks, rec.Bunched, rec.LateBunched, rec.Error)
	}
	d := c.ReadDelays()
	// The worst is the 20 ms read, plus however late this goroutine ran
	// after it (a loaded machine, qemu): not the second since the send.
	if d.Count() != 4 || d.Max() < 20*time.Millisecond || d.Max() > 500*time.Millisecond {
		t.Errorf("%d read delays, max %v; want the 4 reads, the worst 20 ms", d.Count(), d.Max())
	}
	c.ResetTiming()
	if d := c.ReadDelays(); d.Count() != 0 {
		t.Error("ResetTiming kept delays")
	}
}
