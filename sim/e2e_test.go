package sim

import (
	"context"
	"net/http"
	"testing"
	"time"

	"benchserve/backend"
	"benchserve/record"
)

// TestClientAgainstTruth runs benchserve's own request functions against
// the simulator for every backend and checks each measurement against what
// the simulator recorded. Client and server share one process and one
// monotonic clock (the client's epoch is the server's start), so causality
// gives exact bounds that no machine noise can break: the request is sent
// before it arrives, and each chunk is written before it is read. The
// differences, the client's measurement error, are logged as figures.
func TestClientAgainstTruth(t *testing.T) {
	s, url := newTestServer(t, func(c *Config) {
		c.PrefillOverhead, c.DecodeBase, c.DecodePerRequest = 3*time.Millisecond, 2*time.Millisecond, 0
		c.PrefillTokensPerSec = 100_000
	})
	const n, out = 5, 24
	for _, name := range []string{"sglang", "sglang-oai", "sglang-oai-chat", "vllm", "trt", "truss", "sglang-embedding"} {
		t.Run(name, func(t *testing.T) {
			if got := post(t, url+"/sim/truth/reset", ""); got.status != http.StatusOK {
				t.Fatal(got.status)
			}
			c, err := backend.New(name, url, backend.Options{Stream: true, IgnoreEOS: true}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			recs := make([]*record.Record, n)
			for i := range recs {
				recs[i] = &record.Record{}
				in := &backend.Input{Text: "Tell me a story about a cat", PromptLen: 7, OutputLen: out, Model: DefaultModel}
				c.Do(context.Background(), in, recs[i], s.start)
				if !recs[i].Success {
					t.Fatalf("request %d: %s", i, recs[i].Error)
				}
			}
			doc := decode[truthDoc](t, do(t, http.MethodGet, url+"/sim/truth", "").body)
			if len(doc.Requests) != n {
				t.Fatalf("%d requests in the truth, want %d", len(doc.Requests), n)
			}
			var ttftErr, itlErr float64
			itls := 0
			for i, rec := range recs {
				tr := doc.Requests[i]
				const tick = 1e-9 // truth times are whole nanoseconds
				if rec.Start > tr.Arrival+tick {
					t.Errorf("request %d sent at %.9f, after it arrived at %.9f", i, rec.Start, tr.Arrival)
				}
				if name == "sglang-embedding" {
					continue
				}
				// A chunk cannot be read before its write began (its time
				// minus the write's duration); the last write carries the end.
				first, last := tr.Chunks[0], tr.Chunks[len(tr.Chunks)-1]
				if got := rec.Start + rec.TTFT; first[0]-first[2] > got+tick {
					t.Errorf("request %d: first chunk written from %.9f, read at %.9f", i, first[0]-first[2], got)
				}
				if last[0] != tr.End {
					t.Errorf("request %d: the stream ended at %.9f, after its last chunk at %.9f", i, tr.End, last[0])
				}
				if got := rec.Start + rec.Latency; last[0]-last[2] > got+tick {
					t.Errorf("request %d: last write from %.9f, the client's last read at %.9f", i, last[0]-last[2], got)
				}
				ttftErr += rec.TTFT - *tr.TTFT
				// The reference counts ITL per chunk, except /generate: per token,
				// leaving out the first chunk's tokens.
				want := len(tr.Chunks) - 1
				if name == "sglang" {
					want = tr.CompletionTokens - int(tr.Chunks[0][1])
				}
				if rec.Gaps.Len() != want || tr.CompletionTokens != out {
					t.Errorf("request %d: %d ITL values, want %d (%d chunks, %d tokens)", i, rec.Gaps.Len(), want, len(tr.Chunks), tr.CompletionTokens)
					continue
				}
				// Per chunk: the client's gap minus the server's.
				got := rec.Gaps.Seconds()
				k := 0
				for j := 1; j < len(tr.Chunks); j++ {
					gap := tr.Chunks[j][0] - tr.Chunks[j-1][0]
					per := int(tr.Chunks[j][1])
					if name != "sglang" {
						per = 1
					}
					for range per {
						itlErr += got[k] - gap/float64(per)
						k++
						itls++
					}
				}
			}
			if name != "sglang-embedding" {
				t.Logf("%s: mean TTFT error %+.1f µs, mean ITL error %+.2f µs over %d gaps", name, ttftErr/n*1e6, itlErr/float64(itls)*1e6, itls)
			}
		})
	}
}

// A client's X-Request-Id names the request in the reply and in the
// truth, as vLLM keeps it; one that could not stand in JSON is replaced.
func TestClientRequestID(t *testing.T) {
	_, url := newTestServer(t, nil)
	body := `{"model": "benchserve-sim", "prompt": "hi", "max_tokens": 2}`
	got := do(t, http.MethodPost, url+"/v1/completions", body, "X-Request-Id", "abc-123")
	if got.status != http.StatusOK || got.header.Get("X-Request-Id") != "abc-123" {
		t.Fatalf("status %d, X-Request-Id %q", got.status, got.header.Get("X-Request-Id"))
	}
	bad := do(t, http.MethodPost, url+"/v1/completions", body, "X-Request-Id", `a"b`)
	if id := bad.header.Get("X-Request-Id"); id == `a"b` || id == "" {
		t.Errorf("a quoted id was kept: %q", id)
	}
	doc := decode[truthDoc](t, do(t, http.MethodGet, url+"/sim/truth", "").body)
	found := false
	for _, r := range doc.Requests {
		found = found || r.ID == "abc-123"
	}
	if !found {
		t.Error("the truth has no request abc-123")
	}
}
