package backend

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The batched bodies as the reference's requests.post(json=payload) sends
// them: json.dumps of the payload dict, keys in its order.
func TestBatchBodies(t *testing.T) {
	ids := [][]int{{1, 2}, {3, 4}}
	base := `{"sampling_params": {"temperature": 0.0, "max_new_tokens": 16, "ignore_eos": true, "json_schema": null, "stream_interval": 1}, "return_logprob": false, "stream": true, "input_ids": [[1, 2], [3, 4]]`
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"sglang", GenerateBatchBody(&Batch{IDs: ids, OutputLen: 16, IgnoreEOS: true, StreamInterval: 1}), base + `}`},
		{"sglang fake prefill", GenerateBatchBody(&Batch{IDs: ids, OutputLen: 16, IgnoreEOS: true, StreamInterval: 1, FakePrefill: true}),
			base + `, "bootstrap_host": "2.2.2.2", "bootstrap_room": 0, "skip_cache_insert": true}`},
		{"sglang everything", GenerateBatchBody(&Batch{IDs: [][]int{{7}}, OutputLen: 256, Temperature: 0.5, ReturnLogprob: true,
			StreamInterval: 4, ParallelBatch: true, FakePrefill: true, LoRA: []string{"a", "b"}, Images: [][]string{{"data:x"}}}),
			`{"sampling_params": {"temperature": 0.5, "max_new_tokens": 256, "ignore_eos": false, "json_schema": null, "stream_interval": 4}, ` +
				`"return_logprob": true, "stream": true, "parallel_batch": true, "input_ids": [[7]], "image_data": ["data:x"], ` +
				`"bootstrap_host": "2.2.2.2", "bootstrap_room": 0, "skip_cache_insert": true, "lora_path": ["a", "b"]}`},
		{"sglang one adapter", GenerateBatchBody(&Batch{IDs: [][]int{{7}}, OutputLen: 1, IgnoreEOS: true, StreamInterval: 1, LoRA: []string{"a"}}),
			`{"sampling_params": {"temperature": 0.0, "max_new_tokens": 1, "ignore_eos": true, "json_schema": null, "stream_interval": 1}, "return_logprob": false, "stream": true, "input_ids": [[7]], "lora_path": "a"}`},
		{"vllm", CompletionsBatchBody(&Batch{IDs: ids, OutputLen: 16, IgnoreEOS: true, Model: "m", FakePrefill: true}),
			`{"model": "m", "prompt": [[1, 2], [3, 4]], "max_tokens": 16, "temperature": 0.0, "stream": true, "ignore_eos": true}`},
		{"vllm logprob", CompletionsBatchBody(&Batch{IDs: ids, OutputLen: 16, IgnoreEOS: true, Model: "m", ReturnLogprob: true}),
			`{"model": "m", "prompt": [[1, 2], [3, 4]], "max_tokens": 16, "temperature": 0.0, "stream": true, "ignore_eos": true, "logprobs": 1}`},
		{"sglang cache warmup", CacheWarmupBody(false, ids, nil, "", false),
			`{"input_ids": [[1, 2], [3, 4]], "sampling_params": {"temperature": 0.0, "max_new_tokens": 1, "ignore_eos": true}, "stream": false}`},
		{"sglang cache warmup, fake prefill", CacheWarmupBody(false, ids, nil, "", true),
			`{"input_ids": [[1, 2], [3, 4]], "sampling_params": {"temperature": 0.0, "max_new_tokens": 1, "ignore_eos": true}, "stream": false, "bootstrap_host": "2.2.2.2", "bootstrap_room": 0}`},
		{"vllm cache warmup", CacheWarmupBody(true, ids, nil, "m", false),
			`{"model": "m", "prompt": [[1, 2], [3, 4]], "max_tokens": 1, "temperature": 0.0, "stream": false}`},
	}
	for _, tc := range tests {
		if string(tc.got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
	}
}

func TestParseGenerateLine(t *testing.T) {
	tests := []struct {
		line    string
		kind    LineKind
		want    GenerateChunk
		errPart string
	}{
		{line: `data: [DONE]`, kind: LineDone},
		{line: `event: ping`, kind: LineSkip},
		{line: `data: {"index": 3, "meta_info": {"completion_tokens": 7, "finish_reason": null}}`, kind: LineData,
			want: GenerateChunk{Index: 3, Tokens: 7}},
		{line: `data:{"text":"x","index":0,"meta_info":{"id":"a","completion_tokens":2,"finish_reason":{"type":"length","length":2}}}`, kind: LineData,
			want: GenerateChunk{Index: 0, Tokens: 2, Finish: "length", FinishRaw: `{"type":"length","length":2}`}},
		{line: `data: {"index": 1, "meta_info": {"completion_tokens": 1, "finish_reason": {"type": "stop", "matched": "NaN happened"}}}`, kind: LineData,
			want: GenerateChunk{Index: 1, Tokens: 1, Finish: "stop", FinishRaw: `{"type": "stop", "matched": "NaN happened"}`, NaN: true}},
		{line: `data: {"meta_info": {"completion_tokens": 1}}`, kind: LineData, errPart: `without "index"`},
		{line: `data: {"index": 0}`, kind: LineData, errPart: `without "meta_info"`},
		{line: `data: {"index": 0, "meta_info": {}}`, kind: LineData, errPart: "completion_tokens"},
		{line: `data: {"error": {"message": "out of memory"}}`, kind: LineData, errPart: "out of memory"},
		{line: `data: {nope`, kind: LineData, errPart: "not JSON"},
		{line: `data: [1]`, kind: LineData, errPart: "not a JSON object"},
		{line: `data: {"index": -1, "meta_info": {"completion_tokens": 1}}`, kind: LineData, errPart: `"index" is -1`},
	}
	for _, tc := range tests {
		got, kind, err := ParseGenerateLine([]byte(tc.line))
		if kind != tc.kind {
			t.Errorf("%s: kind %d, want %d", tc.line, kind, tc.kind)
		}
		if tc.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errPart) {
				t.Errorf("%s: error %v, want one with %q", tc.line, err, tc.errPart)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.line, got, err, tc.want)
		}
	}
}

