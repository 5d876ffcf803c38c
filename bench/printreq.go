package bench

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"benchserve/backend"
	"benchserve/internal/pyfmt"
	"benchserve/record"
)

// printStart and printEnd are --print-requests: one line when a request
// starts and one when it ends, in the reference's shape (prompt and text
// elided as "..."). printStart returns the request's id.
func (r *runner) printStart(in *backend.Input) string {
	if !r.cfg.PrintRequests {
		return ""
	}
	rid := uuid4()
	lora := "None"
	if in.LoRA != "" {
		lora = pyfmt.Quote(in.LoRA)
	}
	extra := "{}"
	if in.Extra != nil && in.Extra.Len() > 0 {
		extra = string(in.Extra.Bytes())
	}
	fmt.Fprintf(r.env.Stdout, "rid=%s time=%s message=\"request start\" request_func_input=\"RequestFuncInput(prompt='...', api_url=%s, prompt_len=%d, output_len=%d, model=%s, lora_name=%s, image_data=None, extra_request_body=%s, timestamp=None, routing_key=None)\"\n",
		rid, pyfmt.Float(unixTime()), pyfmt.Quote(redact(r.client.URL())), in.PromptLen, in.OutputLen, pyfmt.Quote(in.Model), lora, extra)
	return rid
}

func (r *runner) printEnd(rid string, started float64, rec *record.Record) {
	if !r.cfg.PrintRequests {
		return
	}
	now := unixTime()
	itl := make([]string, 0, rec.Gaps.Len())
	for _, d := range rec.Gaps.All() {
		itl = append(itl, pyfmt.Float(d.Seconds()))
	}
	fmt.Fprintf(r.env.Stdout, "rid=%s time=%s time_delta=%s message=\"request end\" output=\"RequestFuncOutput(generated_text='...', success=%s, latency=%s, ttft=%s, tpot=None, itl=[%s], prompt_len=%d, error=%s, output_len=%d, start_time=%s, cached_tokens=%d)\"\n",
		rid, pyfmt.Float(now), pyfmt.Float(now-started), pyBool(rec.Success), pyfmt.Float(rec.Latency), pyfmt.Float(rec.TTFT),
		strings.Join(itl, ", "), rec.PromptLen, pyfmt.Quote(rec.Error), rec.OutputLen, pyfmt.Float(rec.Start), rec.CachedTokens)
}

// unixTime is time.time(): wall-clock seconds.
func unixTime() float64 { return float64(time.Now().UnixNano()) / 1e9 }

// uuid4 is str(uuid.uuid4()).
func uuid4() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
