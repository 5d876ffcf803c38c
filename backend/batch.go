package backend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"benchserve/internal/py/pyjson"
	"benchserve/wire/http1"
	"benchserve/wire/netstamp"
	"benchserve/wire/sse"
)

// This file is bench_one_batch_server's request (one-batch spec §3.3, §3.7,
// §3.8): a whole batch of prompts in one streamed POST, its body, and its
// lines timed as the main command times a stream's.

// Batch is one batched request: every prompt as token ids.
type Batch struct {
	IDs [][]int
	// Images holds one entry per prompt (mmmu), nil for none: a data URI,
	// or a list of them when a prompt has several.
	Images         [][]string
	OutputLen      int
	Temperature    float64
	IgnoreEOS      bool
	ReturnLogprob  bool
	StreamInterval int
	ParallelBatch  bool
	// FakePrefill adds the PD decode-only sentinel (§3.5).
	FakePrefill bool
	// LoRA is nil for none; one name is sent as a string, several (one per
	// prompt) as a list.
	LoRA []string
	// Model is the vLLM model name.
	Model string
}

// FakeBootstrapHost is SGLang's FAKE_BOOTSTRAP_HOST: a decode server
// started with the fake transfer backend skips the KV transfer for it.
const FakeBootstrapHost = "2.2.2.2"

func idLists(ids [][]int) []byte {
	b := []byte{'['}
	for i, l := range ids {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, pyjson.Ints(l)...)
	}
	return append(b, ']')
}

func imageData(imgs [][]string) []byte {
	b := []byte{'['}
	for i, l := range imgs {
		if i > 0 {
			b = append(b, ", "...)
		}
		if len(l) == 1 {
			b = append(b, pyjson.String(l[0])...)
		} else {
			b = append(b, pyjson.Strings(l)...)
		}
	}
	return append(b, ']')
}

// GenerateBatchBody is the streamed /generate body, key for key as
// json.dumps writes the reference's payload.
func GenerateBatchBody(r *Batch) []byte {
	sp := &pyjson.Object{}
	sp.Set("temperature", pyjson.Float(r.Temperature))
	sp.Set("max_new_tokens", pyjson.Int(r.OutputLen))
	sp.Set("ignore_eos", pyjson.Bool(r.IgnoreEOS))
	sp.Set("json_schema", pyjson.Null)
	sp.Set("stream_interval", pyjson.Int(r.StreamInterval))
	o := &pyjson.Object{}
	o.Set("sampling_params", sp.Bytes())
	o.Set("return_logprob", pyjson.Bool(r.ReturnLogprob))
	o.Set("stream", pyjson.Bool(true))
	if r.ParallelBatch {
		o.Set("parallel_batch", pyjson.Bool(true))
	}
	o.Set("input_ids", idLists(r.IDs))
	if r.Images != nil {
		o.Set("image_data", imageData(r.Images))
	}
	if r.FakePrefill {
		o.Set("bootstrap_host", pyjson.String(FakeBootstrapHost))
		o.Set("bootstrap_room", pyjson.Int(0))
		o.Set("skip_cache_insert", pyjson.Bool(true))
	}
	switch len(r.LoRA) {
	case 0:
	case 1:
		o.Set("lora_path", pyjson.String(r.LoRA[0]))
	default:
		o.Set("lora_path", pyjson.Strings(r.LoRA))
	}
	return o.Bytes()
}

// CompletionsBatchBody is the streamed vLLM /v1/completions body.
func CompletionsBatchBody(r *Batch) []byte {
	o := &pyjson.Object{}
	o.Set("model", pyjson.String(r.Model))
	o.Set("prompt", idLists(r.IDs))
	o.Set("max_tokens", pyjson.Int(r.OutputLen))
	o.Set("temperature", pyjson.Float(r.Temperature))
	o.Set("stream", pyjson.Bool(true))
	o.Set("ignore_eos", pyjson.Bool(true))
	if r.ReturnLogprob {
		o.Set("logprobs", pyjson.Int(1))
	}
	return o.Bytes()
}