func TestCheckFinish(t *testing.T) {
	stop := GenerateChunk{Index: 2, Finish: "stop", FinishRaw: `{"type":"stop","matched":2}`}
	tests := []struct {
		c         GenerateChunk
		ignoreEOS bool
		ok        bool
	}{
		{GenerateChunk{Finish: "length"}, true, true},
		{stop, false, true},
		{stop, true, false},
		{GenerateChunk{Finish: "stop", NaN: true}, false, false},
		{GenerateChunk{Finish: "abort", FinishRaw: `{"type":"abort"}`}, false, false},
	}
	for _, tc := range tests {
		err := CheckFinish(tc.c, tc.ignoreEOS)
		if (err == nil) != tc.ok {
			t.Errorf("CheckFinish(%+v, %v) = %v", tc.c, tc.ignoreEOS, err)
		}
	}
}

func TestParseCompletionsLine(t *testing.T) {
	var got []int
	kind, err := ParseCompletionsLine([]byte(`data: {"choices": [{"index": 2, "text": "a"}, {"index": 0, "text": "b"}]}`), func(i int) { got = append(got, i) })
	if kind != LineData || err != nil || fmt.Sprint(got) != "[2 0]" {
		t.Errorf("got %v %v %v", kind, err, got)
	}
	if kind, _ := ParseCompletionsLine([]byte("data:  [DONE] "), nil); kind != LineDone {
		t.Errorf("[DONE] with spaces: %v", kind)
	}
	if _, err := ParseCompletionsLine([]byte(`data: {"error": "bad"}`), nil); err == nil {
		t.Error("error object: no error")
	}
}

func FuzzParseGenerateLine(f *testing.F) {
	f.Add([]byte(`data: {"index": 0, "meta_info": {"completion_tokens": 1, "finish_reason": {"type": "length"}}}`))
	f.Add([]byte(`data: [DONE]`))
	f.Add([]byte(`data: {"index": 1e3, "meta_info": {"completion_tokens": 2.0}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		c, kind, err := ParseGenerateLine(line)
		if err == nil && kind == LineData && (c.Index < 0 || c.Tokens < 0) {
			t.Fatalf("negative index or count without an error: %+v", c)
		}
		_, _ = ParseCompletionsLine(line, func(i int) {
			if i < 0 {
				t.Fatalf("negative choice index %d", i)
			}
		})
	})
}

// Stream times each line, stops at the callback's word, reports a status
// error with its body, and gives up on a server that goes quiet for the
// idle limit without limiting a stream that keeps coming. Its bounds hold
// however late the machine runs either side (under qemu, say): a line is
// never timed before the server wrote it, and the first is timed before
// the last was written.
func TestStream(t *testing.T) {
	const lines, gap, idle = 12, 100 * time.Millisecond, time.Second // lines × gap > idle
	written := make(chan [lines]time.Time, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/generate":
			var wrote [lines]time.Time
			defer func() { written <- wrote }()
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range lines {
				wrote[i] = time.Now()
				fmt.Fprintf(w, "data: {\"index\": 0, \"meta_info\": {\"completion_tokens\": %d}}\n\n", i+1)
				w.(http.Flusher).Flush()
				time.Sleep(gap)
			}
			fmt.Fprint(w, "data: [DONE]\n\n")
		default:
			http.Error(w, "no such thing", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	c, err := New("sglang", srv.URL, Options{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ats []time.Time
	tm, err := c.Stream(context.Background(), []byte(`{}`), idle, func(line []byte, at time.Time) (bool, error) {
		ats = append(ats, at)
		_, kind, err := ParseGenerateLine(line)
		return kind == LineDone, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ats) != lines+1 || !tm.End.Equal(ats[lines]) || ats[0].Before(tm.Sent) {
		t.Fatalf("%d lines, end %v, last line %v, sent %v", len(ats), tm.End, ats[len(ats)-1], tm.Sent)
	}
	wrote := <-written
	for i := range lines {
		if ats[i].Before(wrote[i]) {
			t.Errorf("line %d timed %v before the server wrote it", i, wrote[i].Sub(ats[i]))
		}
	}
	if !ats[0].Before(wrote[lines-1]) {
		t.Errorf("the first line was timed %v after the last was written: lines are not timed as they come", ats[0].Sub(wrote[lines-1]))
	}

	c404, _ := New("vllm", srv.URL, Options{}, nil, nil)
	if _, err := c404.Stream(context.Background(), nil, time.Second, nil); err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "no such thing") {
		t.Errorf("404: %v", err)
	}

	quiet := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "data: {\"index\": 0, \"meta_info\": {\"completion_tokens\": 1}}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer quiet.Close()
	cq, _ := New("sglang", quiet.URL, Options{}, nil, nil)
	_, err = cq.Stream(context.Background(), nil, 50*time.Millisecond, func([]byte, time.Time) (bool, error) { return false, nil })
	if !errors.Is(err, ErrIdle) {
		t.Errorf("a quiet server: %v, want ErrIdle", err)
	}
}
