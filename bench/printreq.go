package bench

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"benchserve/backend"
	"benchserve/internal/py/pyfmt"
	"benchserve/record"
	"benchserve/serverctl"
)

// printStart and printEnd are --print-requests: one line when a request
// starts and one when it ends, in the reference's shape (prompt and text
// elided as "..."), with the request's id (in.ID, which it is sent with).
func (r *runner) printStart(in *backend.Input, url string) {
	if !r.Config.PrintRequests {
		return
	}
	rid := in.ID
	lora := "None"
	if in.LoRA != "" {
		lora = pyfmt.Quote(in.LoRA)
	}
	extra := "{}"
	if in.Extra != nil && in.Extra.Len() > 0 {
		extra = string(in.Extra.Bytes())
	}
	fmt.Fprintf(r.Env.Stdout, "rid=%s time=%s message=\"request start\" request_func_input=\"RequestFuncInput(prompt='...', api_url=%s, prompt_len=%d, output_len=%d, model=%s, lora_name=%s, image_data=None, extra_request_body=%s, timestamp=None, routing_key=None)\"\n",
		rid, pyfmt.Float(unixTime()), pyfmt.Quote(serverctl.Redact(url)), in.PromptLen, in.OutputLen, pyfmt.Quote(in.Model), lora, extra)
}

func (r *runner) printEnd(rid string, started float64, rec *record.Record) {
	if !r.Config.PrintRequests {
		return
	}
	now := unixTime()
	itl := make([]string, 0, rec.Gaps.Len())
	for _, d := range rec.Gaps.All() {
		itl = append(itl, pyfmt.Float(d.Seconds()))
	}
	fmt.Fprintf(r.Env.Stdout, "rid=%s time=%s time_delta=%s message=\"request end\" output=\"RequestFuncOutput(generated_text='...', success=%s, latency=%s, ttft=%s, tpot=None, itl=[%s], prompt_len=%d, error=%s, output_len=%d, start_time=%s, cached_tokens=%d)\"\n",
		rid, pyfmt.Float(now), pyfmt.Float(now-started), pyBool(rec.Success), pyfmt.Float(rec.Latency), pyfmt.Float(rec.TTFT),
		strings.Join(itl, ", "), rec.PromptLen, pyfmt.Quote(rec.Error), rec.OutputLen, pyfmt.Float(rec.Start), rec.CachedTokens)
}

// unixTime is time.time(): wall-clock seconds.
func unixTime() float64 { return float64(time.Now().UnixNano()) / 1e9 }

// requestID is a fresh id in the shape of str(uuid.uuid4()), which the
// reference prints as rid: unique, not secret, so drawn from the fast
// per-thread generator rather than from the system's.
func requestID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var h [36]byte
	hex.Encode(h[:8], b[:4])
	h[8] = '-'
	hex.Encode(h[9:13], b[4:6])
	h[13] = '-'
	hex.Encode(h[14:18], b[6:8])
	h[18] = '-'
	hex.Encode(h[19:23], b[8:10])
	h[23] = '-'
	hex.Encode(h[24:], b[10:])
	return string(h[:])
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}
