package sim

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// decodeLogInterval is SGLang's default decode_log_interval: its scheduler
// logs, and sets last_gen_throughput, every 40 decode steps.
const decodeLogInterval = 40

// decodeLog keeps /server_info's last_gen_throughput as SGLang's scheduler
// does: at every 40th decode step, the tokens generated since the previous
// log over the time since it (idle time included, as there), and 0 before
// the first. In lockstep a step is one request's self-driven step, timed
// on the wall clock; otherwise one engine step, timed on the model clock.
type decodeLog struct {
	tokens *atomic.Uint64 // the engine's count of generated tokens
	steps  atomic.Uint64
	rate   atomic.Uint64 // float64 bits, tokens/s

	mu         sync.Mutex
	tic        time.Time
	prevTokens uint64
}

func newDecodeLog(tokens *atomic.Uint64, start time.Time) *decodeLog {
	return &decodeLog{tokens: tokens, tic: start}
}

// step counts a decode step; true when it is a log step, which the caller
// then ends with log.
func (d *decodeLog) step() bool { return d.steps.Add(1)%decodeLogInterval == 0 }

// log sets the rate at t, the end of a log step.
func (d *decodeLog) log(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	gap := t.Sub(d.tic)
	if gap <= 0 { // lockstep writers racing: leave it to the next log
		return
	}
	tok := d.tokens.Load()
	d.rate.Store(math.Float64bits(float64(tok-d.prevTokens) / gap.Seconds()))
	d.tic, d.prevTokens = t, tok
}

// throughput is the rate of the last log, tokens/s.
func (d *decodeLog) throughput() float64 { return math.Float64frombits(d.rate.Load()) }