// CacheWarmupBody is the non-streamed request that puts each prompt's
// first tokens in the prefix cache (§3.7): ids are those prefixes. Unlike
// the reference, the fake-prefill sentinel goes with it, so that a decode
// server is not asked for a real KV transfer.
func CacheWarmupBody(vllm bool, ids [][]int, images [][]string, model string, fakePrefill bool) []byte {
	o := &pyjson.Object{}
	if vllm {
		o.Set("model", pyjson.String(model))
		o.Set("prompt", idLists(ids))
		o.Set("max_tokens", pyjson.Int(1))
		o.Set("temperature", pyjson.Float(0))
		o.Set("stream", pyjson.Bool(false))
		return o.Bytes()
	}
	o.Set("input_ids", idLists(ids))
	sp := &pyjson.Object{}
	sp.Set("temperature", pyjson.Float(0))
	sp.Set("max_new_tokens", pyjson.Int(1))
	sp.Set("ignore_eos", pyjson.Bool(true))
	o.Set("sampling_params", sp.Bytes())
	o.Set("stream", pyjson.Bool(false))
	if images != nil {
		o.Set("image_data", imageData(images))
	}
	if fakePrefill {
		o.Set("bootstrap_host", pyjson.String(FakeBootstrapHost))
		o.Set("bootstrap_room", pyjson.Int(0))
	}
	return o.Bytes()
}

// StreamTiming is when a streamed request went out and its reply ended.
type StreamTiming struct {
	// Sent is when its bytes were about to be written on a ready
	// connection, or before connecting when it had to connect (as Do).
	Sent time.Time
	// End is when the bytes of the reply's last line arrived.
	End time.Time
	// KernelTimed: every Read was timed with the kernel's receive time.
	KernelTimed bool
}

// ErrIdle is wrapped by Stream's error when the server sent nothing for
// the idle limit.
var ErrIdle = errors.New("no bytes from the server")

// Stream posts body to the client's URL and hands each line of the reply
// (trimmed, not empty) to onLine with when its bytes arrived; onLine's
// stop ends the reply there. idle bounds the connect, the wait for the
// header and each wait for bytes, not the whole stream (a long decode is
// no timeout). A status other than 200 is an error with its body.
func (c *Client) Stream(ctx context.Context, body []byte, idle time.Duration,
	onLine func(line []byte, at time.Time) (stop bool, err error)) (StreamTiming, error) {
	var t StreamTiming
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	idled := false
	timer := time.AfterFunc(idle, func() { mu.Lock(); idled = true; mu.Unlock(); cancel() })
	defer timer.Stop()
	wrap := func(err error) error {
		mu.Lock()
		defer mu.Unlock()
		if idled {
			return fmt.Errorf("%w for %s", ErrIdle, idle)
		}
		return err
	}

	note := &http1.SendNote{}
	req, err := http.NewRequestWithContext(http1.WithNote(ctx, note), http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return t, err
	}
	req.Header = c.header
	if c.host != "" {
		req.Host = c.host
	}
	st := time.Now()
	resp, err := c.http.Do(req)
	if !note.Start.IsZero() && !note.Dialed {
		st = note.Start
	}
	t.Sent = st
	if err != nil {
		_, msg := http1.TransportError(ctx, c.opt.Timeout, err)
		return t, wrap(errors.New(msg))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return t, errors.New(http1.StatusError(resp))
	}
	var clk http1.ReadClock
	clk.Reset(&idleReader{r: resp.Body, t: timer, d: idle}, st, nil)
	lines := sse.NewReader(&clk, 0)
	for {
		line, _, err := lines.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return t, wrap(http1.ReadError(lines.Line(), err))
		}
		stop, err := onLine(line, clk.At)
		if err != nil {
			return t, fmt.Errorf("line %d of the response: %w", lines.Line(), err)
		}
		if stop {
			break
		}
	}
	t.End, t.KernelTimed = clk.At, clk.KernelTimed()
	if t.End.IsZero() {
		t.End = time.Now()
	}
	return t, nil
}

// idleReader restarts the idle timer at every Read that returns bytes.
type idleReader struct {
	r io.Reader
	t *time.Timer
	d time.Duration
}

// LastArrival passes on the body's kernel receive times (netstamp.Stamped).
func (r *idleReader) LastArrival() int64 {
	if s, ok := r.r.(netstamp.Stamped); ok {
		return s.LastArrival()
	}
	return 0
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.t.Reset(r.d)
	}
	return n, err
}
